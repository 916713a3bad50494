"""Plain-text lines for a convening: the routing table (T4: printed before any dispatch),
one line per lens as it lands, and the outcome."""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING

from leapgit.records.usage import NOTHING, show, total
from leapgit.tribunal.ledger_records import RunInfo, usage_of
from leapgit.tribunal.routing import Ladder, Routing
from leapgit.tribunal.seating import LensResult

if TYPE_CHECKING:
    from leapgit.tribunal.convene import Convened


_BIDI = {"\u200e", "\u200f", *map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A))}


def _escape(ch: str) -> str:
    if ch in _BIDI or unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp"):
        return ch.encode("unicode_escape").decode("ascii")
    return ch


def printable(text: str) -> str:
    """One terminal line, whatever a juror or a server said: control characters, line
    breaks, lone surrogates and bidi overrides are shown escaped, never acted on."""
    return "".join(_escape(ch) for ch in text) if not text.isprintable() else text


def _ladder(ladder: Ladder) -> str:
    seated = " > ".join(r.id for r in ladder.rungs) or "(none: hold)"
    skipped = "; ".join(f"skip {s.rung}: {s.reason}" for s in ladder.skipped)
    return f"{seated}" + (f"   [{skipped}]" if skipped else "")


def _warnings(routing: Routing) -> list[str]:
    """What loading the config changed in a rung that sits (an endpoint's extra ``/v1``)."""
    ladders = [p.primary for p in routing.plans] + [p.verifier for p in routing.plans
                                                    if p.verifier is not None]
    return list(dict.fromkeys(r.warning for lad in ladders for r in lad.rungs if r.warning))


def routing_lines(info: RunInfo, routing: Routing) -> list[str]:
    out = [f"tribunal {info.run_id} round {info.round}: candidate {info.candidate[:12]} "
           f"tree {info.tree[:12]} envelope {info.envelope_hash[:16]}",
           f"builder family {info.builder.family} (its rungs never sit, T4)"]
    out.extend(f"warning: {w}" for w in _warnings(routing))
    if routing.single_rung:
        out.append("single-rung configuration: recorded as provenance (T3)")
    out.append("routing (lens -> ladder, cheapest first):")
    width = max(len(p.lens.id) for p in routing.plans)
    for p in routing.plans:
        out.append(f"  {p.lens.id:<{width}}  {_ladder(p.primary)}")
        if p.verifier is not None:
            kind = "required" if p.verifier_required else "optional"
            out.append(f"  {'':<{width}}  verifier ({kind}): {_ladder(p.verifier)}")
    if routing.halted:
        out.append(f"HALT: no verifier can sit for {', '.join(routing.halted)}; nothing sent (T2)")
    return [printable(line) for line in out]


def result_line(r: LensResult) -> str:
    rung = r.primary.rung.id if r.primary.rung else "-"
    return printable(f"  {r.outcome:<6} {r.lens:<20} via {rung}: {r.reason}{_causes(r)}")


def _causes(r: LensResult) -> str:
    """Why each rung that gave no verdict gave none (T6: connection refused, a timeout, an
    HTTP status), on the terminal and not only in the verdict file; a bad answer's cause is
    the reason itself."""
    seats = [s for s in (r.primary, r.verifier) if s is not None]
    causes = [f"{a.rung} {a.result.replace('_', ' ')}: {a.detail[:_CAUSE]}"
              for s in seats for a in s.attempts if a.result not in ("answered", "bad_answer")]
    return "".join(f"; {c}" for c in causes)


_CAUSE = 240  # characters of one rung's cause: a line per lens stays readable


def outcome_lines(c: Convened) -> list[str]:
    out = []
    for lens, result in ((r.lens, r) for r in c.results):
        for f in (x for s in (result.primary, result.verifier) if s and s.verdict
                  for x in s.verdict.findings):
            mark = "" if f.supported else " [unsupported: evidence not in the envelope, T9]"
            out.append(f"  finding {lens}/{f.severity} {f.file or '?'}: {f.claim}{mark}")
    p = c.progress
    out.append(f"findings: {len(p.new)} new, {len(p.recurring)} recurring, "
               f"{len(p.resolved)} resolved (new per round: {', '.join(map(str, p.new_counts))})")
    if c.mechanical is not None:
        for check in c.mechanical.checks:
            out.append(f"  check {check.result:<7} {check.name}: {check.detail}")
    out.extend(f"independence: {note}" for note in c.independence)  # issue 17, T3
    unverified = [r.lens for r in c.results if r.unverified]
    if unverified:
        out.append(f"UNVERIFIED: {', '.join(unverified)} (optional verifier did not answer, T2)")
    spent = total(usage_of(r) for r in c.results) or NOTHING  # as the summary records it
    out.append(f"spent on jurors: {show(spent)}")
    out.append(f"outcome: {c.decision.outcome} ({c.decision.reason})")
    out.append(f"written: {c.out} (0600); ledger commit {c.ledger_commit[:12]}")
    return [printable(line) for line in out]
