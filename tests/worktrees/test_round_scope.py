"""Client and server judge a round commit with one function (issue 13): `leap round` refuses
what post-commit and pre-receive refuse, a scope path turned into a link (L4, L2) included."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from leapgit.ledger import query
from leapgit.ledger.store import Ledger
from leapgit.records.types import Receipt
from tests.support import git, leap
from tests.worktrees.conftest import make_diamond, worktree_of

# (link target from src/a.py, rule, what the refusal says)
LINKS = {
    "another-balls-file": ("b.py", "L4", "a symlink to src/b.py, outside the scope of ball "
                                         "dia/A"),
    "outside-the-repository": ("/etc/passwd", "L2", "points outside the repository"),
}


def _linked_worktree(diamond: Path, target: str) -> Path:
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    (wt / "src/a.py").unlink()
    os.symlink(target, wt / "src/a.py")  # an in-scope path, now naming other bytes
    return wt


def _receipt(repo: Path) -> Receipt:
    with Ledger(repo / ".git") as ledger:
        [got] = query.receipts(ledger.require(), "dia", "A", 1)
    return got


@pytest.mark.parametrize("how", sorted(LINKS))
def test_leap_round_refuses_a_scope_file_turned_into_a_link(diamond: Path, how: str) -> None:
    target, rule, says = LINKS[how]
    wt = _linked_worktree(diamond, target)
    r = leap("round", "dia", "A", "--outcome", "1", "--evidence", "done", cwd=wt)
    assert r.code == 1, r  # a refuse, never `pass (claim)`
    assert "refuse" in r.out and "(claim)" not in r.out, r
    got = _receipt(diamond)
    assert (got.outcome, got.claim) == (-1, False), got
    assert f"({rule})" in got.evidence and says in got.evidence, got.evidence
    assert (wt / "src/a.py").is_file() and not (wt / "src/a.py").is_symlink()  # rolled back
    assert (wt / "src/a.py").read_text() == "A = 1\n"


@pytest.mark.parametrize("how", sorted(LINKS))
def test_leap_round_and_post_commit_record_the_same_refusal(diamond: Path, tmp_path: Path,
                                                             how: str) -> None:
    target, rule, _ = LINKS[how]
    wt = _linked_worktree(diamond, target)
    assert leap("round", "dia", "A", "--outcome", "1", "--evidence", "done", cwd=wt).code == 1
    by_round = _receipt(diamond)
    repo = make_diamond(tmp_path / "by-hand")  # the same change, committed by hand
    wt = _linked_worktree(repo, target)
    git("add", "-A", cwd=wt)
    git("commit", "-q", "-m", "a: link\n\nLeap-Round: 1\nLeap-Outcome: 1", cwd=wt)
    by_hook = _receipt(repo)  # post-commit judged it
    assert (by_hook.outcome, by_hook.claim) == (by_round.outcome, by_round.claim) == (-1, False)
    for got in (by_round, by_hook):
        assert f"({rule})" in got.evidence and "src/a.py" in got.evidence, got.evidence
