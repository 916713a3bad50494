"""L7, README "Throw, rounds and rollback": "A last round that claims a pass waits for
`leap score`: it is no pass (L7) and takes no further round, and `leap throw` and
`leap round` both say to score it." A newcomer's hunt: `leap throw` did, `leap round`
recorded a further round over the unscored claim. It names the score, as the throw does,
and records nothing."""

from __future__ import annotations

from pathlib import Path

from tests.support import git, leap
from tests.worktrees.conftest import worktree_of


def test_leap_round_after_an_unscored_claim_says_to_score_it(diamond: Path) -> None:
    assert leap("throw", "dia", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    (wt / "src/a.py").write_text("A = 1\n")
    r = leap("round", "dia", "A", "--outcome", "1", "--evidence", "claim", cwd=wt)
    assert r.code == 0, r
    # leap throw says to score the claim
    t = leap("throw", "dia", "--ball", "A", cwd=diamond)
    assert "leap score dia A" in t.err, t
    ledger = git("rev-parse", "leap/ledger", cwd=diamond)
    (wt / "src/a.py").write_text("A = 2\n")
    r = leap("round", "dia", "A", "--outcome", "0", "--evidence", "another", cwd=wt)
    assert "leap score dia A" in r.err, r  # it says to score the claim
    assert git("rev-parse", "leap/ledger", cwd=diamond) == ledger  # and records no round 2
