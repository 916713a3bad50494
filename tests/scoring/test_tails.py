"""Recorded output tails are evidence to read, not bytes to replay on a terminal: the tail of
every typed command run (red, score steps, metric) is stripped of ANSI escapes before it is
recorded. A real pytest run with its colours on, in a tiny project (tests/scoring/tiny.py)."""

from __future__ import annotations

from pathlib import Path

from leapgit.ledger import layout
from leapgit.ledger.store import Ledger
from leapgit.records.scoring import RedRecord
from leapgit.scoring.commands import clean_tail
from tests.scoring.tiny import PYTEST, SLICE, SUB_TEST, draft, make_tiny, red


def test_a_red_that_fails_inside_its_test_is_recorded_and_its_tail_has_no_ansi_escapes(
        tmp_path: Path) -> None:
    """A failure inside the test is the right reason. The recorded tail is evidence to
    read: pytest's colours (--color=yes) are stripped before it is recorded."""
    repo = make_tiny(tmp_path, slice_draft=draft(proof=f"{PYTEST} --color=yes tests/test_sub.py"))
    sha, r = red(repo, "sub", {"tests/test_sub.py": SUB_TEST})
    assert r.code == 0, r
    assert f"red 1 of {SLICE}/sub: commit {sha[:12]}, the proof fails there" in r.out
    with Ledger(repo / ".git") as ledger:
        recorded = ledger.require().record(layout.red_path(SLICE, "sub", 1), RedRecord)
    assert recorded is not None
    tail = recorded.proof.output_tail
    assert "1 failed" in tail and "AttributeError" in tail
    assert "\x1b" not in tail and "[0m" not in tail, tail


def test_every_kind_of_terminal_escape_is_stripped_from_a_tail() -> None:
    said = ("\x1b[31mFAILED\x1b[0m \x1b[?25l\x1b[2K \x1b]0;a title\x07\x1b]8;;http://x\x1b\\"
            "link\x1b]8;;\x1b\\ \x1b(B\x1b7\x9b1m tab\there \u00e9")
    assert clean_tail(said) == "FAILED  link  tab\there \u00e9"
    assert clean_tail("x" * 5000 + "\x1b[0m") == "x" * 4000  # cut after stripping
