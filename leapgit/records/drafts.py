"""Frozen types of a slice draft as the user writes it (``slice cut`` reads them; L2, L4).
Validated against ``schemas/slice.schema.json`` before they are built."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from leapgit.records.types import BallRecord, Metric


@dataclass(frozen=True)
class ScopeEntry:
    """One path of a ball's scope as the draft names it (L2)."""

    path: str
    symbols: tuple[str, ...] = ()
    lines: str | None = None

    @classmethod
    def from_draft(cls, raw: Any) -> ScopeEntry:
        if isinstance(raw, str):
            return cls(path=raw)
        return cls(path=raw["path"], symbols=tuple(raw.get("symbols", ())), lines=raw.get("lines"))


@dataclass(frozen=True)
class BallDraft:
    """A ball as the slice draft describes it, before the cut."""

    id: str
    goal: str
    spec: str
    scope: tuple[ScopeEntry, ...]
    proof: str
    rollback: str
    depends_on: tuple[str, ...] = ()
    metric: Metric | None = None
    tests: str | None = None
    live_proof: str | None = None

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> BallDraft:
        return cls(
            id=raw["id"], goal=raw["goal"], spec=raw["spec"],
            scope=tuple(ScopeEntry.from_draft(s) for s in raw["scope"]),
            proof=raw["proof"], rollback=raw["rollback"],
            depends_on=tuple(raw.get("depends_on", ())),
            metric=Metric.from_dict(raw["metric"]) if raw.get("metric") else None,
            tests=raw.get("tests"), live_proof=raw.get("live_proof"),
        )

    @classmethod
    def from_record(cls, rec: BallRecord) -> BallDraft:
        """A recorded spec version as the draft it was cut or respecced from (its stamps
        dropped: a check stamps them anew)."""
        return cls(id=rec.ball, goal=rec.goal, spec=rec.spec,
                   scope=tuple(ScopeEntry(s.path, s.symbols, s.lines) for s in rec.scope),
                   proof=rec.proof, rollback=rec.rollback, depends_on=rec.depends_on,
                   metric=rec.metric, tests=rec.tests, live_proof=rec.live_proof)


@dataclass(frozen=True)
class SliceDraft:
    """A slice draft as read from its YAML file, before the cut (L4)."""

    source: str  # the file it came from, for messages
    slice: str
    spine: str
    balls: tuple[BallDraft, ...]
    description: str | None = None
    live_proof: str | None = None  # the landed slice's own proof (T9), run by `leap run`

    def ball(self, ball_id: str) -> BallDraft:
        return next(b for b in self.balls if b.id == ball_id)
