"""Issue 14 item 11: a commit refused in a ball worktree (a post-commit scope breach, L4/L9,
recorded -1, L6) is kept as evidence under refs/leap/evidence/<slice>/<ball>/<episode>-<round>,
so a rollback or a prune of the branch loses nothing; the ref is local: the server refuses
refs under refs/leap/ (their short names shadow leap/, L8), so it is never pushed. A real
remote behind `git daemon` with the real pre-receive."""

from __future__ import annotations

from tests.hooks.test_post_commit import ball_worktree, hooked_commit, receipts
from tests.hooks.world import SLICE, World, round_message
from tests.support import git, leap


def test_a_breach_commit_is_kept_under_an_evidence_ref_that_stays_local(
    fresh_world: World,
) -> None:
    w = fresh_world
    wt = ball_worktree(w, "a")
    err = hooked_commit(wt, {"src/a.py": "A = 10\n", "src/b.py": "B = 0\n"},
                        round_message("a: too much", 1, 1))
    assert "SCOPE BREACH in ball s1/a" in err
    # the commit just made: the branch's tip before the refused round left it (issue 14)
    head = git("rev-parse", f"leap/ball/{SLICE}/a@{{1}}", cwd=wt)
    assert git("rev-parse", "HEAD", cwd=wt) == w.base != head
    [r] = receipts(w, "a")
    assert (r.outcome, r.commit) == (-1, head)
    ref = f"refs/leap/evidence/{SLICE}/a/1-1"
    assert f"kept as evidence: {ref} (local" in err, err
    assert git("rev-parse", ref, cwd=w.work) == head
    # the ball branch holds no refused commit: the real pre-receive takes it (the ledger
    # first, which it judges against)
    for name in ("leap/ledger", f"leap/ball/{SLICE}/a"):
        pushed = w.push(name)
        assert pushed.returncode == 0, pushed.stderr
    # the branch goes (what a prune of a refused ball does): the evidence stays
    git("worktree", "remove", "--force", str(wt), cwd=w.work)
    git("branch", "-D", f"leap/ball/{SLICE}/a", cwd=w.work)
    assert git("show", f"{ref}:src/b.py", cwd=w.work) == "B = 0"
    audit = leap("audit", cwd=w.work)
    assert f"evidence {ref} at {head[:12]}: round 1 of {SLICE}/a, refused (-1) as the " \
        "ledger records" in audit.out, audit.out
    # local only: the server refuses a ref under refs/leap/ (L8), as it says
    pushed = w.push(f"{ref}:{ref}")
    assert pushed.returncode != 0 and "[L8]" in pushed.stderr, pushed.stderr
    assert ref not in git("for-each-ref", "--format=%(refname)", cwd=w.bare)
