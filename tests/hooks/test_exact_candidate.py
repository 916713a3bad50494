"""Issue 18, "gaps in the tests": the spine takes only the exact candidate that passed. A
merge whose second parent is an extra, unscored commit on top of the passed one (a round
the builder made after the score) brings bytes no one graded: refused (L8), even with the
pass, the lease and every other record in place on the server."""

from __future__ import annotations

from leapgit.ledger.leases import take_lease
from tests.hooks.world import SLICE, World, commit, remote_refs, round_message
from tests.support import git, write_pass

BALL_A = f"leap/ball/{SLICE}/a"


def test_a_merge_of_an_unscored_commit_on_top_of_the_passed_one_is_refused(
        fresh_world: World) -> None:
    w = fresh_world
    git("checkout", "-q", "-B", BALL_A, w.base, cwd=w.work)
    passed = commit(w.work, {"src/a.py": "A = 10\n"}, round_message("a: ten", 1, 1))
    tree = w.tip(f"{passed}^{{tree}}")
    with w.ledger() as ledger:
        write_pass(ledger, SLICE, "a", tree, passed, w.base)
        take_lease(ledger, "main", "integrator")
    extra = commit(w.work, {"src/a.py": "A = 11\n"}, round_message("a: after the score", 2))
    git("checkout", "-q", "main", cwd=w.work)
    assert w.push("leap/ledger", BALL_A).returncode == 0  # the proof and the rounds, stored
    message = "integrate s1/a\n\nLeap-Slice: s1\nLeap-Ball: a"
    honest = git("commit-tree", tree, "-p", w.base, "-p", passed, "-m", message, cwd=w.work)
    unscored = git("commit-tree", w.tip(f"{extra}^{{tree}}"), "-p", w.base, "-p", extra,
                   "-m", message, cwd=w.work)
    before = remote_refs(w.bare)
    result = w.push(f"{unscored}:refs/heads/main")
    assert result.returncode != 0, result.stderr
    assert f"[L8] refs/heads/main {unscored[:12]}: the pass of s1/a is for candidate " \
        f"{tree[:12]}, got {w.tip(f'{extra}^{{tree}}')[:12]}" in result.stderr, result.stderr
    assert remote_refs(w.bare) == before
    landed = w.push(f"{honest}:refs/heads/main")  # the passed candidate itself lands
    assert landed.returncode == 0, landed.stderr
