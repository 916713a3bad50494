"""T6: seat every lens at once. Per lens, walk its ladder: a rung that never answered, could
not hold the envelope, answered off-lens or was annulled is recorded and the walk moves on;
the first rung that answers decides the seat (one shot, no retries). A fused verifier judges
the same prompt; its absence marks the lens UNVERIFIED, or HALTs when it is required (T2)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from leapgit.records.tribunal_config import Rung
from leapgit.records.usage import Usage
from leapgit.tribunal import verdict as rules
from leapgit.tribunal.envelope import Envelope
from leapgit.tribunal.errors import BadAnswer, BudgetSpent, OffLens, SeatFailure
from leapgit.tribunal.prompt import Prompt
from leapgit.tribunal.providers import asker
from leapgit.tribunal.providers.base import SeatContext
from leapgit.tribunal.routing import Ladder, LensPlan, same_route


@dataclass(frozen=True)
class Attempt:
    rung: str
    # answered | bad_answer | never_answered | capacity | off_lens | annulled | exhausted
    result: str
    detail: str
    seconds: float
    answered_lens: str | None = None
    raw_tail: str | None = None
    usage: Usage | None = None  # what the provider reported it charged, at the rung's prices


@dataclass(frozen=True)
class Seat:
    """What one ladder walk ended with."""

    outcome: str  # pass | refuse | hold
    reason: str
    rung: Rung | None = None
    verdict: rules.Verdict | None = None
    attempts: tuple[Attempt, ...] = ()


@dataclass(frozen=True)
class LensResult:
    lens: str
    outcome: str  # pass | refuse | hold
    reason: str
    primary: Seat
    verifier: Seat | None = None
    unverified: bool = False
    halted: bool = False  # T2: a required verifier did not answer

    @property
    def bare(self) -> bool:
        seats = [s for s in (self.primary, self.verifier) if s and s.verdict]
        return self.outcome == "pass" and all(s.verdict.bare for s in seats if s.verdict)


def _hold_reason(attempts: list[Attempt]) -> str:
    if not attempts:
        return "no eligible rung: the lens holds, it never falls back to the builder (T4)"
    if all(a.result == "off_lens" for a in attempts):
        return f"every rung answered off-lens ({len(attempts)}) (T6)"
    kinds = ", ".join(sorted({a.result for a in attempts}))
    return f"no rung gave a verdict ({len(attempts)} tried: {kinds}): hold (T6)"


def _priced(rung: Rung, usage: Usage | None) -> Usage | None:
    return usage.priced(rung.usd_per_mtok_in, rung.usd_per_mtok_out) if usage else None


async def walk(ladder: Ladder, prompt: Prompt, envelope: Envelope, ctx: SeatContext) -> Seat:
    attempts: list[Attempt] = []
    for rung in ladder.rungs:
        started = time.monotonic()
        answer_detail, spent, exhausted = "", None, False
        try:
            answer = await asker(rung.provider)(rung, prompt, ctx)
            answer_detail, spent = answer.detail, _priced(rung, answer.usage)
            exhausted = answer.exhausted
            found = rules.parse(answer.text, prompt.lens, envelope)
        except OffLens as exc:
            attempts.append(Attempt(rung.id, exc.kind, exc.detail, time.monotonic() - started,
                                    exc.answered_lens, exc.raw_tail, spent))
            continue
        except BadAnswer as exc:
            detail = f"{exc.detail}; {answer_detail}" if answer_detail else exc.detail
            if exhausted:  # T8: cut at its budget, no usable verdict: failed, walk on
                attempts.append(Attempt(rung.id, BudgetSpent.kind, f"{detail}: the budget "
                                        "was spent, failed seat (T8)",
                                        time.monotonic() - started,
                                        raw_tail=exc.raw_tail or None, usage=spent))
                continue
            # T6: a juror that answered badly is a valid refuse; its one shot is spent
            attempts.append(Attempt(rung.id, exc.kind, detail, time.monotonic() - started,
                                    raw_tail=exc.raw_tail or None,
                                    usage=spent or _priced(rung, exc.usage)))
            return Seat("refuse", f"answered badly: {detail} (T6)", rung, None, tuple(attempts))
        except SeatFailure as exc:
            attempts.append(Attempt(rung.id, exc.kind, _where(rung, exc),
                                    time.monotonic() - started,
                                    raw_tail=exc.raw_tail or None,
                                    usage=_priced(rung, exc.usage)))
            continue
        attempts.append(Attempt(rung.id, "answered", answer_detail, time.monotonic() - started,
                                usage=spent))
        return Seat(found.outcome, found.reason, rung, found, tuple(attempts))
    return Seat("hold", _hold_reason(attempts), None, None, tuple(attempts))


def _where(rung: Rung, exc: SeatFailure) -> str:
    """A transport failure's cause with the endpoint it could not reach, when the cause
    does not name it (httpx's connect errors name no URL): shown on the terminal (T6)."""
    if exc.kind != "never_answered" or not rung.endpoint or rung.endpoint in exc.detail:
        return exc.detail
    return f"{exc.detail} (endpoint {rung.endpoint})"


def _independent(primary: Seat, verifier: Seat) -> Seat:
    """T2: a verifier that sat on the primary's own route (the primary walked on to it) is
    the same juror agreeing with itself: it counts as missing."""
    if primary.rung is None or verifier.rung is None or not same_route(primary.rung,
                                                                        verifier.rung):
        return verifier
    return Seat("hold", f"sat on {verifier.rung.id}, the primary's own route: not "
                "independent, counts as missing (T2)", verifier.rung, None, verifier.attempts)


def fuse(plan: LensPlan, primary: Seat, verifier: Seat | None) -> LensResult:
    lens = plan.lens.id
    if verifier is not None:
        verifier = _independent(primary, verifier)
    if verifier is None:
        return LensResult(lens, primary.outcome, primary.reason, primary)
    if verifier.outcome == "hold":
        if plan.verifier_required:
            return LensResult(lens, "hold", f"HALT: required verifier missing: "
                              f"{verifier.reason} (T2)", primary, verifier, halted=True)
        # T2: the primary stands on its own evidence, marked UNVERIFIED, never "verified"
        return LensResult(lens, primary.outcome, primary.reason + " [UNVERIFIED]", primary,
                          verifier, unverified=True)
    if "refuse" in (primary.outcome, verifier.outcome):
        who = "primary" if primary.outcome == "refuse" else "verifier"
        seat = primary if who == "primary" else verifier
        return LensResult(lens, "refuse", f"{who} refused: {seat.reason}", primary, verifier)
    if primary.outcome == "hold":
        return LensResult(lens, "hold", primary.reason, primary, verifier)
    return LensResult(lens, "pass", f"{primary.reason}; verifier agreed", primary, verifier)


async def seat_lens(plan: LensPlan, prompt: Prompt, envelope: Envelope,
                    ctx: SeatContext) -> LensResult:
    ladders = [plan.primary] + ([plan.verifier] if plan.verifier is not None else [])
    seats = await asyncio.gather(*(walk(lad, prompt, envelope, ctx) for lad in ladders))
    return fuse(plan, seats[0], seats[1] if len(seats) > 1 else None)


def exploded(plan: LensPlan, exc: BaseException) -> LensResult:
    seat = Seat("hold", f"seat exploded: {type(exc).__name__}: {exc}")
    return LensResult(plan.lens.id, "hold", seat.reason, seat)


async def seat_all(plans: tuple[LensPlan, ...], prompts: dict[str, Prompt], envelope: Envelope,
                   ctx: SeatContext, on_result: Callable[[LensResult], LensResult],
                   ) -> tuple[list[LensResult], list[tuple[str, BaseException]]]:
    """Every lens at once; each result is handed to ``on_result`` the moment it is known
    (T6: verdicts already paid for are written before any failure propagates), which
    returns the result as it was recorded."""
    explosions: list[tuple[str, BaseException]] = []

    async def one(plan: LensPlan) -> LensResult:
        try:
            result = await seat_lens(plan, prompts[plan.lens.id], envelope, ctx)
        except Exception as exc:  # T6: recorded per lens, then re-raised by the caller
            explosions.append((plan.lens.id, exc))
            result = exploded(plan, exc)
        return on_result(result)

    results = await asyncio.gather(*(one(p) for p in plans))
    return list(results), explosions


def unrecordable(result: LensResult, why: str) -> LensResult:
    """A verdict whose record the ledger would refuse is no verdict: the seat failed."""
    reason = f"the verdict record failed its schema: {why}; the seat counts as failed (T6)"
    return LensResult(result.lens, "hold", reason, Seat("hold", reason), halted=result.halted)


def annul(result: LensResult, why: str) -> LensResult:
    """T8: a verdict over stale files is no verdict."""
    return replace(result, outcome="hold", reason=f"annulled: {why} (T8)")
