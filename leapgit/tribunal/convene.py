"""`leap tribunal convene`, start to end: build the envelope (T5), route (T2-T4), stamp the
output folder (T6), seat every lens at once (T6, T8) beside the mechanical checks (T7), decide
(T6, T7), measure convergence (T9), write the summary last and commit the record set."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from leapgit.records import yamlio
from leapgit.records.tribunal import TribunalConfig
from leapgit.timeutil import now_iso
from leapgit.tribunal import changes, convergence, envelope, mechanical, outdir, prompt
from leapgit.tribunal import provenance, records, routing, seating, tally, target, worktree
from leapgit.tribunal.errors import TribunalHold
from leapgit.tribunal.identity import Builder, parse_builder
from leapgit.tribunal.lenses import LENSES
from leapgit.tribunal.redaction import Identities
from leapgit.workspace import Workspace, open_workspace

Echo = Callable[[str], None]


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
    round: int = 1
    tests: str | None = None
    red: str | None = None


@dataclass(frozen=True)
class Convened:
    info: records.RunInfo
    decision: tally.Decision
    routing: routing.Routing
    results: tuple[seating.LensResult, ...]
    progress: convergence.Progress
    mechanical: mechanical.Mechanical | None
    out: Path
    ledger_commit: str
    envelope: envelope.Envelope


def new_run_id() -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return f"t-{stamp}-{secrets.token_hex(3)}"


def identities(builder: Builder, cfg: TribunalConfig, authors: list[tuple[str, str]]) -> Identities:
    tokens = [("builder model id", builder.model), ("builder session id", builder.session)]
    tokens += [("configured model id", m) for m in cfg.model_ids]
    return Identities(tuple(tokens + authors))


def _not_dispatched(plans: tuple[routing.LensPlan, ...]) -> list[seating.LensResult]:
    out = []
    for plan in plans:
        seat = seating.Seat("hold", "not dispatched: HALT before any seat (T2)")
        out.append(seating.LensResult(plan.lens.id, "hold", seat.reason, seat, halted=plan.halted))
    return out


def _checks(ws: Workspace, change: changes.Change, req: Request) -> mechanical.Mechanical:
    from leapgit.errors import LeapError

    assert req.tests is not None
    red = changes.resolve(req.red, ws.paths.root, "--red") if req.red else None
    try:
        return mechanical.run_checks(ws.paths.root, change, req.tests, red,
                                     ws.config.tribunal.test_timeout)
    except LeapError as exc:  # a harness that cannot run is INVALID, never a pass (T9)
        return mechanical.Mechanical((mechanical.Check("harness", "invalid", str(exc)),))


async def _sit(ws: Workspace, plans: tuple[routing.LensPlan, ...], prompts: dict[str, prompt.Prompt],
               env: envelope.Envelope, juror_tree: Path | None, on_result: Callable[..., None],
               checks: Callable[[], mechanical.Mechanical] | None,
               ) -> tuple[list[seating.LensResult], list[tuple[str, BaseException]],
                          mechanical.Mechanical | None]:
    import httpx

    from leapgit.tribunal.providers.base import SeatContext

    cfg = ws.config.tribunal
    longest = max([r.timeout for r in cfg.rungs] + [cfg.timeout])
    async with httpx.AsyncClient(timeout=httpx.Timeout(longest)) as client:
        ctx = SeatContext(client, cfg.max_answer_bytes, juror_tree=juror_tree,
                          candidate=env.candidate)
        job = asyncio.ensure_future(asyncio.to_thread(checks)) if checks else None
        results, explosions = await seating.seat_all(plans, prompts, env, ctx, on_result)
        return results, explosions, (await job if job else None)


def _needs_tree(plan: routing.Routing) -> bool:
    ladders = [p.primary for p in plan.plans] + [p.verifier for p in plan.plans if p.verifier]
    return any(r.provider == "command" for lad in ladders for r in lad.rungs)


def convene(req: Request, start: Path | str = ".", echo: Echo = print) -> Convened:
    from leapgit.tribunal import report

    ws = open_workspace(start)
    root, cfg = ws.paths.root, ws.config.tribunal
    builder = parse_builder(req.builder)
    contract = envelope.check_contract(req.intent, req.criteria)
    with ws.ledger() as ledger:
        view = ledger.require()
        tgt = target.choose(root, view, ws.config, req.base, req.head, req.slice, req.ball)
        change = changes.read_change(root, tgt.base, tgt.head)
        if not change.touched:
            from leapgit.errors import UsageError
            raise UsageError(f"{tgt.base[:12]}..{tgt.head[:12]} touches no file: nothing to "
                             "grade", field="--head")
        who = identities(builder, cfg, changes.authors(root, tgt.base, tgt.head))
        env = envelope.build(root, change, contract, who, cfg.tests)
        run_id = new_run_id()
        prompts = {lens.id: prompt.build(run_id, lens, env.body) for lens in LENSES}
        tokens = {k: envelope.estimate_tokens(p.text) for k, p in prompts.items()}
        plan = routing.plan(cfg, builder, tokens, os.environ)
        out = outdir.claim(req.out or ws.paths.common_dir / "leap-tribunal" / run_id)
        info = records.RunInfo(run_id, req.round, tgt.series, tgt.base, tgt.head, change.tree,
                               env.hash, builder, tgt.slice, tgt.ball)
        for line in report.routing_lines(info, plan):
            echo(line)
        written = [records.envelope_record(info, env), records.routing_record(info, plan)]
        out.write("envelope.yaml", yamlio.dumps(written[0]))
        out.write("envelope.txt", env.body.encode("utf-8"))
        out.write("routing.yaml", yamlio.dumps(written[1]))

        def on_result(result: seating.LensResult) -> None:
            out.write(f"verdicts/{result.lens}.yaml",
                      yamlio.dumps(records.verdict_record(info, result, now_iso())))
            echo(report.result_line(result))

        explosions: list[tuple[str, BaseException]] = []
        checks = None
        if plan.halted:
            results = _not_dispatched(plan.plans)
            for result in results:
                on_result(result)
        else:
            job = (lambda: _checks(ws, change, req)) if req.tests else None
            with contextlib.ExitStack() as stack:
                tree = stack.enter_context(worktree.temporary(
                    root, tgt.head, read_only=True, prefix="leap-juror-")) \
                    if _needs_tree(plan) else None
                results, explosions, checks = asyncio.run(
                    _sit(ws, plan.plans, prompts, env, tree, on_result, job))
            if tgt.reread() != tgt.head:
                results = [seating.annul(r, "the candidate moved while the seats sat")
                           for r in results]
                for result in results:
                    on_result(result)
        decision = tally.decide(results, checks.outcome if checks else None,
                                checks.reason if checks else "")
        fingerprints = [f["fingerprint"] for r in results for f in records.findings_of(r)]
        past = provenance.past_rounds(view, tgt.series, req.round, tgt.slice, tgt.ball)
        progress = convergence.progress(fingerprints, past, decision.outcome == "pass")
        if progress.escalate:
            decision = tally.Decision(
                "hold", "escalation: NEW findings flat or rising two rounds in a row "
                f"({', '.join(map(str, progress.new_counts))}); oscillating: "
                f"{', '.join(progress.oscillating or progress.new) or 'none'} (T9)",
                escalated=True)
        written += [records.verdict_record(info, r, now_iso()) for r in results]
        if checks is not None:
            out.write("mechanical.yaml", yamlio.dumps(checks.to_dict()))
        summary = records.summary_record(info, decision, results, progress, checks,
                                         plan.single_rung, now_iso())
        out.write("summary.yaml", yamlio.dumps(summary))  # T2: the summary is written last
        commit = provenance.commit(ledger, info, written + [summary], decision.outcome)
    if explosions:
        lens, exc = explosions[0]
        raise TribunalHold(f"the {lens} seat exploded: {type(exc).__name__}: {exc}", rule="T6",
                           hint=f"verdicts and summary are in {out.path}") from exc
    return Convened(info, decision, plan, tuple(results), progress, checks, out.path,
                    commit.commit, env)
