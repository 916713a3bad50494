"""Where a merged slice stands after it landed (T9: land, then prove the capability live;
L8: a failed live proof reopens the slice). Read from the ledger alone: the slice's last
merge record and, when the slice declares a ``live_proof``, that merge's last attempt. The
one statement of it, shared by `leap status` and `leap audit`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from leapgit.ledger import history

if TYPE_CHECKING:
    from leapgit.ledger.view import LedgerView
    from leapgit.records.live import LiveProofRecord
    from leapgit.records.types import SliceRecord


class Landing(NamedTuple):
    """A merged slice's last merge and, when the slice declares one, its live proof's last
    attempt."""

    merge: int
    tip: str
    declared: bool
    live: LiveProofRecord | None

    @property
    def failed(self) -> bool:
        """T9, L8: the landed slice fails its live proof: landed, but reopened, not done."""
        return self.live is not None and self.live.outcome == -1

    def state(self) -> str:
        if not self.declared:
            return "landed, live proof not declared"
        if self.live is None:
            return "landed, live proof not run yet"
        return "reopened: the landed slice fails its live proof" if self.failed else \
            "landed, live proof held"

    def to_json(self) -> dict[str, Any]:
        live = self.live
        return {"merge": self.merge, "tip": self.tip, "state": self.state(),
                "live_proof": None if live is None else {
                    "outcome": live.outcome, "attempt": live.attempt, "tip": live.tip,
                    "exit_code": live.exit_code}}


def failed_hint(slice_id: str) -> str:
    """What leads on after a live proof failed: the landed code is repaired as new work,
    and the slice is proved again on the spine tip that holds the repair."""
    return (f"repair it in a slice of its own (`leap slice cut FILE`, then `leap run "
            f"FIX`); then `leap run {slice_id}` proves it live again on the spine's tip")


def landing(view: LedgerView, rec: SliceRecord) -> Landing | None:
    """None while the slice has not landed."""
    merges = history.merge_records(view, rec.slice)
    if not merges:
        return None
    last = merges[-1]
    tried = history.live_proofs(view, rec.slice, last.number) if rec.live_proof else []
    return Landing(last.number, last.tip, bool(rec.live_proof), tried[-1] if tried else None)
