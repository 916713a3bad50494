"""The whole slice flow with four distinct keys (two builders, a scorer, an integrator)
is accepted by the server that requires signatures; an admin-signed policy change lands."""

from __future__ import annotations

from tests.hooks.world import remote_refs, run_git
from tests.signing.world import SLICE, SignedWorld
from tests.support import git


def test_four_keys_slice_flow_is_accepted(fresh: SignedWorld) -> None:
    w = fresh
    tree_a = w.build("a", {"src/a.py": "A = 10\n"}, "alice")
    tree_b = w.build("b", {"src/b.py": "B = 20\n"}, "bob")
    w.receipt("a", "alice", claim=True)  # each builder's claim of its own round
    w.receipt("b", "bob", claim=True)
    result = w.push(f"leap/ball/{SLICE}/a", f"leap/ball/{SLICE}/b", "leap/ledger")
    assert result.returncode == 0, result.stderr
    w.grade("a", "carol", tree_a)
    w.grade("b", "carol", tree_b)
    w.lease("ivan")
    merge_a, merge_b = w.merge("a", "ivan"), w.merge("b", "ivan")
    # the ledger first: the server judges the spine against the ledger it
    # stores (F1)
    assert w.push("leap/ledger").returncode == 0
    result = w.push("main")
    assert result.returncode == 0, result.stderr
    w.lease("ivan", action="release")
    result = w.push("leap/ledger")
    assert result.returncode == 0, result.stderr
    refs = remote_refs(w.bare)
    assert refs["refs/heads/main"] == merge_b
    assert git("rev-parse", f"{merge_b}^1", cwd=w.work) == merge_a
    # git itself reads leapgit's signatures: the policy is an allowed-signers file.
    allowed = f"gpg.ssh.allowedSignersFile={w.work / '.leap/allowed_signers'}"
    shown = run_git("-c", allowed, "verify-commit", refs["refs/heads/leap/ledger"], cwd=w.work)
    assert shown.returncode == 0 and 'Good "git" signature for integrator:ivan' in shown.stderr


def test_a_builder_with_scorer_role_grades_another_builders_ball(fresh: SignedWorld) -> None:
    w = fresh
    tree_b = w.build("b", {"src/b.py": "B = 20\n"}, "bob")
    w.grade("b", "alice", tree_b)  # alice built nothing of b
    result = w.push(f"leap/ball/{SLICE}/b", "leap/ledger")
    assert result.returncode == 0, result.stderr


def test_an_admin_signed_policy_change_lands(fresh: SignedWorld) -> None:
    w = fresh
    policy = (w.work / ".leap/allowed_signers").read_text()
    # root (admin, and builder) writes the change on the ball branch; ivan lands it.
    tree = w.build("p", {".leap/allowed_signers": policy + "# reviewed by root\n"}, "root")
    w.grade("p", "carol", tree)
    w.lease("ivan")
    merge = w.merge("p", "ivan")
    # the ledger first: the server judges the spine against the ledger it
    # stores (F1)
    assert w.push(f"leap/ball/{SLICE}/p", "leap/ledger").returncode == 0
    result = w.push("main")
    assert result.returncode == 0, result.stderr
    assert remote_refs(w.bare)["refs/heads/main"] == merge
