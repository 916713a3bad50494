"""``rounds._checked(quick=True)``, the post-commit hook's write: a record whose strings are
all one line is written without a read-back, because ``yamlio.dumps`` writes such a record
as JSON scalars, which YAML reads back exactly. These tests hold that promise."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leapgit.errors import InvalidRecord
from leapgit.records import schema, yamlio
from leapgit.records.types import Checkpoint, Receipt
from leapgit.worktrees.rounds import _checked

SHA = "a" * 40
PATH = "slices/s/balls/b/episodes/1/receipts/1.yaml"
one_line = st.text(max_size=300).filter(lambda t: "\n" not in t)


@settings(max_examples=300, deadline=None)
@given(evidence=one_line, recorded_by=one_line.filter(bool), outcome=st.sampled_from([-1, 0, 1]),
       round_no=st.integers(1, 4), claim=st.booleans())
def test_a_quick_receipt_reads_back_exactly_and_is_valid(
        evidence: str, recorded_by: str, outcome: int, round_no: int, claim: bool) -> None:
    rec = Receipt(slice="s", ball="b", episode=1, round=round_no,
                  outcome=outcome,  # type: ignore[arg-type]
                  evidence=evidence, recorded_at="2024-01-01T00:00:00Z", claim=claim,
                  commit=SHA, candidate=SHA, recorded_by=recorded_by)
    record = rec.to_dict()
    assert yamlio.all_quoted(record)
    data = _checked(rec, PATH, quick=True)
    back = yamlio.loads(data, PATH)
    assert back == record
    assert schema.validate_record(back, PATH) == "receipt"
    assert Receipt.from_dict(back) == rec


@settings(max_examples=100, deadline=None)
@given(tried=st.lists(one_line, min_size=1, max_size=4), last=one_line)
def test_a_quick_checkpoint_reads_back_exactly_and_is_valid(tried: list[str], last: str) -> None:
    rec = Checkpoint(slice="s", ball="b", episode=1, rounds_used=4, tried=tuple(tried),
                     last_evidence=last, recorded_at="2024-01-01T00:00:00Z", candidate=SHA,
                     commit=SHA, reason="round limit 4 reached without a pass (L6)")
    data = _checked(rec, "slices/s/balls/b/episodes/1/checkpoint.yaml", quick=True)
    back = yamlio.loads(data, "checkpoint")
    assert back == rec.to_dict()
    assert Checkpoint.from_dict(back) == rec


def test_a_record_with_a_line_break_is_read_back_and_validated_even_when_quick() -> None:
    rec = Receipt(slice="s", ball="b", episode=1, round=4, outcome=0,
                  evidence="tried:\na\nb\n", recorded_at="2024-01-01T00:00:00Z")
    assert not yamlio.all_quoted(rec.to_dict())
    assert yamlio.loads(_checked(rec, PATH, quick=True), PATH) == rec.to_dict()
    fifth = rec._replace(round=5)  # L6: no fifth round, which only the schema check can see
    with pytest.raises(InvalidRecord, match="round"):
        _checked(fifth, PATH, quick=True)
