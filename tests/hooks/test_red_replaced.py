"""T7.1 on the server: a red replaces the red before it (`replaces`) only while nothing was
built on it, no round in any episode of the ball, and only the one just before it. Pushed
past the client (`--no-verify`) to a real bare remote with the server hook behind `git
daemon`; a refused push leaves the remote's refs as they were."""

from __future__ import annotations

from leapgit.ledger import layout
from leapgit.records import yamlio
from tests.hooks.test_server_rules import BALL_A, blob, red_record, refused
from tests.hooks.world import World, commit, remote_refs
from tests.support import git


def _red(w: World, number: int, text: str, replaces: int | None = None) -> dict[str, bytes]:
    """Red ``number`` of ball a: a commit on its base adding ``text`` as its test."""
    git("checkout", "-q", "-B", f"red-{number}", w.base, cwd=w.work)
    sha = commit(w.work, {"tests/test_a.py": text}, f"red {number}: a")
    git("checkout", "-q", "main", cwd=w.work)
    rec = red_record(w, "a", number, sha, {"tests/test_a.py": blob(w, sha, "tests/test_a.py")})
    if replaces is None:
        return rec
    path, data = next(iter(rec.items()))
    raw = yamlio.loads(data, path)
    raw["replaces"] = replaces
    return {path: yamlio.dumps(raw)}


def test_a_red_before_any_round_replaces_the_one_before_it(fresh_world: World) -> None:
    w = fresh_world
    w.append(_red(w, 1, "def test_a():\n    assert A == 10\n"))
    assert w.push("leap/ledger").returncode == 0
    # red 2 neither descends from red 1 nor keeps its test: a replacement, not a growth
    w.append(_red(w, 2, "def test_a():\n    assert A == 11\n", replaces=1))
    pushed = w.push("leap/ledger")
    assert pushed.returncode == 0, pushed.stderr


def test_a_red_replacing_one_a_round_was_built_on_is_refused(fresh_world: World) -> None:
    """The earlier episode built a round on red 1 and was refused; the current one has no
    round yet. Red 1's tests were what that round was judged by: red 2 may not replace it."""
    w = fresh_world
    w.append(_red(w, 1, "def test_a():\n    assert A == 10\n"))
    w.append(dict([w.receipt("a", 1, -1, claim=True)]), "a refused round")
    w.throw("a", episode=2)
    assert w.push("leap/ledger").returncode == 0
    before = remote_refs(w.bare)
    w.append(_red(w, 2, "def test_a():\n    assert A == 11\n", replaces=1))
    refused(w, w.push("leap/ledger"), before, "T7.1", layout.red_path("s1", "a", 2),
            "replaces red 1, but episode 1 already built rounds on it")


def test_a_red_replacing_another_than_the_one_before_it_is_refused(fresh_world: World) -> None:
    w = fresh_world
    w.append(_red(w, 1, "def test_a():\n    assert A == 10\n"))
    w.append(_red(w, 2, "def test_a():\n    assert A == 10\n"))  # the same test: it grows
    assert w.push("leap/ledger").returncode == 0
    before = remote_refs(w.bare)
    w.append(_red(w, 3, "def test_a():\n    assert A == 12\n", replaces=1))
    refused(w, w.push("leap/ledger"), before, "T7.1", "red 3 of s1/a replaces red 1: a red "
            "replaces the one just before it")
    assert BALL_A not in "".join(remote_refs(w.bare))  # nothing else moved either
