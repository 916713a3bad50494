"""`leap tribunal report [--json]` (issue 17 item 3): how independent the ledger's jurors
were, per pair of rungs and of families, the effective number of independent jurors (the
estimator: ``tribunal.independence``), how often each lens refused, and which rungs never
refuse."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from leapgit.tribunal import independence as ind
from leapgit.tribunal.report import printable


@dataclass(frozen=True)
class Report:
    history: ind.History
    rung_pairs: tuple[ind.Pair, ...]
    family_pairs: tuple[ind.Pair, ...]
    rungs: ind.Effective
    families: ind.Effective
    refusals: tuple[ind.LensRefusals, ...]
    never_refuse: tuple[str, ...]


def build(h: ind.History) -> Report:
    rungs, families = h.by("rung"), h.by("family")
    return Report(h, tuple(ind.pairs(rungs)), tuple(ind.pairs(families)),
                  ind.effective(rungs, rungs), ind.effective(families, families),
                  tuple(ind.refusals(h)), tuple(ind.never_refuse(h)))


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _pair(p: ind.Pair) -> str:
    return (f"  {p.a} ~ {p.b}: {p.shared} shared envelope(s), agree {p.agree} "
            f"({_num(p.agreement)}), phi {_num(p.phi)}")


def _effective(name: str, e: ind.Effective) -> str:
    if e.value is None:
        return f"effective independent {name}: unmeasured ({e.why})"
    left = f"; never varied, left out: {', '.join(e.constant)}" if e.constant else ""
    return f"effective independent {name}: {e.value:g} of {len(e.jurors)}{left}"


def lines(r: Report) -> list[str]:
    h = r.history
    out = [f"tribunal report: {h.runs} run(s), {len(h.verdicts)} verdict(s), {len(h.votes)} "
           f"vote(s) by {len(h.by('rung'))} rung(s) of {len(h.by('family'))} family(ies)",
           "rungs (agreement on the same envelope; phi corrects it for chance):"]
    out += [_pair(p) for p in r.rung_pairs] or ["  (no pair of rungs)"]
    out.append("families:")
    out += [_pair(p) for p in r.family_pairs] or ["  (no pair of families)"]
    out += [_effective("rungs", r.rungs), _effective("families", r.families),
            "refusals per lens:"]
    out += [f"  {x.lens}: refused {x.refused} of {x.verdicts} verdict(s) "
            f"({_num(x.refused / x.verdicts if x.verdicts else None)}), held {x.held}"
            for x in r.refusals] or ["  (no verdict)"]
    out.append(f"never refuse: {', '.join(r.never_refuse) or 'none'}")
    return [printable(line) for line in out]


def _pair_json(p: ind.Pair) -> dict[str, Any]:
    return {"a": p.a, "b": p.b, "shared": p.shared, "agree": p.agree,
            "agreement": p.agreement, "phi": p.phi}


def _effective_json(e: ind.Effective) -> dict[str, Any]:
    return {"value": e.value, "jurors": list(e.jurors), "constant": list(e.constant),
            "why": e.why or None}


def to_json(r: Report) -> dict[str, Any]:
    return {
        "runs": r.history.runs, "verdicts": len(r.history.verdicts),
        "votes": len(r.history.votes), "min_shared": ind.MIN_SHARED,
        "rung_pairs": [_pair_json(p) for p in r.rung_pairs],
        "family_pairs": [_pair_json(p) for p in r.family_pairs],
        "effective_rungs": _effective_json(r.rungs),
        "effective_families": _effective_json(r.families),
        "refusals": [{"lens": x.lens, "verdicts": x.verdicts, "refused": x.refused,
                      "held": x.held} for x in r.refusals],
        "never_refuse": list(r.never_refuse),
    }
