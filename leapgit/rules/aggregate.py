"""The aggregate review's refusal, judged (L8, T7.6): when the blind review of a slice's
merged result refuses it, its findings go back to the builders of the balls they name,
as a ball tribunal's findings do, instead of stopping the slice for good.

An aggregate review is a run of the slice's own series (``merge:<slice>``), recorded under
the slice (``slices/<s>/tribunal/<run>``; merges before this kept it at ``tribunal/<run>``).

- ``blame``: the balls a refusal's findings name. Only supported findings count (T9: one
  whose quoted evidence the envelope never held is the envelope's problem); scopes are
  disjoint (L4), so a finding's file has one owner; a finding that names no file (or the
  review's contract) is every ball's; one on a file no ball's scope holds is no builder's
  to fix (the slice is cut again).
- An *aggregate score* of a ball is a score of -1 with the tribunal's failed step
  (``rules.episodes.answers_findings``) and rule L8 that grades the claim its standing pass
  graded, whose ``run_id`` is a refusing aggregate run of the slice that came after that
  pass, or that refused this very candidate before (the same bytes are not reviewed again,
  T6). It voids the pass as any later score does, and the builder's next round answers the
  findings blamed on the ball (``findings``). ``score_problems`` is what the server, `leap
  merge` and the audit ask of one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from leapgit.ledger import history, layout, query
from leapgit.records.tribunal_run import SummaryRecord
from leapgit.rules.episodes import answers_findings

if TYPE_CHECKING:
    from leapgit.ledger.view import LedgerView
    from leapgit.records.scoring import ScoreRecord
    from leapgit.records.tribunal_run import FindingRecord
    from leapgit.records.types import BallRecord

RULE = "L8"


def series(slice_id: str) -> str:
    return f"merge:{slice_id}"


class Blame(NamedTuple):
    balls: dict[str, list[FindingRecord]]  # each ball's share, in the balls' order
    unowned: tuple[str, ...]  # files findings name that no ball's scope holds


def blame(balls: Sequence[BallRecord], findings: Sequence[FindingRecord]) -> Blame:
    """Each ball's share of the findings to answer (T7.6: supported blocker, major and
    minor findings; an info note is a passing juror's observation)."""
    asked = [f for f in findings if f.severity != "info" and f.supported]
    owner = {path: b.ball for b in balls for path in b.paths}
    out: dict[str, list[FindingRecord]] = {}
    unowned: dict[str, None] = {}
    from leapgit.tribunal.envelope import CONTRACT

    for finding in asked:
        named = owner.get(finding.file)
        if finding.file and finding.file != CONTRACT and named is None:
            unowned[finding.file] = None
            continue
        for b in balls:
            if named in (None, b.ball):
                out.setdefault(b.ball, []).append(finding)
    return Blame({b.ball: out[b.ball] for b in balls if b.ball in out}, tuple(unowned))


def summary(view: LedgerView, run_id: str, slice_id: str) -> SummaryRecord | None:
    """An aggregate run's summary: under the slice, or where merges before kept it."""
    for folder in (layout.tribunal_dir(run_id, slice_id), layout.tribunal_dir(run_id)):
        path = f"{folder}/summary.yaml"
        if view.exists(path):
            return view.record(path, SummaryRecord)
    return None


def refusing(view: LedgerView, slice_id: str, run_id: str | None) -> SummaryRecord | None:
    """``run_id``'s summary, when it is a refusing aggregate review of ``slice_id``."""
    path = f"{layout.tribunal_dir(run_id or '', slice_id)}/summary.yaml"
    found = view.record(path, SummaryRecord) if run_id and view.exists(path) else None
    return found if found is not None and found.series == series(slice_id) and \
        found.outcome == "refuse" else None


def passed_tree(view: LedgerView, slice_id: str, tree: str, base: str, family: str
                ) -> str | None:
    """The aggregate run of the slice that passed the merged ``tree``, reviewed from
    ``base``, for a builder of ``family``, and that no merge landed on yet, if any (T6: the
    same bytes are not reviewed, and paid for, again; a merge stopped after its review, by
    an outage or a kill, lands on it). A respec since the review (other goals: other
    criteria) asks for a review of its own."""
    folder = layout.tribunal_dir("x", slice_id).rsplit("/", 1)[0]
    landed = {m.aggregate_run for m in history.merge_records(view, slice_id)}
    balls = [query.load_ball(view, slice_id, b) for b in query.load_slice(view, slice_id).balls]
    for run in reversed(view.list(folder)):
        found = summary(view, run, slice_id)
        if found is None or run in landed or found.series != series(slice_id) or \
                found.outcome != "pass" or found.tree != tree or found.base != base or \
                found.builder_family.casefold() != family.casefold():
            continue
        if all(b.recorded_at is None or b.recorded_at <= found.recorded_at for b in balls):
            return run
    return None


def refused_tree(view: LedgerView, slice_id: str, tree: str) -> str | None:
    """The aggregate run of the slice that refused the merged ``tree`` already, if any
    (T6: the same bytes are not reviewed again)."""
    folder = layout.tribunal_dir("x", slice_id).rsplit("/", 1)[0]
    for run in reversed(view.list(folder)):
        found = refusing(view, slice_id, run)
        if found is not None and found.tree == tree:
            return run
    return None


def findings(view: LedgerView, rec: ScoreRecord) -> list[FindingRecord] | None:
    """The findings an aggregate score blames on its ball; None when ``rec``'s run is no
    aggregate review of its slice (a ball's own score)."""
    found = refusing(view, rec.slice, rec.run_id)
    if found is None:
        return None
    balls = [query.load_ball(view, rec.slice, b)
             for b in query.load_slice(view, rec.slice).balls]
    return blame(balls, found.findings).balls.get(rec.ball, [])


def score_problems(view: LedgerView, rec: ScoreRecord, standing: ScoreRecord | None
                   ) -> list[str] | None:
    """Why ``rec`` is no aggregate score that may void ``standing``, its ball's pass; None
    when it names no aggregate review at all (a ball's own score)."""
    if rec.rule != RULE or not rec.run_id:
        return None
    found = refusing(view, rec.slice, rec.run_id)
    if found is None:
        return [f"run {rec.run_id} is no refusing aggregate review of slice {rec.slice}"]
    out = []
    if not answers_findings(rec):
        out.append("an aggregate score refuses (-1) with the tribunal's failed step")
    if not findings(view, rec):
        out.append(f"the aggregate run {rec.run_id} blames no finding on {rec.slice}/"
                   f"{rec.ball}")
    if standing is None or standing.commit != rec.commit:
        out.append("an aggregate score grades the claim of the ball's standing pass")
    elif found.recorded_at < standing.recorded_at and not any(
            s.rule == RULE and s.run_id == rec.run_id and s.candidate == standing.candidate
            for s in history.scores(view, rec.slice, rec.ball) if s.score < rec.score):
        out.append(f"the aggregate run {rec.run_id} came before the pass it would void "
                   f"(score {standing.score}), and refused no earlier pass of its candidate")
    return out
