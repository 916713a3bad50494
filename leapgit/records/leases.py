"""The frozen type of a lease record (``leases/<n>/take.yaml`` and ``release.yaml``): one
half of an integrator lease on a spine (L9). ``ledger.leases`` takes and gives them back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

LeaseAction = Literal["take", "release"]


@dataclass(frozen=True)
class LeaseRecord:
    """One half of an integrator lease on a spine (L9: one writer)."""

    spine: str
    lease: int
    action: LeaseAction
    holder: str
    at: str
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": "lease", "format": 1, "spine": self.spine, "lease": self.lease,
            "action": self.action, "holder": self.holder,
            ("taken_at" if self.action == "take" else "released_at"): self.at,
        }
        if self.reason:
            out["reason"] = self.reason
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> LeaseRecord:
        return cls(
            spine=raw["spine"], lease=raw["lease"], action=raw["action"], holder=raw["holder"],
            at=raw.get("taken_at") or raw.get("released_at") or "", reason=raw.get("reason"),
        )
