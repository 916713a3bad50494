"""Score step 4, blind review across model families (L7.3, T1-T9): convene the tribunal on
the candidate with the builder declared (T4 keeps the builder's family off every ladder),
with the mechanical checks (T7: new tests pass, regression not worse than base, fake green
fails, tests unchanged since red). A unanimous pass needs at least two seats that answered
from families other than the builder's; a refuse is -1; a hold is 0."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from leapgit.errors import LeapError
from leapgit.ledger import history, layout
from leapgit.ledger.view import LedgerView
from leapgit.records.scoring import RedRecord, Reviewer, Step
from leapgit.records.tribunal_run import EnvelopeRecord, SummaryRecord, VerdictRecord
from leapgit.records.types import BallRecord
from leapgit.tribunal.convene import Request, convene
from leapgit.tribunal.identity import Builder

MIN_SEATS = 2


@dataclass(frozen=True)
class Reviewed:
    step: Step
    run_id: str | None = None
    tree: str | None = None
    reviewers: tuple[Reviewer, ...] = ()
    verdicts: tuple[str, ...] = ()
    summary: str | None = None


def criteria(ball: BallRecord) -> str:
    return f"{ball.spec.strip()}\nThe proof `{ball.proof}` passes; no test was weakened."


def convene_ball(root: Path, ball: BallRecord, builder: Builder, builder_text: str,
                 red: RedRecord | None, echo: Callable[[str], None],
                 base: str | None = None, head: str | None = None) -> Reviewed:
    if not ball.tests:
        return Reviewed(Step("tribunal", "hold", "the ball declares no `tests` command: the "
                             "mechanical checks (T7) cannot run, and missing proof is never a "
                             "pass", "T7"))
    request = Request(intent=ball.goal, criteria=criteria(ball), builder=builder_text,
                      base=base, head=head, slice=ball.slice, ball=ball.ball,
                      tests=ball.tests,
                      red=red.commit if red else None)
    try:
        done = convene(request, start=root, echo=echo)
    except LeapError as exc:
        rule = exc.problems[0].rule if exc.problems and exc.problems[0].rule else "T6"
        first = exc.problems[0] if exc.problems else None
        why = f"{first.file}: {first.message}" if first and first.file else str(exc)
        return Reviewed(Step("tribunal", "hold", f"the tribunal did not finish: {why}", rule))
    run_id = done.info.run_id
    folder = layout.tribunal_dir(run_id, ball.slice, ball.ball)
    reviewers = tuple(
        Reviewer(r.lens, r.primary.rung.id, r.primary.rung.family, r.primary.rung.model)
        for r in done.results if r.outcome == "pass" and r.primary.rung is not None)
    verdicts = tuple(f"{folder}/verdicts/{r.lens}.yaml" for r in done.results)
    invalid = done.mechanical.reason if done.mechanical is not None and \
        done.mechanical.invalid else None
    return judged(run_id, done.info.tree, reviewers, verdicts, done.decision.outcome,
                  done.decision.reason, invalid, done.decision.escalated, builder, folder)


def judged(run_id: str, tree: str, reviewers: tuple[Reviewer, ...], verdicts: tuple[str, ...],
           outcome: str, reason: str, invalid: str | None, escalated: bool,
           builder: Builder, folder: str) -> Reviewed:
    """The score's step 4 from a convening's outcome: the one judgment, whether the
    jurors sat now or their run is read back (``recorded``)."""
    def said(step: Step) -> Reviewed:
        return Reviewed(step, run_id, tree, reviewers, verdicts, f"{folder}/summary.yaml")

    if invalid is not None:
        # T9: a harness that cannot judge refuses every verdict, but the candidate is not
        # at fault: a hold, never a -1 charged to the builder
        return said(Step("tribunal", "hold", f"run {run_id}: the harness is INVALID: "
                         f"{invalid}", "T9"))
    if outcome == "refuse":
        return said(Step("tribunal", "fail", f"run {run_id}: {reason}",
                         "T7" if "mechanical" in reason else "T6"))
    if outcome != "pass":  # T9: an escalation is a person's; it ends the episode as a hold
        return said(Step("tribunal", "hold", f"run {run_id}: {reason}",
                         "T9" if escalated else "T6"))
    others = [r for r in reviewers if r.family.casefold() != builder.family.casefold()]
    if len(others) < MIN_SEATS:
        return said(Step("tribunal", "hold", f"run {run_id}: {len(others)} seat(s) from "
                         f"families other than {builder.family!r}; at least {MIN_SEATS} "
                         "must sit (L7.3)", "L7.3"))
    return said(Step("tribunal", "ok", f"run {run_id}: unanimous pass, {len(others)} "
                     f"seat(s) from other families; {reason}"))


def recorded(view: LedgerView, ball: BallRecord, builder: Builder, base: str, head: str
             ) -> Reviewed | None:
    """A convening of exactly this candidate, from this base, for this builder, whose
    summary the ledger holds and no score graded yet: a scoring killed after its jurors
    sat and before its score record (L8: written truth). It is read back, never convened
    again: the jurors are not paid twice and T9's series gets no round without a score."""
    root = layout.tribunal_dir("x", ball.slice, ball.ball).rsplit("/", 1)[0]
    graded = {s.run_id for s in history.scores(view, ball.slice, ball.ball)} \
        if history.has(view, ball.slice, ball.ball, "scores") else set()
    found: list[SummaryRecord] = []
    for run in view.list(root):
        if run in graded:
            continue
        summary = view.record(f"{root}/{run}/summary.yaml", SummaryRecord)
        if summary is None or summary.candidate != head or summary.base != base \
                or summary.builder_family.casefold() != builder.family.casefold():
            continue
        # the contract the score convenes on, not a hand-run convening's own criteria
        envelope = view.record(f"{root}/{run}/envelope.yaml", EnvelopeRecord)
        if envelope is not None and envelope.intent == ball.goal.strip() \
                and envelope.criteria == criteria(ball).strip():
            found.append(summary)
    if not found:
        return None
    summary = max(found, key=lambda s: (s.round, s.recorded_at))
    folder = layout.tribunal_dir(summary.run_id, ball.slice, ball.ball)
    verdicts: list[str] = []
    reviewers: list[Reviewer] = []
    for lens in summary.lenses:
        path = f"{folder}/verdicts/{lens.lens}.yaml"
        verdicts.append(path)
        v = view.record(path, VerdictRecord)
        if v is not None and v.outcome == "pass" and v.seat.rung is not None:
            reviewers.append(Reviewer(v.lens, v.seat.rung, v.seat.family or "",
                                      v.seat.model))
    invalid = summary.reason if summary.mechanical is not None and \
        summary.mechanical.invalid else None
    return judged(summary.run_id, summary.tree, tuple(reviewers), tuple(verdicts),
                  summary.outcome, summary.reason, invalid, summary.escalated, builder,
                  folder)
