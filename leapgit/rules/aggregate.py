"""The aggregate review's refusal, judged (L8, T7.6): when the blind review of a slice's
merged result refuses it, its findings go back to the builders of the balls they name,
as a ball tribunal's findings do, instead of stopping the slice for good.

- ``blame``: the balls a refusal's findings name. Scopes are disjoint (L4), so a finding's
  file has one owner; findings that name no ball's file (the merged change as a whole)
  name every ball.
- An *aggregate score* of a ball is a score of -1 (``rules.episodes.answers_findings``) that
  grades the claim its standing pass graded, and whose ``run_id`` is the refusing
  aggregate run (``tribunal/<run>/summary.yaml``). It voids the pass as any later score
  does, and the builder's next round answers the findings blamed on the ball
  (``findings``). ``score_problems`` is what the server, `leap merge` and the audit ask of
  one: the run refused, and blames this ball.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from leapgit.ledger.store import LedgerView
    from leapgit.records.scoring import ScoreRecord
    from leapgit.records.tribunal_run import FindingRecord, SummaryRecord
    from leapgit.records.types import BallRecord


def blame(balls: Sequence[BallRecord], findings: Sequence[FindingRecord]
          ) -> dict[str, list[FindingRecord]]:
    """Each ball's share of the findings to answer (T7.6: blocker, major and minor; an
    info note is a passing juror's observation), in the balls' order; a finding whose
    file no ball holds is every ball's."""
    asked = [f for f in findings if f.severity != "info"]
    owner = {path: b.ball for b in balls for path in b.paths}
    out: dict[str, list[FindingRecord]] = {}
    for finding in asked:
        named = owner.get(finding.file)
        for b in balls:
            if named in (None, b.ball):
                out.setdefault(b.ball, []).append(finding)
    return {b.ball: out[b.ball] for b in balls if b.ball in out}


def summary(view: LedgerView, run_id: str) -> SummaryRecord | None:
    """The aggregate run's summary (an aggregate review is no ball's: ``tribunal/<run>``)."""
    from leapgit.ledger import layout
    from leapgit.records.tribunal_run import SummaryRecord

    return view.record(f"{layout.tribunal_dir(run_id)}/summary.yaml", SummaryRecord)


def findings(view: LedgerView, rec: ScoreRecord) -> list[FindingRecord] | None:
    """The findings an aggregate score blames on its ball; None when ``rec`` is no
    aggregate score (its run is a ball's own)."""
    from leapgit.ledger import query

    found = summary(view, rec.run_id) if rec.run_id else None
    if found is None:
        return None
    balls = [query.load_ball(view, rec.slice, b)
             for b in query.load_slice(view, rec.slice).balls]
    return blame(balls, found.findings).get(rec.ball, [])


def score_problems(view: LedgerView, rec: ScoreRecord) -> list[str] | None:
    """Why ``rec`` is no aggregate score that may void its ball's standing pass; None when
    its run is no aggregate run at all (a ball's own score)."""
    found = summary(view, rec.run_id) if rec.run_id else None
    if found is None:
        return None
    out = []
    if found.outcome != "refuse":
        out.append(f"the aggregate run {rec.run_id} says {found.outcome}, not refuse")
    if rec.outcome != -1:
        out.append(f"an aggregate score refuses (-1), not {rec.outcome}")
    blamed = findings(view, rec)
    if not blamed:
        out.append(f"the aggregate run {rec.run_id} blames no finding on {rec.slice}/"
                   f"{rec.ball}")
    return out
