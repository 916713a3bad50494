"""The tribunal's ledger records (envelope, routing, verdict, summary), as plain data for
``yamlio.dumps``. Every one carries the run id, the round, the candidate commit, its tree
id and the envelope hash (L7: the same hash in every record)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from leapgit.tribunal.convergence import Progress, fingerprint
from leapgit.tribunal.envelope import Envelope
from leapgit.tribunal.identity import Builder
from leapgit.tribunal.mechanical import Mechanical
from leapgit.tribunal.routing import Routing
from leapgit.tribunal.seating import LensResult, Seat
from leapgit.tribunal.tally import Decision


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


def _head(kind: str, info: RunInfo) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": kind, "format": 1, "run_id": info.run_id, "round": info.round}
    if info.slice:
        out["slice"] = info.slice
    if info.ball:
        out["ball"] = info.ball
    out.update(candidate=info.candidate, tree=info.tree, envelope_hash=info.envelope_hash)
    return out


def envelope_record(info: RunInfo, env: Envelope) -> dict[str, Any]:
    return {**_head("envelope", info), "base": env.base, "intent": env.contract.intent,
            "criteria": env.contract.criteria, "tokens_estimate": env.tokens,
            "files": [f.to_dict() for f in env.files]}


def routing_record(info: RunInfo, routing: Routing) -> dict[str, Any]:
    return {**_head("routing", info), "builder_family": info.builder.family, **routing.to_dict()}


def findings_of(result: LensResult) -> list[dict[str, Any]]:
    out = []
    for seat, role in ((result.primary, "primary"), (result.verifier, "verifier")):
        if seat is None or seat.verdict is None:
            continue
        for f in seat.verdict.findings:
            out.append({"fingerprint": fingerprint(result.lens, f.file, f.claim),
                        "lens": result.lens, "seat": role, **f.to_dict()})
    return out


def _seat(seat: Seat) -> dict[str, Any]:
    out: dict[str, Any] = {"outcome": seat.outcome, "reason": seat.reason,
                           "rung": seat.rung.id if seat.rung else None}
    if seat.rung is not None:
        out.update(provider=seat.rung.provider, family=seat.rung.family,
                   model=seat.rung.model or " ".join(seat.rung.command))
    if seat.verdict is not None:
        out.update(said=seat.verdict.said, bare=seat.verdict.bare)
    out["attempts"] = [a.to_dict() for a in seat.attempts]
    return out


def verdict_record(info: RunInfo, result: LensResult, recorded_at: str) -> dict[str, Any]:
    out = {**_head("verdict", info), "lens": result.lens, "outcome": result.outcome,
           "reason": result.reason, "unverified": result.unverified, "halted": result.halted,
           "bare": result.bare, "seat": _seat(result.primary),
           "findings": findings_of(result)}
    if result.verifier is not None:
        out["verifier"] = _seat(result.verifier)
    out["recorded_at"] = recorded_at
    return out


def summary_record(info: RunInfo, decision: Decision, results: list[LensResult],
                   progress: Progress, mechanical: Mechanical | None, single_rung: bool,
                   recorded_at: str) -> dict[str, Any]:
    findings = [f for r in results for f in findings_of(r)]
    new = set(progress.new)
    return {
        **_head("summary", info), "series": info.series, "base": info.base,
        "builder_family": info.builder.family, "builder": info.builder.to_dict(),
        "outcome": decision.outcome, "reason": decision.reason,
        "halted": decision.halted, "escalated": decision.escalated, "single_rung": single_rung,
        "lenses": {r.lens: r.outcome for r in results},
        "unverified": [r.lens for r in results if r.unverified],
        "findings": [{**f, "status": "new" if f["fingerprint"] in new else "recurring"}
                     for f in findings],
        "new_count": len(progress.new), "resolved": list(progress.resolved),
        "new_counts": list(progress.new_counts), "oscillating": list(progress.oscillating),
        "mechanical": mechanical.to_dict() if mechanical else None,
        "recorded_at": recorded_at,
    }
