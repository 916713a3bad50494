"""Red team round 2: rollback by re-merge (L8). A merge names a ball, and the server
checked that its candidate held the standing full pass, its history, its scope and its
bytes, never that the pass had landed already: the integrator (anyone, in unsigned mode)
merged s1/a's old candidate again after s2/x changed src/a.py, and x's bytes were rolled
back on the spine; a ball of an abandoned slice (whose files are free for other slices)
merged too. A pass lands once, while its slice is open (``rules.spine._lands_once``)."""

from __future__ import annotations

import pytest

from leapgit.ledger import layout
from leapgit.ledger.leases import take_lease
from leapgit.records import yamlio
from leapgit.records.scoring import Merged, MergeRecord
from leapgit.records.types import ThrowRecord
from tests.hooks.test_server_rules import MERGE_A, refused
from tests.hooks.world import NOW, SLICE, World, commit, remote_refs, round_message
from tests.support import git, leap, write_pass

BALL_A = f"leap/ball/{SLICE}/a"
BALL_B = f"leap/ball/{SLICE}/b"
BALL_X = "leap/ball/s2/x"
MERGE_X = "integrate s2/x\n\nLeap-Slice: s2\nLeap-Ball: x"
DRAFT2 = """\
slice: s2
spine: integrator
balls:
  - id: x
    goal: a is 30
    spec: set A to 30
    scope: [src/a.py]
    proof: "true"
    tests: "true"
    rollback: restore-scope
  - id: y
    goal: c is 40
    spec: set C to 40
    scope: [src/c.py]
    proof: "true"
    tests: "true"
    rollback: restore-scope
"""


def _passed(w: World, slice_id: str, ball: str, branch: str, base: str,
            files: dict[str, str | None]) -> str:
    git("checkout", "-q", "-B", branch, base, cwd=w.work)
    commit(w.work, files, round_message(f"{ball}: build", 1, 1))
    tree = w.tip(f"{branch}^{{tree}}")
    with w.ledger() as ledger:
        write_pass(ledger, slice_id, ball, tree, w.tip(branch), base)
    git("checkout", "-q", "main", cwd=w.work)
    return tree


def _merge(w: World, branch: str, message: str) -> str:
    git("merge", "-q", "--no-ff", "-m", message, branch, cwd=w.work)
    return w.tip("main")


def _push_all(w: World, *refs: str) -> None:
    res = w.push("leap/ledger")
    assert res.returncode == 0, res.stderr
    res = w.push(*refs)
    assert res.returncode == 0, res.stderr


def _slice_two_over_a(w: World) -> str:
    """s1/a passed and merged (A = 10), s1 closed; s2/x passed and merged over it (A = 30).
    Returns a's candidate commit."""
    _passed(w, SLICE, "a", BALL_A, w.base, {"src/a.py": "A = 10\n"})
    b_tree = _passed(w, SLICE, "b", BALL_B, w.base, {"src/b.py": "B = 20\n"})
    with w.ledger() as ledger:
        lease = take_lease(ledger, "main", "integrator")
    merged_a = _merge(w, BALL_A, MERGE_A)
    merged_b = _merge(w, BALL_B, "integrate s1/b\n\nLeap-Slice: s1\nLeap-Ball: b")
    a_tree = w.tip(f"{BALL_A}^{{tree}}")
    rec = MergeRecord(SLICE, "main", lease.number, "integrator", w.base, merged_b,
                      (Merged("a", merged_a, a_tree, w.tip(BALL_A), "t-test-pass", 1),
                       Merged("b", merged_b, b_tree, w.tip(BALL_B), "t-test-pass", 1)),
                      "t-agg", w.tip("main^{tree}"), NOW)
    _push_all(w, BALL_A, BALL_B, "main")  # the spine first, then its merge record
    w.append({layout.merge_path(SLICE): yamlio.dumps(rec.to_dict())}, "s1 merged")
    (w.work / "s2.yaml").write_text(DRAFT2)
    cut = leap("slice", "cut", "s2.yaml", cwd=w.work)
    assert cut.code == 0, cut
    (w.work / "s2.yaml").unlink()
    tip = w.tip("main")
    thrown = ThrowRecord(slice="s2", ball="x", episode=1, spec_version=1, base=tip,
                         branch=BALL_X, thrown_at=NOW)
    w.append({layout.throw_path("s2", "x", 1): yamlio.dumps(thrown.to_dict())}, "throw x")
    _passed(w, "s2", "x", BALL_X, tip, {"src/a.py": "A = 30\n"})
    _merge(w, BALL_X, MERGE_X)
    _push_all(w, BALL_X, "main")
    assert git("show", "refs/heads/main:src/a.py", cwd=w.bare) == "A = 30"
    return w.tip(BALL_A)


def test_an_older_pass_merged_again_does_not_roll_back_a_later_slice(
        fresh_world: World) -> None:
    w = fresh_world
    _slice_two_over_a(w)
    git("checkout", BALL_A, "--", "src/a.py", cwd=w.work)
    tree = git("write-tree", cwd=w.work)
    again = git("commit-tree", tree, "-p", "main", "-p", BALL_A, "-m", MERGE_A, cwd=w.work)
    git("reset", "-q", "--hard", again, cwd=w.work)
    assert git("show", "main:src/a.py", cwd=w.work) == "A = 10"
    before = remote_refs(w.bare)
    refused(w, w.push("main"), before, "L8", "score 1 of s1/a is merged already",
            "a pass lands once")
    assert git("show", "refs/heads/main:src/a.py", cwd=w.bare) == "A = 30"


@pytest.mark.parametrize("dated", ["", "2031-01-01T00:00:00Z"])
def test_a_ball_merged_again_before_its_merge_record_is_refused(
        fresh_world: World, monkeypatch: pytest.MonkeyPatch, dated: str) -> None:
    """The slice's merge record is written after the spine merges land: until then the
    graph says the candidate landed, and a merge of it again that puts its old bytes back is
    refused. A candidate dated ahead of the spine hid from
    dulwich's ``can_fast_forward`` (it skips commits dated before the one it looks for)."""
    w = fresh_world
    if dated:
        monkeypatch.setenv("GIT_COMMITTER_DATE", dated)
    _passed(w, SLICE, "a", BALL_A, w.base, {"src/a.py": "A = 10\n"})
    monkeypatch.delenv("GIT_COMMITTER_DATE", raising=False)
    _passed(w, SLICE, "b", BALL_B, w.base, {"src/b.py": "B = 20\n"})
    with w.ledger() as ledger:
        take_lease(ledger, "main", "integrator")
    _merge(w, BALL_A, MERGE_A)
    _merge(w, BALL_B, "integrate s1/b\n\nLeap-Slice: s1\nLeap-Ball: b")
    _push_all(w, BALL_A, BALL_B, "main")
    # merged again with its own tree: b's bytes, landed since, rolled back (a merge that
    # moves no byte rolls nothing back, and is taken: `leap merge` of a re-scored pass)
    again = git("commit-tree", w.tip(f"{BALL_A}^{{tree}}"), "-p", "main", "-p", BALL_A,
                "-m", MERGE_A, cwd=w.work)
    before = remote_refs(w.bare)
    refused(w, w.push(f"{again}:refs/heads/main"), before, "L8",
            f"the candidate {w.tip(BALL_A)[:12]} of s1/a is on the spine already")


def _merged_on_the_ledger(w: World) -> dict[str, str]:
    """Ball a merged under a lease, the ledger pushed, the spine not yet: the remote's refs."""
    with w.ledger() as ledger:
        take_lease(ledger, "main", "integrator")
    _merge(w, BALL_A, MERGE_A)
    res = w.push("leap/ledger")
    assert res.returncode == 0, res.stderr
    return remote_refs(w.bare)


def test_a_passed_ball_of_an_abandoned_slice_is_refused(fresh_world: World) -> None:
    w = fresh_world
    _passed(w, SLICE, "a", BALL_A, w.base, {"src/a.py": "A = 10\n"})
    res = w.push("leap/ledger")
    assert res.returncode == 0, res.stderr
    ab = leap("slice", "abandon", SLICE, "--reason", "given up", cwd=w.work)
    assert ab.code == 0, ab
    before = _merged_on_the_ledger(w)
    refused(w, w.push(BALL_A, "main"), before, "L4", "slice s1 is abandoned",
            "its balls land no more")


def test_a_pass_voided_by_a_reopen_is_refused_on_the_spine(fresh_world: World) -> None:
    """Held (red team round 2): a byte change on the ball branch after the pass reopens the
    ball (L8); the pass's old candidate does not land."""
    from leapgit.records.scoring import ReopenRecord

    w = fresh_world
    tree = _passed(w, SLICE, "a", BALL_A, w.base, {"src/a.py": "A = 10\n"})
    found = git("mktree", cwd=w.work, input=git("ls-tree", w.base, cwd=w.work).encode())
    rec = ReopenRecord(SLICE, "a", 1, 1, tree, found, "ball-branch", None, "a byte change",
                       NOW)
    w.append({layout.reopen_path(SLICE, "a", 1): yamlio.dumps(rec.to_dict())}, "reopen a")
    before = _merged_on_the_ledger(w)
    refused(w, w.push(BALL_A, "main"), before, "L8", "has no standing pass",
            "was reopened by a byte change")
