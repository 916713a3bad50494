"""`leap tribunal convene`, start to end: build the envelope (T5), route (T2-T4), stamp the
output folder (T6), seat every lens at once (T6, T8) beside the mechanical checks (T7), decide
(T6, T7), measure convergence (T9), write the summary last and commit the record set."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from leapgit.errors import InvalidRecord, LeapError, UsageError
from leapgit.ledger.view import LedgerView
from leapgit.ledger.workspace import Workspace, open_workspace
from leapgit.records import yamlio
from leapgit.records.tribunal_config import TribunalConfig, require_preset_programs
from leapgit.timeutil import now_iso
from leapgit.tribunal import (
    changes,
    convergence,
    envelope,
    independence,
    ledger_records,
    left,
    mechanical,
    mutants,
    outdir,
    probe,
    prompt,
    provenance,
    report,
    routing,
    seating,
    tally,
    target,
    worktree,
)
from leapgit.tribunal.errors import TribunalHold
from leapgit.tribunal.identity import Builder, parse_builder
from leapgit.tribunal.lenses import LENSES
from leapgit.tribunal.providers.base import SeatContext
from leapgit.tribunal.providers.base import client as http_client
from leapgit.tribunal.recorder import Recorder
from leapgit.tribunal.redaction import FAMILY_LABEL, Identities

Echo = Callable[[str], None]
Explosions = list[tuple[str, BaseException]]
OnResult = Callable[[seating.LensResult], seating.LensResult]


@dataclass(frozen=True)
class Request:
    intent: str
    criteria: str
    builder: str
    base: str | None = None
    head: str | None = None
    slice: str | None = None
    ball: str | None = None
    out: Path | None = None
    round: int | None = None  # None: the next round of the target's series (T7, T9)
    tests: str | None = None
    red: str | None = None
    aggregate: bool = False  # L8: ``slice``'s merged result, ``base``..``head``


@dataclass(frozen=True)
class Prepared:
    target: target.Target
    change: changes.Change
    envelope: envelope.Envelope
    prompts: dict[str, prompt.Prompt]
    routing: routing.Routing
    info: ledger_records.RunInfo


@dataclass(frozen=True)
class Convened:
    info: ledger_records.RunInfo
    decision: tally.Decision
    routing: routing.Routing
    results: tuple[seating.LensResult, ...]
    progress: convergence.Progress
    mechanical: mechanical.Mechanical | None
    out: Path
    ledger_commit: str
    envelope: envelope.Envelope
    independence: tuple[str, ...] = ()  # issue 17: what the summary says of it (T3)


def new_run_id() -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"t-{stamp}-{secrets.token_hex(3)}"


def identities(builder: Builder, cfg: TribunalConfig, authors: list[tuple[str, str]]) -> Identities:
    tokens = [("builder model id", builder.model), ("builder session id", builder.session),
              (FAMILY_LABEL, builder.family)]  # F4: the family's names name the builder too
    tokens += [("configured model id", m) for m in cfg.model_ids]
    return Identities(tuple(tokens + authors))


def prepare(ws: Workspace, view: LedgerView, req: Request) -> Prepared:
    """Everything decided before any dispatch: the envelope (T5) and the routing (T2-T4)."""
    root, cfg = ws.paths.root, ws.config.tribunal
    require_preset_programs(cfg, os.environ.get("PATH"))  # issue 17: before any seat
    builder = parse_builder(req.builder)
    contract = envelope.check_contract(req.intent, req.criteria)
    tgt = target.choose(root, view, ws.config, req.base, req.head, req.slice, req.ball,
                        req.aggregate)
    change = changes.read_change(root, tgt.base, tgt.head)
    if not change.touched:
        raise UsageError(f"{tgt.base[:12]}..{tgt.head[:12]} touches no file: nothing to grade",
                         field="--head")
    who = identities(builder, cfg, changes.authors(root, tgt.base, tgt.head))
    env = envelope.build(root, change, contract, who, cfg.tests)
    run_id = new_run_id()
    prompts = {lens.id: prompt.build(run_id, lens, env.body) for lens in LENSES}
    tokens = {k: envelope.estimate_tokens(p.text) for k, p in prompts.items()}

    # T2: availability and measured cost from the latest probe of each rung
    plan = routing.plan(cfg, builder, tokens, os.environ, probe.latest(view, cfg.rungs))
    round_no = req.round or provenance.next_round(view, tgt.series, tgt.slice, tgt.ball,
                                                  change.tree)
    info = ledger_records.RunInfo(run_id, round_no, tgt.series, tgt.base, tgt.head, change.tree,
                           env.hash, builder, tgt.slice, tgt.ball)
    return Prepared(tgt, change, env, prompts, plan, info)


def _not_dispatched(plans: tuple[routing.LensPlan, ...]) -> list[seating.LensResult]:
    out = []
    for plan in plans:
        seat = seating.Seat("hold", "not dispatched: HALT before any seat (T2)")
        out.append(seating.LensResult(plan.lens.id, "hold", seat.reason, seat, halted=plan.halted))
    return out


def _checks(ws: Workspace, change: changes.Change, req: Request) -> mechanical.Mechanical:
    assert req.tests is not None
    try:
        red = changes.resolve(req.red, ws.paths.root, "--red") if req.red else None
        return mechanical.run_checks(ws.paths.root, change, req.tests, red,
                                     ws.config.tribunal.test_timeout)
    except LeapError as exc:  # a harness that cannot run is INVALID, never a pass (T9)
        return mechanical.Mechanical((mechanical.Check("harness", "invalid", str(exc)),))


async def _sit(ws: Workspace, p: Prepared, juror_tree: Path | None,
               on_result: OnResult,
               checks: Callable[[], mechanical.Mechanical] | None,
               ) -> tuple[list[seating.LensResult], Explosions, mechanical.Mechanical | None]:
    cfg = ws.config.tribunal
    longest = max([r.timeout for r in cfg.rungs] + [cfg.timeout])
    async with http_client(longest) as client:
        digest = await asyncio.to_thread(worktree.digest, juror_tree) if juror_tree else ""
        ctx = SeatContext(client, cfg.max_answer_bytes, juror_tree=juror_tree,
                          juror_digest=digest)
        job = asyncio.ensure_future(asyncio.to_thread(checks)) if checks else None
        results, explosions = await seating.seat_all(p.routing.plans, p.prompts, p.envelope,
                                                     ctx, on_result)
        return results, explosions, (await job if job else None)


def _needs_tree(plan: routing.Routing) -> bool:
    ladders = [p.primary for p in plan.plans] + [p.verifier for p in plan.plans if p.verifier]
    return any(r.provider == "command" for lad in ladders for r in lad.rungs)


def sit(ws: Workspace, p: Prepared, req: Request, on_result: OnResult,
        ) -> tuple[list[seating.LensResult], Explosions, mechanical.Mechanical | None]:
    if p.routing.halted:  # T2: a missing required verifier is a HALT; nothing is sent
        return [on_result(r) for r in _not_dispatched(p.routing.plans)], [], None
    job = (lambda: _checks(ws, p.change, req)) if req.tests else None
    with contextlib.ExitStack() as stack:
        tree = None
        if _needs_tree(p.routing):  # T5, T8: command jurors sit on a plain read-only copy
            tree = stack.enter_context(worktree.export(ws.paths.root, p.change.head))
        results, explosions, checks = asyncio.run(_sit(ws, p, tree, on_result, job))
    if p.target.reread() != p.change.head:
        results = [on_result(seating.annul(r, "the candidate moved while the seats sat"))
                   for r in results]
    return results, explosions, checks


def decide(view: LedgerView, p: Prepared, req: Request, results: list[seating.LensResult],
           checks: mechanical.Mechanical | None) -> tuple[tally.Decision, convergence.Progress]:
    decision = tally.decide(results, checks.outcome if checks else None,
                            checks.reason if checks else "")
    prints = [f.fingerprint for r in results for f in ledger_records.findings_of(r)]
    past = provenance.past_rounds(view, p.target.series, p.info.round, p.target.slice,
                                  p.target.ball)
    # a round no juror gave a verdict in (T6) measured nothing; a HALT (T2) is a person's
    progress = convergence.progress(prints, past, decision.outcome == "pass",
                                    measured=decision.halted or any(
                                        r.outcome in ("pass", "refuse") for r in results))
    if progress.escalate:  # T9: stop and escalate to a person
        named = ", ".join(progress.oscillating or progress.new) or "none"
        why = ("escalation: NEW findings flat or rising two rounds in a row (per round: "
               f"{', '.join(map(str, progress.new_counts))}); oscillating: {named} (T9)")
        # a HALT stays a HALT (T2): the escalation is added to it, never put in its place
        reason = f"{decision.reason}; {why}" if decision.halted else why
        decision = replace(decision, outcome="hold", reason=reason, escalated=True)
    return decision, progress


def seated_independence(ws: Workspace, results: list[seating.LensResult],
                        ) -> independence.Seated:
    """Issue 17, T3: the seats' independence, from the latest runs' verdicts (read through
    the record cache: each verdict is parsed once, not on every convening)."""
    with ws.ledger(cache_records=True) as cached:
        past = independence.history(cached.require(), independence.HISTORY_RUNS)
    return independence.seated(past, ledger_records.seats_of(results))


def convene(req: Request, start: Path | str = ".", echo: Echo = print) -> Convened:
    ws = open_workspace(start)
    with ws.ledger() as ledger, contextlib.ExitStack() as sat:
        left.record_left(ws.paths.common_dir, ledger, echo)  # T6: paid for, and counted
        view = ledger.require()
        p = prepare(ws, view, req)
        out = outdir.claim(req.out or ws.paths.common_dir / left.FOLDER / p.info.run_id)
        sat.enter_context(left.sitting(out.path))  # a kill leaves it to the next convening
        for line in report.routing_lines(p.info, p.routing):
            echo(line)
        rec = Recorder(out, p.info)
        rec.put("envelope.yaml", ledger_records.envelope_record(p.info, p.envelope))
        out.write("envelope.txt", p.envelope.body.encode("utf-8"))
        rec.put("routing.yaml", ledger_records.routing_record(p.info, p.routing))

        def on_result(result: seating.LensResult) -> seating.LensResult:
            name = f"verdicts/{result.lens}.yaml"
            try:
                rec.put(name, ledger_records.verdict_record(p.info, result, now_iso()))
            except InvalidRecord as exc:
                result = seating.unrecordable(result, str(exc))
                rec.put(name, ledger_records.verdict_record(p.info, result, now_iso()))
            echo(report.result_line(result))
            return result

        results, explosions, checks = sit(ws, p, req, on_result)
        results, checks = mutants.recheck(  # T9: claimed surviving mutants are re-run
            mutants.harness(ws.paths.root, p.change.head, req.tests,
                            ws.config.tribunal.test_timeout, p.envelope),
            results, p.routing.plans, checks, on_result, echo)
        decision, progress = decide(view, p, req, results, checks)
        if checks is not None:
            out.write("mechanical.yaml", yamlio.dumps(checks.to_dict()))
        seated = seated_independence(ws, results)
        rec.put("summary.yaml", ledger_records.summary_record(  # T2: the summary is written last
            p.info, decision, results, progress, checks, p.routing.single_rung, now_iso(),
            seated))
        written = rec.commit(ledger, decision.outcome)
    if explosions:
        lens, exc = explosions[0]
        raise TribunalHold(f"the {lens} seat exploded: {type(exc).__name__}: {exc}", rule="T6",
                           hint=f"verdicts and summary are in {out.path}") from exc
    return Convened(p.info, decision, p.routing, tuple(results), progress, checks, out.path,
                    written.commit, p.envelope, seated.notes())
