"""T2-T4: per lens, the ladder of rungs that may sit, cheapest first, and every rung that
may not, with why. Decided before any dispatch, so a builder-family rung is refused loudly
on every ladder before anything is sent (T4)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeAlias

from leapgit.errors import UsageError
from leapgit.records.tribunal_config import CONFIG_SOURCE, Rung, TribunalConfig
from leapgit.tribunal.identity import Builder
from leapgit.tribunal.lenses import LENSES, Lens

if TYPE_CHECKING:
    from leapgit.records.probe import RungProbe


@dataclass(frozen=True)
class Skip:
    rung: str
    reason: str
    kind: str  # builder | api_key | probe | capacity


@dataclass(frozen=True)
class Ladder:
    rungs: tuple[Rung, ...]
    skipped: tuple[Skip, ...]


@dataclass(frozen=True)
class LensPlan:
    lens: Lens
    primary: Ladder
    verifier: Ladder | None = None
    verifier_required: bool = False

    @property
    def halted(self) -> bool:
        """T2: a required verifier with no rung that may sit is a HALT."""
        return self.verifier_required and not (self.verifier and self.verifier.rungs)


@dataclass(frozen=True)
class Routing:
    plans: tuple[LensPlan, ...]
    single_rung: bool  # T3: recorded as provenance

    def plan(self, lens_id: str) -> LensPlan:
        return next(p for p in self.plans if p.lens.id == lens_id)

    @property
    def halted(self) -> tuple[str, ...]:
        return tuple(p.lens.id for p in self.plans if p.halted)


def model_key(model: str) -> str:
    """T4: one model however it is spelled: ``Org/Llama3:latest`` and ``llama3`` are one
    (a tag or a provider prefix never makes the builder's model another juror)."""
    return model.strip().casefold().rsplit("/", 1)[-1].split(":", 1)[0]


def _same_model(a: str, b: str) -> bool:
    key = model_key(a)
    return a == b or (bool(key) and key == model_key(b))


def route(rung: Rung) -> tuple[str, ...]:
    """Who actually answers: the same model on the same endpoint (or the same command) is
    one juror, whatever the rung is called."""
    if rung.provider == "command":
        return ("command", *rung.command)
    model = (rung.model or "").strip().casefold()
    return ("model", rung.endpoint or "", model.removesuffix(":latest"))


def same_route(a: Rung, b: Rung) -> bool:
    return a.id == b.id or route(a) == route(b)


def exclusion(rung: Rung, builder: Builder) -> str | None:
    """T4: the builder's family, session or model never sits."""
    if rung.family.casefold() == builder.family.casefold():
        return f"family {rung.family!r} is the builder's family (T4)"
    if rung.session and rung.session == builder.session:
        return "resumes the builder's session (T4)"
    if rung.model and _same_model(rung.model, builder.model):
        return f"model {rung.model!r} is the builder's model (T4)"
    return None


# rung id -> (probe id, its latest probe of the rung's current route)
Probes: TypeAlias = Mapping[str, "tuple[str, RungProbe]"]


def skip_reason(rung: Rung, builder: Builder, tokens: int, env: Mapping[str, str],
                probes: Probes | None = None) -> Skip | None:
    excluded = exclusion(rung, builder)
    if excluded:
        return Skip(rung.id, excluded, "builder")
    if rung.api_key_env and not env.get(rung.api_key_env):
        return Skip(rung.id, f"${rung.api_key_env} is not set", "api_key")
    probed = (probes or {}).get(rung.id)
    failed = probe_failure(rung, probed[1]) if probed is not None else None
    if probed is not None and failed is not None:
        # T2: availability is measured; a rung that failed its last probe does not sit
        return Skip(rung.id, f"failed its last probe {probed[0]}: {failed}", "probe")
    needed = tokens + rung.max_output_tokens
    if needed > rung.context_tokens:
        # T6: refuse before sending what does not fit; a capacity rejection, walk on
        return Skip(rung.id, f"capacity: needs ~{needed} tokens with the answer, holds "
                    f"{rung.context_tokens} (T6)", "capacity")
    return None


def probe_failure(rung: Rung, probed: RungProbe) -> str | None:
    """Why the rung, as configured now, fails its last probe, or None. The context the
    server reported is judged against the rung's ``context_tokens`` now (T8: capacity is
    measured): raised past it, a live rung fails; lowered to it, a rung that failed only for
    that (it gave a valid verdict) is live."""
    held = probed.server_context
    if held is not None and held < rung.context_tokens:
        return (f"capacity: the server reports a context of {held} tokens (/api/show), the "
                f"rung declares context_tokens {rung.context_tokens} (T8)")
    if probed.live or (probed.result == "capacity" and probed.said is not None
                       and held is not None):
        return None
    return f"{probed.result}: {probed.detail}"


def measured(rung: Rung, probes: Probes | None) -> Rung:
    """``cost_source: measured``: the rung's cost is its latest live probe's latency in
    seconds, its reported tokens breaking ties (a millionth a token); unprobed, the
    declared cost stands."""
    probed = (probes or {}).get(rung.id)
    if rung.cost_source != "measured" or probed is None or probe_failure(rung, probed[1]):
        return rung
    spent = probed[1].usage
    tokens = spent.tokens_in + spent.tokens_out if spent else 0
    return replace(rung, cost=round(probed[1].seconds + tokens / 1e6, 6))


def ladder(candidates: list[Rung], builder: Builder, tokens: int,
           env: Mapping[str, str], probes: Probes | None = None) -> Ladder:
    # T2: cheapest measured-sufficient first; ties keep the configured order
    priced = [measured(r, probes) for r in candidates]
    ordered = sorted(enumerate(priced), key=lambda item: (item[1].cost, item[0]))
    rungs, skipped = [], []
    for _, rung in ordered:
        skip = skip_reason(rung, builder, tokens, env, probes)
        if skip:
            skipped.append(skip)
        else:
            rungs.append(rung)
    return Ladder(tuple(rungs), tuple(skipped))


def plan(cfg: TribunalConfig, builder: Builder, tokens: Mapping[str, int],
         env: Mapping[str, str], probes: Probes | None = None) -> Routing:
    if not cfg.rungs:
        raise UsageError("no rungs are configured, so no juror can sit", file=CONFIG_SOURCE,
                         field="tribunal.rungs", rule="T2",
                         hint="add at least one rung (README, \"Tribunal\")")
    plans = []
    for lens in LENSES:  # T1: eight seats, one lens each, routed by the lens's tier
        serving = [r for r in cfg.rungs if lens.tier in r.tiers]
        primary = ladder(serving, builder, tokens[lens.id], env, probes)
        spec = cfg.verifier(lens.id)
        verifier = None
        if spec is not None:
            # T2: a verifier is another juror; the seat checks the rung the primary ends on
            first = primary.rungs[:1]
            chosen = [cfg.rung(r) for r in spec.rungs
                      if not any(same_route(cfg.rung(r), f) for f in first)]
            verifier = ladder(chosen, builder, tokens[lens.id], env, probes)
        plans.append(LensPlan(lens, primary, verifier, bool(spec and spec.required)))
    return Routing(tuple(plans), single_rung=len(_seatable(plans)) == 1)


def _seatable(plans: list[LensPlan]) -> set[tuple[str, ...]]:
    """T3: the routes that may sit after every skip (builder, API key, capacity): what is
    configured but can never sit gives no independence."""
    ladders = [p.primary for p in plans] + [p.verifier for p in plans if p.verifier]
    return {route(r) for lad in ladders for r in lad.rungs}
