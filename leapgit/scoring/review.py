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
from leapgit.ledger import layout
from leapgit.records.scoring import RedRecord, Reviewer, Step
from leapgit.records.types import BallRecord
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
    from leapgit.tribunal.convene import Request, convene

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
    summary = f"{folder}/summary.yaml"

    def said(step: Step) -> Reviewed:
        return Reviewed(step, run_id, done.info.tree, reviewers, verdicts, summary)

    outcome, reason = done.decision.outcome, done.decision.reason
    if done.mechanical is not None and done.mechanical.invalid:
        # T9: a harness that cannot judge refuses every verdict, but the candidate is not
        # at fault: a hold, never a -1 charged to the builder
        return said(Step("tribunal", "hold", f"run {run_id}: the harness is INVALID: "
                         f"{done.mechanical.reason}", "T9"))
    if outcome == "refuse":
        return said(Step("tribunal", "fail", f"run {run_id}: {reason}",
                         "T7" if "mechanical" in reason else "T6"))
    if outcome != "pass":  # T9: an escalation is a person's; it ends the episode as a hold
        return said(Step("tribunal", "hold", f"run {run_id}: {reason}",
                         "T9" if done.decision.escalated else "T6"))
    others = [r for r in reviewers if r.family.casefold() != builder.family.casefold()]
    if len(others) < MIN_SEATS:
        return said(Step("tribunal", "hold", f"run {run_id}: {len(others)} seat(s) from "
                         f"families other than {builder.family!r}; at least {MIN_SEATS} "
                         "must sit (L7.3)", "L7.3"))
    return said(Step("tribunal", "ok", f"run {run_id}: unanimous pass, {len(others)} "
                     f"seat(s) from other families; {reason}"))
