"""The tribunal's ledger records (envelope, routing, verdict, summary), built from one
convening as the typed records of ``records.tribunal_run``. Every one carries the run id,
the round, the candidate commit, its tree id and the envelope hash (L7: the same hash in
every record)."""

from __future__ import annotations

from dataclasses import dataclass

from leapgit.records.tribunal_run import (
    AttemptRecord,
    CheckRecord,
    EnvelopeEntry,
    EnvelopeRecord,
    FindingRecord,
    IndependenceRecord,
    LensOutcome,
    LensRoute,
    MechanicalRecord,
    MutantRecord,
    RoutedLadder,
    RoutingRecord,
    SeatRecord,
    SkippedRung,
    SummaryRecord,
    VerdictRecord,
)
from leapgit.records.usage import NOTHING, Usage, total
from leapgit.tribunal.convergence import Progress, fingerprint
from leapgit.tribunal.envelope import Envelope
from leapgit.tribunal.identity import Builder
from leapgit.tribunal.independence import Seated
from leapgit.tribunal.mechanical import Mechanical
from leapgit.tribunal.routing import Ladder, Routing
from leapgit.tribunal.seating import LensResult, Seat
from leapgit.tribunal.tally import Decision
from leapgit.tribunal.verdict import Finding, Rerun


@dataclass(frozen=True)
class RunInfo:
    run_id: str
    round: int
    series: str
    base: str
    candidate: str
    tree: str
    envelope_hash: str
    builder: Builder
    slice: str | None = None
    ball: str | None = None

    @property
    def head(self) -> tuple[str, int, str, str, str]:
        """The fields every record of the run opens with, in their order."""
        return self.run_id, self.round, self.candidate, self.tree, self.envelope_hash


def envelope_record(info: RunInfo, env: Envelope) -> EnvelopeRecord:
    files = tuple(EnvelopeEntry(f.path, f.role, f.status, f.blob, f.size) for f in env.files)
    return EnvelopeRecord(*info.head, base=env.base, intent=env.contract.intent,
                          criteria=env.contract.criteria, files=files,
                          tokens_estimate=env.tokens, slice=info.slice, ball=info.ball)


def _ladder(ladder: Ladder) -> RoutedLadder:
    return RoutedLadder(tuple(r.id for r in ladder.rungs),
                        tuple(SkippedRung(s.rung, s.kind, s.reason) for s in ladder.skipped))


def routing_record(info: RunInfo, routing: Routing) -> RoutingRecord:
    lenses = tuple(LensRoute(p.lens.id, p.lens.tier, _ladder(p.primary),
                             _ladder(p.verifier) if p.verifier is not None else None,
                             p.verifier_required) for p in routing.plans)
    return RoutingRecord(*info.head, builder_family=info.builder.family,
                         single_rung=routing.single_rung, lenses=lenses, slice=info.slice,
                         ball=info.ball)


def findings_of(result: LensResult) -> list[FindingRecord]:
    out = []
    for seat, role in ((result.primary, "primary"), (result.verifier, "verifier")):
        if seat is None or seat.verdict is None:
            continue
        for f in seat.verdict.findings:
            out.append(FindingRecord(fingerprint(result.lens, f.file, f.claim), result.lens,
                                     f.severity, f.file, f.claim, f.evidence, f.supported,
                                     seat=role, mutant=_mutant(f)))
    return out


def _mutant(f: Finding) -> MutantRecord | None:
    """T9: a claimed mutant, with its re-run (INVALID when it was never re-run)."""
    if f.mutant is None:
        return None
    done = f.rerun or Rerun("INVALID", "not re-run: the lens gave no verdict to check")
    return MutantRecord(f.mutant, done.status, done.detail, done.files)


def _seat(seat: Seat) -> SeatRecord:
    attempts = tuple(AttemptRecord(a.rung, a.result, a.detail, round(a.seconds, 3),
                                   a.answered_lens, a.raw_tail, a.usage) for a in seat.attempts)
    rung, verdict = seat.rung, seat.verdict
    return SeatRecord(
        seat.outcome, seat.reason, rung.id if rung else None, attempts,
        provider=rung.provider if rung else None, family=rung.family if rung else None,
        model=(rung.model or " ".join(rung.command)) if rung else None,
        said=verdict.said if verdict else None, bare=verdict.bare if verdict else None,
    )


def usage_of(result: LensResult) -> Usage | None:
    """Issue 15 item 9: what one lens's calls cost, both seats, every rung tried."""
    seats = [_seat(s) for s in (result.primary, result.verifier) if s is not None]
    return total(s.spent for s in seats)


def verdict_record(info: RunInfo, result: LensResult, recorded_at: str) -> VerdictRecord:
    return VerdictRecord(
        *info.head, lens=result.lens, outcome=result.outcome, reason=result.reason,
        seat=_seat(result.primary), findings=tuple(findings_of(result)),
        recorded_at=recorded_at,
        verifier=_seat(result.verifier) if result.verifier is not None else None,
        unverified=result.unverified, halted=result.halted, bare=result.bare,
        slice=info.slice, ball=info.ball, usage=usage_of(result),
    )


def _mechanical(checks: Mechanical) -> MechanicalRecord:
    return MechanicalRecord(checks.outcome, checks.invalid,
                            tuple(CheckRecord(c.name, c.result, c.detail) for c in checks.checks))


def seats_of(results: list[LensResult]) -> list[tuple[str, str]]:
    """(rung, family) of every seat that gave a verdict (issue 17: its independence)."""
    return [(s.rung.id, s.rung.family) for r in results for s in (r.primary, r.verifier)
            if s is not None and s.rung is not None and s.verdict is not None]


def _independence(seated: Seated | None) -> IndependenceRecord | None:
    if seated is None or not seated.rungs:
        return None
    return IndependenceRecord(seated.rungs, seated.families, seated.single_family,
                              seated.effective.value, seated.notes())


def summary_record(info: RunInfo, decision: Decision, results: list[LensResult],
                   progress: Progress, mechanical: Mechanical | None, single_rung: bool,
                   recorded_at: str, seated: Seated | None = None) -> SummaryRecord:
    new = set(progress.new)
    findings = tuple(f._replace(status="new" if f.fingerprint in new else "recurring")
                     for r in results for f in findings_of(r))
    return SummaryRecord(
        *info.head, series=info.series, base=info.base, builder_family=info.builder.family,
        outcome=decision.outcome, reason=decision.reason,
        lenses=tuple(LensOutcome(r.lens, r.outcome) for r in results), findings=findings,
        new_count=len(progress.new), recorded_at=recorded_at,
        builder=tuple(info.builder.to_dict().items()), halted=decision.halted,
        escalated=decision.escalated, single_rung=single_rung,
        unverified=tuple(r.lens for r in results if r.unverified),
        resolved=tuple(progress.resolved), new_counts=tuple(progress.new_counts),
        oscillating=tuple(progress.oscillating),
        mechanical=_mechanical(mechanical) if mechanical else None,
        # always written: no call that answered is a known 0 (a HALT sent nothing)
        slice=info.slice, ball=info.ball,
        usage=total(usage_of(r) for r in results) or NOTHING,
        independence=_independence(seated),
    )
