"""`leap tribunal rungs` (issue 17; T2-T4, T8): the configured rung matrix as routing sees it
now. Per rung its tiers, family, context (and the server's, when a probe measured it), cost
and the latest probe; per lens the ladder in order and every rung that would be skipped, with
why (the builder's family, a missing key, capacity, a failed last probe). Capacity is judged
for the canary: a real envelope is larger, and the convening judges it again."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from leapgit.records.probe import ProbeRecord, RungProbe
from leapgit.records.tribunal_config import Rung, TribunalConfig
from leapgit.records.usage import show
from leapgit.tribunal import canary, routing
from leapgit.tribunal.envelope import estimate_tokens
from leapgit.tribunal.identity import Builder
from leapgit.tribunal.lenses import LENSES
from leapgit.tribunal.probe import new_probe_id
from leapgit.tribunal.report import printable
from leapgit.tribunal.routing import Probes

# no builder declared: nobody's family, model or session (T4 is judged again at convening)
NOBODY = Builder("", "", "")


@dataclass(frozen=True)
class Matrix:
    cfg: TribunalConfig
    routing: routing.Routing
    probes: Probes
    builder: Builder | None

    @property
    def dead(self) -> tuple[str, ...]:
        """The lenses with no rung that may sit, or whose required verifier has none (the
        convening HALTs them, T2): exit 3."""
        return tuple(p.lens.id for p in self.routing.plans if not p.primary.rungs or p.halted)

    @property
    def exit_code(self) -> int:
        return 3 if self.dead else 0


def matrix(cfg: TribunalConfig, builder: Builder | None, env: Mapping[str, str],
           probes: Probes) -> Matrix:
    tokens = estimate_tokens(canary.prompt(new_probe_id(), canary.envelope()).text)
    plan = routing.plan(cfg, builder or NOBODY, {x.id: tokens for x in LENSES}, env, probes)
    return Matrix(cfg, _without(plan, missing_programs(cfg, env.get("PATH"))), probes, builder)


def missing_programs(cfg: TribunalConfig, path: str | None) -> dict[str, str]:
    """Issue 17: the preset rungs whose program is not on PATH, with why: no such rung is
    live (a convening refuses before any seat, ``require_preset_programs``)."""
    return {r.id: f"preset {r.preset!r}: its program {r.command[0]!r} is not on PATH; a "
                  "convening refuses before any seat (T2)"
            for r in cfg.rungs if r.preset and shutil.which(r.command[0], path=path) is None}


def _without(plan: routing.Routing, missing: Mapping[str, str]) -> routing.Routing:
    if not missing:
        return plan

    def prune(lad: routing.Ladder) -> routing.Ladder:
        gone = [r for r in lad.rungs if r.id in missing]
        return routing.Ladder(tuple(r for r in lad.rungs if r.id not in missing),
                              (*(routing.Skip(r.id, missing[r.id], "program") for r in gone),
                               *lad.skipped))

    return replace(plan, plans=tuple(
        replace(p, primary=prune(p.primary),
                verifier=prune(p.verifier) if p.verifier is not None else None)
        for p in plan.plans))


def probe_line(entry: RungProbe) -> str:
    state = "live" if entry.live else "FAILED"
    context = "" if entry.server_context is None else f", server context {entry.server_context}"
    num_ctx = "" if entry.num_ctx is None else f", num_ctx {entry.num_ctx}"
    return (f"{state} {entry.result} in {entry.seconds:.3f}s, json {_yes(entry.json)}, "
            f"footer {_yes(entry.footer)}, caught the defect {_yes(entry.caught)}{context}"
            f"{num_ctx}, tokens {show(entry.usage)}: {entry.detail}")


def _yes(value: bool | None) -> str:
    return "-" if value is None else ("yes" if value else "no")


def skips(m: Matrix) -> dict[str, str]:
    """Why each rung would be skipped now: the same on every ladder that holds it (the
    builder, a key, the canary's capacity and the last probe do not depend on the lens)."""
    out: dict[str, str] = {}
    for p in m.routing.plans:
        for s in p.primary.skipped:
            out.setdefault(s.rung, s.reason)
    return out


def _rung_line(rung: Rung, probes: Probes, skipped: str | None) -> list[str]:
    what = rung.model or " ".join(rung.command)
    cost = routing.measured(rung, probes).cost
    out = [f"  {rung.id}: {rung.provider} {what}, family {rung.family}, tiers "
           f"{','.join(rung.tiers)}, context {rung.context_tokens}, cost {cost:g} "
           f"({rung.cost_source})"]
    probed = probes.get(rung.id)
    out.append(f"      last probe {probed[0]}: {probe_line(probed[1])}" if probed
               else "      last probe: none (`leap tribunal rungs --probe`)")
    if skipped:
        out.append(f"      skipped now: {skipped}")
    return out


def lines(m: Matrix, probed: ProbeRecord | None = None,
          skipped: Mapping[str, str] | None = None, commit: str | None = None) -> list[str]:
    out = []
    if probed is not None:
        out.append(f"probe {probed.probe}: canary lens {probed.lens}, one call per rung")
        out += [f"  {e.rung}: {probe_line(e)}" for e in probed.rungs]
        out += [f"  {rung}: not probed: {why}" for rung, why in (skipped or {}).items()]
        out.append(f"written: tribunal/probes/{probed.probe}.yaml, ledger commit "
                   f"{(commit or '')[:12]}")
    who = f"builder family {m.builder.family}" if m.builder else \
        "no builder declared (--builder or builder.identity): T4 is judged at convening"
    out += [f"rung matrix: {len(m.cfg.rungs)} rung(s); {who}", "rungs:"]
    why = skips(m)
    for rung in m.cfg.rungs:
        out += _rung_line(rung, m.probes, why.get(rung.id))
    out.append("lens -> ladder (cheapest first):")
    width = max(len(p.lens.id) + len(p.lens.tier) + 3 for p in m.routing.plans)
    for p in m.routing.plans:
        seated = " > ".join(r.id for r in p.primary.rungs) or "(none: hold)"
        left = ", ".join(s.rung for s in p.primary.skipped)
        out.append(f"  {f'{p.lens.id} ({p.lens.tier})':<{width}}  {seated}"
                   + (f"   (skipped: {left})" if left else ""))
        if p.verifier is not None:
            out.append(f"  {'':<{width}}  {_verifier_line(p)}")
    out.append(f"no live rung for: {', '.join(m.dead)} (exit 3)" if m.dead
               else "every lens has a live rung")
    return [printable(line) for line in out]


def _verifier_line(p: routing.LensPlan) -> str:
    """T2: the verifier's ladder; none live is a HALT when it is required."""
    assert p.verifier is not None
    none = "(none: HALT)" if p.verifier_required else "(none: UNVERIFIED)"
    seated = " > ".join(r.id for r in p.verifier.rungs) or none
    left = ", ".join(s.rung for s in p.verifier.skipped)
    return (f"verifier{' (required)' if p.verifier_required else ''}: {seated}"
            + (f"   (skipped: {left})" if left else ""))


def _verifier_json(p: routing.LensPlan) -> dict[str, Any] | None:
    if p.verifier is None:
        return None
    return {"required": p.verifier_required, "ladder": [r.id for r in p.verifier.rungs],
            "skipped": [s.rung for s in p.verifier.skipped]}


def to_json(m: Matrix, probed: ProbeRecord | None = None, skipped: Mapping[str, str] | None = None,
            commit: str | None = None) -> dict[str, Any]:
    rungs = []
    for rung in m.cfg.rungs:
        last = m.probes.get(rung.id)
        rungs.append({"id": rung.id, "provider": rung.provider, "family": rung.family,
                      "tiers": list(rung.tiers), "context_tokens": rung.context_tokens,
                      "cost": routing.measured(rung, m.probes).cost,
                      "cost_source": rung.cost_source,
                      "last_probe": {"probe": last[0], **last[1].to_dict()} if last else None})
    lenses = [{"lens": p.lens.id, "tier": p.lens.tier,
               "ladder": [r.id for r in p.primary.rungs],
               "skipped": [{"rung": s.rung, "kind": s.kind, "reason": s.reason}
                           for s in p.primary.skipped],
               "verifier": _verifier_json(p)} for p in m.routing.plans]
    out: dict[str, Any] = {"rungs": rungs, "lenses": lenses, "dead": list(m.dead),
                           "exit_code": m.exit_code}
    if probed is not None:
        out["probe"] = {**probed.to_dict(), "not_probed": dict(skipped or {}), "commit": commit}
    return out
