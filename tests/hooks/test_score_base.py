"""Red team: a score's ``base``. `leap score` writes the base of the episode's throw, and
the spine judges the candidate's history from the pass's base, commit by commit, as its
ball branch would be judged (scope, rounds, frozen red tests). A pass that named another
base, the candidate itself, left that history unjudged: a candidate that weakened its
frozen red test, built in five rounds and never pushed on its branch, merged. The server
now takes a score only with its throw's base (``rules.passes.round_problems``), and the
spine judges the history from the throw's base, whatever the pass says."""

from __future__ import annotations

from leapgit.ledger import layout
from leapgit.ledger.leases import take_lease
from tests.hooks.test_server_rules import MERGE_A, blob, red_record, refused
from tests.hooks.world import SLICE, World, commit, remote_refs, round_message
from tests.support import claimed_round, git, pass_files

BALL_A = f"leap/ball/{SLICE}/a"


def _weakened(w: World) -> tuple[str, str]:
    """A red freezing tests/test_a.py, then five rounds (never pushed on the branch): the
    fifth weakens the frozen test. Returns the last round and its tree."""
    git("checkout", "-q", "-B", BALL_A, w.base, cwd=w.work)
    red = commit(w.work, {"tests/test_a.py": "def test_a():\n    assert A == 10\n"}, "red: a")
    w.append(red_record(w, "a", 1, red, {"tests/test_a.py": blob(w, red, "tests/test_a.py")}),
             "red of a")
    for n in range(1, 5):
        commit(w.work, {"src/a.py": f"A = {n}\n"}, round_message(f"a {n}", n))
    head = commit(w.work, {"tests/test_a.py": "def test_a():\n    pass\n"},
                  round_message("a: the test, weakened", 4, 1))
    git("checkout", "-q", "main", cwd=w.work)
    return head, w.tip(f"{head}^{{tree}}")


def _pass(w: World, head: str, tree: str, base: str) -> dict[str, bytes]:
    with w.ledger() as ledger:
        files = claimed_round(ledger, SLICE, "a", tree, head, w.base, episode=1, rounds=1,
                              spec_version=1)
    files.update(pass_files(SLICE, "a", tree, head, base))
    return files


def test_a_score_naming_another_base_than_its_throws_is_refused(fresh_world: World) -> None:
    w = fresh_world
    head, tree = _weakened(w)
    w.append(_pass(w, head, tree, head), "a passes, from its own candidate")
    before = remote_refs(w.bare)
    refused(w, w.push("leap/ledger"), before, "L7", layout.score_path(SLICE, "a", 1),
            f"the score names base {head[:12]}", f"thrown from {w.base[:12]}")


def test_the_spine_judges_the_history_from_the_throws_base(fresh_world: World) -> None:
    """A pass with a forged base that reached the ledger anyway (before this rule, or by
    hand on the server): the spine still judges every commit since the throw's base."""
    w = fresh_world
    head, tree = _weakened(w)
    w.append(_pass(w, head, tree, head), "a passes, from its own candidate")
    with w.ledger() as ledger:
        take_lease(ledger, "main", "integrator")
    # the ledger as it would stand had the record landed: written on the server by hand
    git("fetch", "-q", str(w.work), "leap/ledger:refs/heads/leap/ledger", cwd=w.bare)
    git("fetch", "-q", str(w.work), f"{head}:refs/heads/kept", cwd=w.bare)
    before = remote_refs(w.bare)
    merge = git("commit-tree", tree, "-p", w.base, "-p", head, "-m", MERGE_A, cwd=w.work)
    result = w.push(f"{merge}:refs/heads/main")
    refused(w, result, before, "T7.1", "a frozen test file", f"in the history of candidate "
            f"{head[:12]}")


def test_an_honest_base_is_still_judged_whole(fresh_world: World) -> None:
    w = fresh_world
    head, tree = _weakened(w)
    w.append(_pass(w, head, tree, w.base), "a passes")
    assert w.push("leap/ledger").returncode == 0
    with w.ledger() as ledger:
        take_lease(ledger, "main", "integrator")
    assert w.push("leap/ledger").returncode == 0
    before = remote_refs(w.bare)
    merge = git("commit-tree", tree, "-p", w.base, "-p", head, "-m", MERGE_A, cwd=w.work)
    refused(w, w.push(f"{merge}:refs/heads/main"), before, "T7.1", "a frozen test file")
