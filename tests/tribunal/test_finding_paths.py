"""A juror names a finding's file as people do: `./src/x.py`, `src/x.py:7`, `src/x.py#L7`.
The finding is blamed by its path (L8: the aggregate review sends it to the ball that owns
the file), so it is read as the envelope names the file (a walk-away hunt: a finding on
`src/shop/prices.py:7` read as no ball's file, and the slice stopped for good)."""

from __future__ import annotations

import json

import pytest

from leapgit.tribunal.envelope import Contract, Envelope, EnvelopeFile
from leapgit.tribunal.verdict import parse

TEXT = "def price(x):\n    return x * 2  # doubled\n"
ENVELOPE = Envelope("b" * 40, "c" * 40, "t" * 40, Contract("intent", "criteria"),
                    (EnvelopeFile("src/shop/prices.py", "changed", "text", "1" * 40,
                                  len(TEXT), TEXT),), "body", "h")


def said(file: str, evidence: str = "return x * 2") -> str:
    return json.dumps({"verdict": "refuse", "findings": [{
        "severity": "major", "file": file, "claim": "doubles", "evidence": evidence}],
        "lens": "defect"})


@pytest.mark.parametrize("named", ["src/shop/prices.py", "./src/shop/prices.py",
                                   "/src/shop/prices.py", "src/shop/prices.py:2",
                                   "src/shop/prices.py:2:5", "src/shop/prices.py:L2",
                                   "src/shop/prices.py#L2", "src/shop/prices.py#L1-L2",
                                   "src/shop/prices.py (line 2)"])
def test_a_file_named_with_a_line_or_a_dot_is_the_envelope_s_file(named: str) -> None:
    found = parse(said(named), "defect", ENVELOPE).findings[0]
    assert found.file == "src/shop/prices.py", found


@pytest.mark.parametrize("named", ["prices.py", "shop/prices.py:2"])
def test_a_file_named_by_its_tail_is_the_one_envelope_file_it_ends(named: str) -> None:
    found = parse(said(named), "defect", ENVELOPE).findings[0]
    assert found.file == "src/shop/prices.py" and found.supported, found


def test_a_name_the_change_does_not_hold_is_the_file_its_evidence_is_found_in() -> None:
    """A blind review: a name no envelope file matched stayed as written, read as no
    ball's file, and the slice stopped for good."""
    found = parse(said("setup.cfg"), "defect", ENVELOPE).findings[0]
    assert found.file == "src/shop/prices.py" and found.supported, found


def test_a_name_whose_evidence_is_found_nowhere_stays_as_written() -> None:
    found = parse(said("setup.cfg", "no such text"), "defect", ENVELOPE).findings[0]
    assert found.file == "setup.cfg" and not found.supported, found
