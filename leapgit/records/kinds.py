"""Which type each record kind reads into: the one table the load boundary
(``LedgerView.record``) checks a record's ``kind`` against before it builds the type. Types
are named, not imported: a hook that reads receipts never defines the scoring or tribunal
types."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import Protocol, Self

    class Loadable(Protocol):
        """A record type: built from a validated record with ``from_dict``."""

        @classmethod
        def from_dict(cls, raw: dict[str, Any]) -> Self: ...

TYPE_OF_KIND = {
    "ledger": "leapgit.records.types:LedgerRoot",
    "slice": "leapgit.records.types:SliceRecord",
    "ball": "leapgit.records.types:BallRecord",
    "throw": "leapgit.records.types:ThrowRecord",
    "receipt": "leapgit.records.types:Receipt",
    "checkpoint": "leapgit.records.types:Checkpoint",
    "envelope": "leapgit.records.tribunal_run:EnvelopeRecord",
    "routing": "leapgit.records.tribunal_run:RoutingRecord",
    "verdict": "leapgit.records.tribunal_run:VerdictRecord",
    "summary": "leapgit.records.tribunal_run:SummaryRecord",
    "lease": "leapgit.records.leases:LeaseRecord",
    "red": "leapgit.records.scoring:RedRecord",
    "score": "leapgit.records.scoring:ScoreRecord",
    "reopen": "leapgit.records.scoring:ReopenRecord",
    "merge": "leapgit.records.scoring:MergeRecord",
    "abandon": "leapgit.records.abandon:AbandonRecord",
    "live_proof": "leapgit.records.live:LiveProofRecord",
    "probe": "leapgit.records.probe:ProbeRecord",
    "claim": "leapgit.records.claims:ClaimRecord",
    "run": "leapgit.records.runs:RunLeaseRecord",
}
_KIND_OF_TYPE = {name: kind for kind, name in TYPE_OF_KIND.items()}


def kind_of(record_type: type) -> str:
    """The kind a record type reads (``SliceRecord`` -> ``slice``)."""
    return _KIND_OF_TYPE[f"{record_type.__module__}:{record_type.__qualname__}"]
