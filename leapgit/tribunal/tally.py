"""T6, T7: the tribunal's one outcome. Land only on a unanimous pass; a HALT outranks all;
a refuse outranks a hold; bare passes alone are not evidence enough to pass."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from leapgit.tribunal.seating import LensResult

EXIT_CODES = {"pass": 0, "refuse": 1, "hold": 3}


@dataclass(frozen=True)
class Decision:
    outcome: str  # pass | refuse | hold
    reason: str
    halted: bool = False
    escalated: bool = False

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.outcome]


def decide(results: Sequence[LensResult], checks_outcome: str | None = None,
           checks_reason: str = "") -> Decision:
    halted = [r.lens for r in results if r.halted]
    if halted:
        return Decision("hold", f"HALT: required verifier missing for {', '.join(halted)} (T2)",
                        halted=True)
    refused = [r.lens for r in results if r.outcome == "refuse"]
    if checks_outcome == "refuse":
        return Decision("refuse", f"mechanical checks: {checks_reason} (T7)")
    if refused:
        return Decision("refuse", f"refused by {', '.join(refused)}")
    held = [r.lens for r in results if r.outcome != "pass"]
    if held:
        return Decision("hold", f"no verdict for {', '.join(held)}: hold and re-seat (T6)")
    if all(r.bare for r in results):
        # T6: a bare pass is never the only evidence for a pass
        return Decision("hold", "every pass is bare (no findings, no evidence): not enough "
                        "evidence to pass (T6)")
    return Decision("pass", "unanimous pass")
