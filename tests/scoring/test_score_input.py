"""`leap score` of a ball the slice does not have says it is unknown: one line, exit 2 (bad
input, README's exit codes)."""

from __future__ import annotations

from pathlib import Path

from tests.scoring.tiny import SLICE, make_tiny
from tests.support import leap


def test_scoring_a_ball_the_slice_does_not_have_says_it_is_unknown(tmp_path: Path) -> None:
    repo = make_tiny(tmp_path)
    r = leap("score", SLICE, "nope", cwd=repo)
    assert r.code == 2, r  # README, exit codes: bad input
    assert r.err == f"leap: slice {SLICE!r} has no ball 'nope' (balls: sub, doc)\n"
    assert r.out == ""
    r = leap("score", "nope", "sub", cwd=repo)  # and an unknown slice, likewise
    assert r.code == 2 and r.err.startswith("leap: unknown slice 'nope' (known: tiny)"), r
