"""The frozen type of a claim record: a worker's hold on one published episode (L9: one
writer per ball). ``claims/<n>/take.yaml`` opens claim n with a lease (``claimed_until``),
``claims/<n>/renew-<k>.yaml`` extends it while the worker builds, and
``claims/<n>/release.yaml`` gives it back. ``rules.claims`` judges them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

ClaimAction = Literal["take", "renew", "release"]


@dataclass(frozen=True)
class ClaimRecord:
    slice: str
    ball: str
    episode: int
    claim: int
    action: ClaimAction
    holder: str
    at: str
    claimed_until: str | None = None  # take and renew
    renewal: int | None = None  # renew: its number within the claim
    key: str | None = None  # the worker's signing key (S1-S6 on)
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": "claim", "format": 1, "slice": self.slice, "ball": self.ball,
            "episode": self.episode, "claim": self.claim, "action": self.action,
            "holder": self.holder,
        }
        if self.renewal is not None:
            out["renewal"] = self.renewal
        if self.key:
            out["key"] = self.key
        out["at"] = self.at
        if self.claimed_until is not None:
            out["claimed_until"] = self.claimed_until
        if self.reason:
            out["reason"] = self.reason
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ClaimRecord:
        return cls(
            slice=raw["slice"], ball=raw["ball"], episode=raw["episode"], claim=raw["claim"],
            action=raw["action"], holder=raw["holder"], at=raw["at"],
            claimed_until=raw.get("claimed_until"), renewal=raw.get("renewal"),
            key=raw.get("key"), reason=raw.get("reason"),
        )
