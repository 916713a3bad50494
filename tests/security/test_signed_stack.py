"""Blind review r2 of issue 18, signed mode: the stack base of a dependent ball (the
slice's base with its dependencies' passed candidates merged in, built by `leap throw`,
signed by no one) was counted as one of the ball's rounds when its merge reached the
spine (``rules.signed_spine._merged_rounds``): S1 refused the honest merge, "a ball round
needs a key with role builder". The base is the throw's, judged by L5 (``rules.stack``);
the ball's rounds are the commits above it, and those are still judged (S1)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from leapgit.ledger import layout
from leapgit.records import yamlio
from leapgit.records.types import Receipt, StackEntry, ThrowRecord
from tests.hooks.world import remote_refs, round_message
from tests.signing.world import NOW, SLICE, SignedWorld, signed_commit, signed_world
from tests.support import git, pass_files, red_files
from tests.templates import Served

DRAFT = f"""\
slice: {SLICE}
spine: integrator
balls:
  - {{id: a, goal: a is 10, spec: set A, scope: [src/a.py], proof: "true", tests: "true",
      rollback: restore-scope}}
  - {{id: b, goal: b is 20, spec: set B, scope: [src/b.py], proof: "true", tests: "true",
      rollback: restore-scope, depends_on: [a]}}
"""
BALL_B = f"leap/ball/{SLICE}/b"


@pytest.fixture
def w(served: Served, monkeypatch: pytest.MonkeyPatch) -> Iterator[SignedWorld]:
    monkeypatch.delenv("LEAP_SIGNING_KEY", raising=False)
    with signed_world(served, "signed-stack", DRAFT, ("a",)) as copy:
        yield copy


def merged_a(w: SignedWorld) -> StackEntry:
    """Ball a built by alice, graded by carol, merged by ivan: on the server's spine."""
    tree = w.build("a", {"src/a.py": "A = 10\n"}, "alice")
    w.receipt("a", "alice", claim=True)
    assert w.push(f"leap/ball/{SLICE}/a", "leap/ledger").returncode == 0
    w.grade("a", "carol", tree)
    w.lease("ivan")
    w.merge("a", "ivan")
    assert w.push("leap/ledger").returncode == 0
    landed = w.push("main")
    assert landed.returncode == 0, landed.stderr
    return StackEntry("a", 1, tree, git("rev-parse", f"leap/ball/{SLICE}/a", cwd=w.work))


def stacked_b(w: SignedWorld, entry: StackEntry, key: str | None) -> tuple[str, str]:
    """Ball b thrown on its stack base (leapgit's own builder of it), one round by ``key``
    on top, recorded and graded by carol; (stack base, round commit). b's branch is never
    pushed: its round reaches the server only through the spine merge."""
    from leapgit.worktrees.stack import build

    stack = build(w.work, SLICE, w.base, [entry])
    thrown = ThrowRecord(SLICE, "b", 1, 1, stack, BALL_B, NOW, stack=(entry,))
    w.append({layout.throw_path(SLICE, "b", 1): yamlio.dumps(thrown.to_dict())}, "ivan",
             "throw b")
    w.append(red_files(SLICE, "b", stack), "carol", "red b")
    git("checkout", "-q", "-B", BALL_B, stack, cwd=w.work)
    rnd = signed_commit(w.work, {"src/b.py": "B = 20\n"}, round_message("b: round 1", 1, 1),
                        w.keys[key] if key else None)
    git("checkout", "-q", "main", cwd=w.work)
    tree = git("rev-parse", f"{rnd}^{{tree}}", cwd=w.work)
    claim = Receipt(SLICE, "b", 1, 1, 1, "test", NOW, claim=True, commit=rnd)
    w.append({layout.receipt_path(SLICE, "b", 1, 1): yamlio.dumps(claim.to_dict())},
             "bob", "receipt b")
    w.append(pass_files(SLICE, "b", tree, rnd, stack, run_id="t-pass-b"), "carol", "pass b")
    return stack, rnd


def test_the_stack_base_of_a_dependent_ball_is_no_round_of_it(w: SignedWorld) -> None:
    stack, _rnd = stacked_b(w, merged_a(w), "bob")
    assert "gpgsig" not in git("cat-file", "-p", stack, cwd=w.work)  # nobody signs a base
    merge = w.merge("b", "ivan")
    assert w.push("leap/ledger").returncode == 0
    result = w.push("main")
    assert result.returncode == 0, result.stderr
    assert remote_refs(w.bare)["refs/heads/main"] == merge


def test_an_unsigned_round_above_the_stack_base_is_still_refused(w: SignedWorld) -> None:
    stack, rnd = stacked_b(w, merged_a(w), None)
    w.merge("b", "ivan")
    assert w.push("leap/ledger").returncode == 0
    before = remote_refs(w.bare)
    result = w.push("main")
    assert result.returncode != 0, result.stderr
    assert f"[S1] refs/heads/main {rnd[:12]}: the commit is not signed" in result.stderr, \
        result.stderr
    assert f"refs/heads/main {stack[:12]}" not in result.stderr, result.stderr
    assert remote_refs(w.bare) == before
