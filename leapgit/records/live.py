"""The frozen type of a live proof record (``slices/<s>/live/<n>.yaml``): the landed slice's
own ``live_proof`` run on the spine tip its merge ``n`` left, in a clean worktree (T9: a
unanimous pass opens the gate; land, then prove the capability live). Outcome 1 held, -1
failed: a failed live proof leaves the slice landed but not done, and says so."""

from __future__ import annotations

from typing import Any, Literal, NamedTuple


class LiveProofRecord(NamedTuple):
    slice: str
    merge: int  # the merge record it proves (1: merge.yaml, n > 1: merges/<n>.yaml)
    tip: str  # the spine commit it ran on: that merge's tip
    command: str
    exit_code: int | None  # None: it never finished (a timeout)
    seconds: float
    output_tail: str
    outcome: Literal[1, -1]
    recorded_at: str
    # the n-th proof of that merge: after a failure, once a fix landed on the spine, the
    # next runs on the spine's tip then (``tip`` descends from the merge's)
    attempt: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "live_proof", "format": 1, "slice": self.slice, "merge": self.merge,
                "tip": self.tip, "command": self.command, "exit_code": self.exit_code,
                "seconds": round(self.seconds, 3), "output_tail": self.output_tail,
                "outcome": self.outcome, "recorded_at": self.recorded_at,
                **({"attempt": self.attempt} if self.attempt != 1 else {})}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> LiveProofRecord:
        return cls(raw["slice"], raw["merge"], raw["tip"], raw["command"], raw["exit_code"],
                   raw["seconds"], raw["output_tail"], raw["outcome"], raw["recorded_at"],
                   raw.get("attempt", 1))
