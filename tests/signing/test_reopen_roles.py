"""Issue 18 F6 (S3, L8): in signed mode, any builder could void any ball's pass with a
reopen record. A scorer or the integrator may reopen any ball; a builder only a ball it
built, on its branch's account (the post-commit hook's reopen of its own round). Pushed to
a real remote that requires signatures; refused with the rule id, the refs unchanged."""

from __future__ import annotations

from leapgit.ledger import layout
from leapgit.records import yamlio
from leapgit.records.scoring import ReopenRecord
from tests.hooks.world import remote_refs
from tests.signing.world import NOW, SLICE, SignedWorld
from tests.support import git


def _passed_a(w: SignedWorld) -> tuple[str, str]:
    """Ball a built by alice and passed by carol, on the server; (its tree, a moved tree)."""
    tree = w.build("a", {"src/a.py": "A = 10\n"}, "alice")
    w.receipt("a", "alice", claim=True)
    w.grade("a", "carol", tree)
    pushed = w.push(f"leap/ball/{SLICE}/a", "leap/ledger")
    assert pushed.returncode == 0, pushed.stderr
    moved = git("rev-parse", f"{w.base}^{{tree}}", cwd=w.work)
    return tree, moved


def _reopen(tree: str, found: str) -> dict[str, bytes]:
    rec = ReopenRecord(SLICE, "a", 1, 1, tree, found, "ball-branch", None,
                       "the ball branch moved after the pass", NOW)
    return {layout.reopen_path(SLICE, "a", 1): yamlio.dumps(rec.to_dict())}


def test_a_builder_cannot_reopen_another_builders_ball(fresh: SignedWorld) -> None:
    w = fresh
    tree, moved = _passed_a(w)
    before = remote_refs(w.bare)
    sha = w.append(_reopen(tree, moved), "bob", "reopen a")
    result = w.push("leap/ledger")
    assert result.returncode != 0 and remote_refs(w.bare) == before, result.stderr
    assert f"[S3] refs/heads/leap/ledger {sha[:12]} {layout.reopen_path(SLICE, 'a', 1)}: a " \
        "reopen of s1/a signed by key" in result.stderr, result.stderr
    assert "a builder reopens only a ball it built" in result.stderr, result.stderr


def test_the_balls_own_builder_and_a_scorer_may_reopen_it(fresh: SignedWorld) -> None:
    w = fresh
    tree, moved = _passed_a(w)
    w.append(_reopen(tree, moved), "alice", "reopen a")  # its own round moved the branch
    landed = w.push("leap/ledger")
    assert landed.returncode == 0, landed.stderr
