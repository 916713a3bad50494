"""`leap throw` refuses a ball with no red (T7.1): thrown without its failing contract test,
a ball can never pass. The refusal names the `leap red` command, and running it lets the
throw go on."""

from __future__ import annotations

from pathlib import Path

from leapgit.ledger import query
from leapgit.ledger.store import Ledger
from tests.scoring.tiny import SLICE, SUB_TEST, make_tiny, red_commit
from tests.support import git, leap, ref


def test_a_ball_without_red_is_not_thrown_and_the_hinted_red_lets_it_go(tmp_path: Path) -> None:
    repo = make_tiny(tmp_path)
    hint = f"record it: `leap red {SLICE} sub COMMIT`"
    r = leap("throw", SLICE, "--ball", "sub", cwd=repo)
    assert r.code == 1, r
    assert (f"leap: {SLICE}/sub has no red: a ball thrown without its failing contract test "
            f"can never pass [T7.1]; commit the failing test on top of the ball's base and "
            f"{hint}") in r.err
    r = leap("throw", SLICE, cwd=repo)  # the whole wave: nothing is thrown either
    assert r.code == 3 and f"{SLICE}/doc has no red" in r.err, r
    with Ledger(repo / ".git") as ledger:  # all or nothing: no record, no worktree, no branch
        view = ledger.require()
        assert query.episodes(view, SLICE, "sub") == [] == query.episodes(view, SLICE, "doc")
    assert ref(repo, f"refs/heads/leap/ball/{SLICE}/sub") is None
    assert not (tmp_path / "repo.leap-worktrees").exists()
    sha = red_commit(repo, {"tests/test_sub.py": SUB_TEST})
    r = leap("red", SLICE, "sub", sha, cwd=repo)  # the hinted command, COMMIT filled in
    assert r.code == 0, r
    r = leap("throw", SLICE, "--ball", "sub", cwd=repo)
    assert r.code == 0 and "sub" in r.out, r
    wt = tmp_path / "repo.leap-worktrees" / SLICE / "sub"
    assert git("rev-parse", "HEAD", cwd=wt) == sha  # it starts from the red commit
