"""The paths the server accepts: a well-formed ledger append, a ball round inside its
scope, and the integrator's merge of a fully passed ball under the lease."""

from __future__ import annotations

from leapgit.ledger import layout
from leapgit.ledger.leases import active_lease, release_lease, take_lease
from tests.hooks.world import SLICE, World, commit, remote_refs, round_message
from tests.support import git, write_pass

BALL_A = f"leap/ball/{SLICE}/a"


def test_ledger_append_is_accepted(fresh_world: World) -> None:
    w = fresh_world
    path, data = w.receipt("a", 1, 0, claim=True)
    tip = w.append({path: data})
    result = w.push("leap/ledger", verify=True)
    assert result.returncode == 0, result.stderr
    assert remote_refs(w.bare)["refs/heads/leap/ledger"] == tip


def test_ball_round_in_scope_is_accepted(fresh_world: World) -> None:
    w = fresh_world
    git("checkout", "-q", "-b", BALL_A, w.base, cwd=w.work)
    commit(w.work, {"src/a.py": "A = 10\n", "src/new.py": "N = 1\n"}, round_message("a", 1, 1))
    sha = commit(w.work, {"tests/test_a.py": "# t\n"}, round_message("a", 2, 0))
    result = w.push(BALL_A, verify=True)
    assert result.returncode == 0, result.stderr
    assert remote_refs(w.bare)[f"refs/heads/{BALL_A}"] == sha


def _passed_ball(w: World) -> str:
    git("checkout", "-q", "-b", BALL_A, w.base, cwd=w.work)
    commit(w.work, {"src/a.py": "A = 10\n"}, round_message("a: ten", 1, 1))
    tree = w.tip(f"{BALL_A}^{{tree}}")
    with w.ledger() as ledger:
        write_pass(ledger, SLICE, "a", tree, w.tip(BALL_A), w.base)
    git("checkout", "-q", "main", cwd=w.work)
    git("merge", "-q", "--no-ff", "-m", "integrate s1/a\n\nLeap-Slice: s1\nLeap-Ball: a",
        BALL_A, cwd=w.work)
    return w.tip("main")


def test_integrator_merge_under_the_lease_is_accepted(fresh_world: World) -> None:
    w = fresh_world
    merge = _passed_ball(w)
    with w.ledger() as ledger:
        lease = take_lease(ledger, "main", "integrator")
        assert active_lease(ledger.view(), "main") == lease
    as_mallory = {"REMOTE_USER": "mallory"}
    # the ledger first: the server judges the spine against the ledger it stores (F1)
    ledger = w.push("leap/ledger", url=str(w.bare), env={"REMOTE_USER": "integrator"},
                    verify=True)
    assert ledger.returncode == 0, ledger.stderr
    before = remote_refs(w.bare)
    result = w.push(BALL_A, "main", url=str(w.bare), env=as_mallory)
    assert result.returncode != 0
    assert "[L9] refs/heads/main" in result.stderr and "pushed by 'mallory' (from " \
        "REMOTE_USER), but lease 1 is held by 'integrator'" in result.stderr, result.stderr
    assert remote_refs(w.bare) == before
    result = w.push(BALL_A, "main", url=str(w.bare),
                    env={"REMOTE_USER": "integrator"}, verify=True)
    assert result.returncode == 0, result.stderr
    assert remote_refs(w.bare)["refs/heads/main"] == merge


def test_lease_domain_functions_refuse_a_second_writer(fresh_world: World) -> None:
    import pytest

    from leapgit.errors import Hold, RuleViolation

    w = fresh_world
    with w.ledger() as ledger:
        take_lease(ledger, "main", "alice")
        with pytest.raises(Hold, match="leased to 'alice'"):
            take_lease(ledger, "main", "bob")
        with pytest.raises(RuleViolation, match="held by 'alice', not 'bob'"):
            release_lease(ledger, "main", "bob")
        release_lease(ledger, "main", "alice")
        second = take_lease(ledger, "main", "bob")
        assert second.number == 2
        assert ledger.view().exists(layout.lease_path("main", 1, "release"))
    result = w.push("leap/ledger")
    assert result.returncode == 0, result.stderr
