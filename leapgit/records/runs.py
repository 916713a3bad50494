"""The frozen type of a run lease record: one `leap run` drives a slice at a time (L3: one
driver, issue 15 item 7). ``slices/<slice>/runs/<n>/take.yaml`` opens run lease n, naming
its holder (the clone: host and git directory) and its process; ``release.yaml`` closes it
when the run ends. A run whose process is gone (``kill -9``, a lost machine) is taken over
by the next run's take (``takes_over: n``): by the same clone at once (its file lock is
free), by another clone when asked (`leap run --take-over`). ``rules.runs`` judges them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

RunAction = Literal["take", "release"]


@dataclass(frozen=True)
class RunLeaseRecord:
    slice: str
    run: int
    action: RunAction
    holder: str  # the clone that runs it: host:git-dir (boot id), ``loop.lease.clone_id``
    pid: int
    at: str
    takes_over: int | None = None  # take: the open run lease whose run is gone
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "run", "format": 1, "slice": self.slice,
                               "run": self.run, "action": self.action, "holder": self.holder,
                               "pid": self.pid, "at": self.at}
        if self.takes_over is not None:
            out["takes_over"] = self.takes_over
        if self.reason:
            out["reason"] = self.reason
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> RunLeaseRecord:
        return cls(slice=raw["slice"], run=raw["run"], action=raw["action"],
                   holder=raw["holder"], pid=raw["pid"], at=raw["at"],
                   takes_over=raw.get("takes_over"), reason=raw.get("reason"))
