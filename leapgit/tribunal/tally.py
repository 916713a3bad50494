"""T6, T7: the tribunal's one outcome. Land only on a unanimous pass; a HALT outranks all;
a refuse outranks a hold; bare passes alone are not evidence enough to pass; a pass that
leaves a supported minor finding open is none (T7: closed too, never deferred)."""

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
    minor = [r.lens for r in results if open_minor(r)]
    if minor:
        # T7 (7): "blockers fixed, minors later" is the leak; a finding ends fixed, or
        # refuted with documented evidence, never parked
        return Decision("refuse", f"a unanimous pass with minor finding(s) open "
                        f"({', '.join(minor)}): closed too, never deferred (T7)")
    return Decision("pass", "unanimous pass")


def open_minor(result: LensResult) -> bool:
    """Whether a seat of ``result`` lists a minor finding its evidence supports and no
    evidence refuted: a claimed mutant the re-run KILLED is refuted, one it could not run
    (INVALID) is no claim standing (T9: only a survivor is one; a blind review: a killed
    mutant's finding refused a green unanimous pass)."""
    seats = [s for s in (result.primary, result.verifier) if s is not None and s.verdict]
    return any(f.severity == "minor" and f.supported and
               (f.mutant is None or f.rerun is None or f.rerun.status == "SURVIVED")
               for s in seats if s.verdict for f in s.verdict.findings)
