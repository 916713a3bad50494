"""The type of an abandon record (``slices/<slice>/abandon.yaml``): a slice given up before
it merged. Its balls are thrown no more (L3), its worktrees become prunable, and its scope
files are free for another slice to claim (L4)."""

from __future__ import annotations

from typing import Any, NamedTuple


class AbandonRecord(NamedTuple):
    slice: str
    reason: str
    abandoned_at: str

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "abandon", "format": 1, "slice": self.slice, "reason": self.reason,
                "abandoned_at": self.abandoned_at}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> AbandonRecord:
        return cls(raw["slice"], raw["reason"], raw["abandoned_at"])
