"""`leap score` (L7, T9): a harness that is INVALID at score time is a hold (0), never a -1
charged to the builder; a ball never thrown is sent to its red first. Real pytest
runs in a tiny project (tests/scoring/tiny.py), a real builder."""

from __future__ import annotations

from pathlib import Path

from leapgit.ledger import layout
from leapgit.ledger.store import Ledger
from leapgit.records.scoring import ScoreRecord
from tests.scoring.tiny import PYTEST, SLICE, SUB_TEST, draft, make_tiny, red, write_respec
from tests.support import leap


def _score(repo: Path, number: int = 1) -> ScoreRecord:
    with Ledger(repo / ".git") as ledger:
        rec = ledger.require().record(layout.score_path(SLICE, "sub", number), ScoreRecord)
    assert rec is not None
    return rec


def test_tests_that_fail_at_the_base_hold_the_score_and_never_refuse_the_candidate(
        tmp_path: Path) -> None:
    """The ball's `tests` were repaired (before the throw) into a command that names the red
    test file: at the base it is not there, so the suite cannot be green there, and nothing
    the builder does can change that. The score holds, naming the harness."""
    repo = make_tiny(tmp_path)
    _, r = red(repo, "sub", {"tests/test_sub.py": SUB_TEST})
    assert r.code == 0, r
    named = write_respec(tmp_path / "named.yaml", tests=f"{PYTEST} tests/test_sub.py")
    assert leap("ball", "respec", SLICE, "sub", str(named), cwd=repo).code == 0
    r = leap("throw", SLICE, "--ball", "sub", "--run", cwd=repo)
    assert r.code == 0 and "last pass (claim)" in r.out, r
    r = leap("score", SLICE, "sub", cwd=repo)
    assert r.code == 3, r
    rec = _score(repo)
    assert (rec.outcome, rec.rule) == (0, "T9"), rec
    assert rec.reason.startswith("tests: the harness is INVALID: tests ")
    assert "the candidate is not charged" in rec.reason and "[T9]" in r.out
    assert [(s.step, s.result) for s in rec.steps] == [
        ("source", "ok"), ("metric", "skipped"), ("tests", "hold")]
    assert rec.runs[-1].exit_code == 4  # pytest: file or directory not found
    assert "the base" in (rec.runs[-1].where or "")


def test_mechanical_checks_that_say_invalid_hold_the_score(tmp_path: Path) -> None:
    """T9: when the tribunal's own mechanical checks find the harness INVALID (here a
    `tests` command that is green everywhere but in the tribunal's checkouts, so its
    baseline is not cleanly green), the tribunal refuses to grade; the score holds, it does
    not charge the builder a -1."""
    flaky = f'case "$PWD" in */leap-tree-*) exit 3;; esac; {PYTEST} tests'
    repo = make_tiny(tmp_path, slice_draft=draft(tests=flaky))
    _, r = red(repo, "sub", {"tests/test_sub.py": SUB_TEST})
    assert r.code == 0, r
    r = leap("throw", SLICE, "--ball", "sub", "--run", cwd=repo)
    assert r.code == 0, r
    r = leap("score", SLICE, "sub", cwd=repo)
    assert r.code == 3, r
    rec = _score(repo)
    assert (rec.outcome, rec.rule) == (0, "T9"), rec
    assert "the harness is INVALID: INVALID: base is cleanly green" in rec.reason
    assert rec.steps[-1].step == "tribunal" and rec.steps[-1].result == "hold"


def test_scoring_a_ball_never_thrown_names_its_red_first(tmp_path: Path) -> None:
    """The hint leads on: the ball has no red, so `leap throw` would refuse it; the hint
    names `leap red` first, and then the throw."""
    repo = make_tiny(tmp_path)
    r = leap("score", SLICE, "sub", cwd=repo)
    assert r.code == 2, r
    assert (f"record its red (`leap red {SLICE} sub COMMIT`), then `leap throw {SLICE} --ball "
            "sub`") in r.err
    _, done = red(repo, "sub", {"tests/test_sub.py": SUB_TEST})
    assert done.code == 0, done
    r = leap("score", SLICE, "sub", cwd=repo)
    assert r.code == 2 and f"throw it first: `leap throw {SLICE} --ball sub`" in r.err, r
    assert leap("throw", SLICE, "--ball", "sub", cwd=repo).code == 0
