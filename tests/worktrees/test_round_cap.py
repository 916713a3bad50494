"""Issue 18, gaps in the tests (L6): `leap round` past the last round is refused before
anything is committed. Round four cannot create round five: the worktree's HEAD stays
where round four left it, and the builder's uncommitted bytes stay in the worktree."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import git, leap
from tests.worktrees.conftest import worktree_of


@pytest.mark.parametrize("last", ["0", "1"])  # a checkpoint, or a claim waiting for a score
def test_a_fifth_round_commits_nothing(diamond: Path, last: str) -> None:
    assert leap("throw", "dia", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    for n in range(1, 5):
        (wt / "src/a.py").write_text(f"A = {n}\n")
        outcome = last if n == 4 else "0"
        r = leap("round", "dia", "A", "--outcome", outcome, "--evidence", f"try {n}", cwd=wt)
        assert r.code in (0, 3), r
    head = git("rev-parse", "HEAD", cwd=wt)
    ledger = git("rev-parse", "leap/ledger", cwd=diamond)
    (wt / "src/a.py").write_text("A = 5\n")
    r = leap("round", "dia", "A", "--outcome", "1", "--evidence", "five", cwd=wt)
    assert r.code == 1 and "[L6]" in r.err, r
    assert git("rev-parse", "HEAD", cwd=wt) == head  # no fifth commit
    assert git("rev-parse", "leap/ledger", cwd=diamond) == ledger  # no fifth receipt
    assert (wt / "src/a.py").read_text() == "A = 5\n"  # the builder's bytes are kept
    assert git("status", "--porcelain", cwd=wt) == "M src/a.py"
