"""A red recorded before any round is replaced by the next (T7.1): the newest red before the
first round is the one that counts, for the server's pre-receive, the rounds, and `leap
score`'s source check. A real remote (a bare repository with the server hook), a real
builder, real pytest runs."""

from __future__ import annotations

from pathlib import Path

from leapgit.ledger import history, layout
from leapgit.ledger.store import Ledger
from leapgit.records.scoring import ScoreRecord
from tests.scoring.tiny import SLICE, SUB_TEST, make_tiny, red, served
from tests.support import git, leap

SUB_TEST_2 = ("from pkg import calc\n\n\ndef test_sub():\n    assert calc.sub(3, 1) == 2\n\n\n"
              "def test_sub_negative():\n    assert calc.sub(1, 3) == -2\n")


def test_the_newest_red_before_the_first_round_is_the_one_that_counts(tmp_path: Path) -> None:
    repo = make_tiny(tmp_path)
    bare = served(tmp_path, repo)
    first, r = red(repo, "sub", {"tests/test_sub.py": SUB_TEST})
    assert r.code == 0, r
    # a better contract test, on the base again (not on the first red): it replaces it
    second, r = red(repo, "sub", {"tests/test_sub.py": SUB_TEST_2})
    assert r.code == 0 and "red 2 of tiny/sub" in r.out and "replaces red 1" in r.out, r
    with Ledger(repo / ".git") as ledger:
        counted = history.reds(ledger.require(), SLICE, "sub")
    assert [(x.red, x.commit, x.replaces) for x in counted] == [(2, second, 1)]
    # the server takes the replacing red (red 2 neither descends from red 1 nor keeps its
    # test: nothing was built on red 1)
    synced = leap("sync", cwd=repo)
    assert synced.code == 0, synced
    assert git("rev-parse", "leap/ledger", cwd=bare) == git("rev-parse", "leap/ledger", cwd=repo)
    r = leap("throw", SLICE, "--ball", "sub", "--run", cwd=repo)
    assert r.code == 0 and "sub: 1 round(s), last pass (claim)" in r.out, r
    wt = tmp_path / "repo.leap-worktrees" / SLICE / "sub"
    assert git("rev-parse", "HEAD~1", cwd=wt) == second  # built on the red that counts
    pushed = git("push", "--porcelain", "origin", f"leap/ball/{SLICE}/sub", cwd=repo,
                 check=False)
    assert "[rejected]" not in pushed and git(
        "rev-parse", f"leap/ball/{SLICE}/sub", cwd=bare) == git("rev-parse", "HEAD", cwd=wt)
    # score: the source check holds the candidate to red 2's test (red 1's is gone); the
    # tests run; only the tribunal, whose juror never answers, holds
    scored = leap("score", SLICE, "sub", cwd=repo)
    assert scored.code == 3, scored
    with Ledger(repo / ".git") as ledger:
        rec = ledger.require().record(layout.score_path(SLICE, "sub", 1), ScoreRecord)
    assert rec is not None
    assert [(s.step, s.result) for s in rec.steps][:3] == [
        ("source", "ok"), ("metric", "skipped"), ("tests", "ok")], rec.steps
    assert rec.steps[-1].step == "tribunal" and rec.outcome == 0
    assert first != second
