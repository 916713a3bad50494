"""The next step of each ball, read from the ledger alone (L8: written truth only).

``next_step`` looks at where a ball stands (``rules.readiness``), at its reds, its current
episode and its latest score, and names the one thing `leap run` does next for it: record a
red, throw it, let its builder work, score its claim, resume it, or stop on it with the
reason and the command a person runs. It keeps nothing: after a crash the same ledger gives
the same step, so no recorded step is repeated and no round is spent twice."""

from __future__ import annotations

from typing import Literal, NamedTuple

from leapgit.errors import EXIT_HOLD, EXIT_RULE
from leapgit.ledger import history, layout
from leapgit.ledger.view import LedgerView
from leapgit.records.scoring import ScoreRecord
from leapgit.records.tribunal_run import SummaryRecord, VerdictRecord
from leapgit.rules.episodes import (
    Episode,
    answers_findings,
    escalated,
    findings_to_answer,
    held_by_builder,
    stopped_by_leap,
    unscored_claim,
)
from leapgit.rules.readiness import BallStanding

Kind = Literal["done", "wait", "red", "finding_red", "throw", "build", "score", "resume",
               "stop"]


class Step(NamedTuple):
    kind: Kind
    ball: str
    wave: int
    reason: str = ""
    exit_code: int = 0  # a stop: EXIT_RULE (a refuse) or EXIT_HOLD (a hold, an escalation)
    hint: str | None = None
    escalated: bool = False
    score: int | None = None  # finding_red: the score whose findings become tests (T7.6)
    details: tuple[str, ...] = ()  # a stop: what the failing command printed last


def next_step(view: LedgerView, slice_id: str, s: BallStanding, round_cap: int,
              has_author: bool, resume_holds: bool) -> Step:
    ball, wave = s.ball, s.wave
    v = s.verdict
    if v == "passed":
        return Step("done", ball, wave, "passed")
    if v == "waiting":
        return Step("wait", ball, wave, s.why())
    if v == "blocked":  # L5: a refused ancestor blocks it; its repair leads on
        return Step("stop", ball, wave, s.why(), EXIT_RULE,
                    f"repair {s.by} with `leap ball respec {slice_id} {s.by} FILE`, then "
                    f"`leap run {slice_id}` throws them again")
    if v == "held" and s.restack:  # L5: its dependency passed again with other bytes
        return Step("throw", ball, wave, f"restacked on the new pass of {s.by}: its red is "
                    "carried there, and it is thrown again")
    if v == "held":
        return Step("stop", ball, wave, s.why(), EXIT_HOLD)
    if v == "refused":
        ep = s.episode
        if ep is not None and s.spec_version > ep.throw.spec_version:
            return Step("throw", ball, wave, f"respecced to version {s.spec_version} after "
                        "its refusal: a new episode")
        again = "; the same candidate failed the same frozen tests under the spec before " \
            "its respec" if _refused_again_on_its_red(view, slice_id, s) else ""
        return Step("stop", ball, wave, _refused_reason(view, slice_id, s) + again, EXIT_RULE,
                    refused_hint(view, slice_id, s))
    if v == "ready":
        if history.latest_red(view, slice_id, ball) is None:
            if not has_author:
                return Step("stop", ball, wave, "it has no red test recorded and no test "
                            "author is configured (T7.1: red comes first)", EXIT_HOLD,
                            f"record its red (`leap red {slice_id} {ball} COMMIT`) or set "
                            "red.command in .leap/config.yaml, then `leap run "
                            f"{slice_id}` again")
            return Step("red", ball, wave, "no red recorded: the test author writes it")
        return Step("throw", ball, wave, "ready: every dependency passed")
    ep = s.episode
    assert ep is not None
    if _unjudged(view, slice_id, ball, ep):  # T6: no round of the builder's answers that,
        # even on the last round, whose held score would otherwise end the episode
        return Step("score", ball, wave, f"the tribunal gave no verdict on round "
                    f"{len(ep.receipts)}'s claim: it sits again")
    if v in ("checkpoint", "hold") and s.spec_version > ep.throw.spec_version:
        return Step("resume", ball, wave, f"respecced to version {s.spec_version} after "
                    f"episode {ep.throw.episode} ended at 0: a new episode")
    # T9 first: an escalation is a person's to decide, never resumed by the run
    escalated = escalation(view, slice_id, s)
    if escalated is not None:
        return Step("stop", ball, wave, escalated[0], EXIT_HOLD, escalated[1], escalated=True)
    if v in ("checkpoint", "hold"):
        if stopped_by_leap(ep):  # L6: the person's stop, not the builder's word
            why = (ep.checkpoint.reason or "").split(": ", 1)[-1] if ep.checkpoint else ""
            return Step("resume", ball, wave, f"episode {ep.throw.episode} ended at 0 as "
                        f"leap stopped its last round ({why}): a new episode")
        # a resumed episode that ended at 0 again is the spec's to repair, with or without
        # --resume-holds (a chaos hunt: `leap run` named --resume-holds, which resumed
        # nothing and named `leap run` again); episodes leap stopped are not counted
        if held_by_builder(view, ep.throw):
            return Step("stop", ball, wave, f"episode {ep.throw.episode}, itself resumed "
                        f"from episode {ep.throw.resumed_from}, ended at 0 again: the spec "
                        f"needs repair (L3) ({_why_held(view, slice_id, ball, ep)})",
                        EXIT_HOLD, repair(slice_id, ball))
        if not resume_holds:
            return Step("stop", ball, wave, f"episode {ep.throw.episode} ended at 0 ("
                        f"{_why_held(view, slice_id, ball, ep)})", EXIT_HOLD,
                        f"`leap run {slice_id} --resume-holds` resumes it once in a new "
                        "episode")
        return Step("resume", ball, wave, f"episode {ep.throw.episode} ended at 0: resume it "
                    "once (--resume-holds)")
    # in flight
    if has_author:
        asked = _findings_to_test(view, slice_id, s)
        if asked is not None:
            return asked
    if unscored_claim(view, ep) is not None:
        return Step("score", ball, wave, f"round {len(ep.receipts)} claims a pass")
    if ep.spent(round_cap):  # a spent episode without a claim ends at its checkpoint
        return Step("stop", ball, wave, f"episode {ep.throw.episode} used its {round_cap} "
                    "rounds without a claim", EXIT_HOLD)
    return Step("build", ball, wave, f"round {len(ep.receipts) + 1} of episode "
                f"{ep.throw.episode}")


def _findings_to_test(view: LedgerView, slice_id: str, s: BallStanding) -> Step | None:
    """T7.6: the latest score refused this episode's last round on the tribunal's findings,
    some of them open and supported, and no finding red answers it yet: the test author
    turns them into new failing tests before the builder's next round."""
    ep = s.episode
    assert ep is not None
    graded = history.graded_last(view, slice_id, s.ball, ep.throw.episode, len(ep.receipts))
    if graded is None or not answers_findings(graded):
        return None
    found = findings_to_answer(view, slice_id, s.ball)
    if found is None or not found.findings:
        return None
    if any(r.answers == graded.score for r in history.finding_reds(
            view, slice_id, s.ball, ep.throw.episode)):
        return None
    return Step("finding_red", s.ball, s.wave, f"score {graded.score} refused on "
                f"{len(found.findings)} finding(s): the test author writes their tests",
                score=graded.score)


def _why_held(view: LedgerView, slice_id: str, ball: str, ep: Episode) -> str:
    """What ended an episode at 0: its checkpoint, the aggregate review's refusal of the
    claim of its last round (L8: its findings go to the next episode), or a held score."""
    if ep.checkpoint:
        return "a checkpoint"
    last = history.graded_last(view, slice_id, ball, ep.throw.episode, len(ep.receipts))
    if last is not None and last.rule == "L8" and last.outcome == -1:
        return (f"the aggregate review refused round {last.rounds}'s claim, its last round "
                f"(score {last.score}): a new episode answers its findings")
    return "its last round held"


def _refused_reason(view: LedgerView, slice_id: str, s: BallStanding) -> str:
    ep = s.episode
    assert ep is not None
    last = ep.receipts[-1] if ep.receipts else None
    if last is not None and last.outcome == -1:
        return f"round {last.round} was refused (-1): {last.evidence}"
    if history.has(view, slice_id, s.ball, "scores"):
        score = history.scores(view, slice_id, s.ball)[-1]
        return f"score {score.score} refused it (-1): {score.reason}"
    return "refused (-1)"


def _unjudged(view: LedgerView, slice_id: str, ball: str, ep: Episode) -> bool:
    """The last round claims a pass, and the score of it held for want of a verdict (T6: a
    juror out of reach, or only bare passes): the claim waits for the tribunal, not for
    another round of the builder's."""
    last = ep.receipts[-1] if ep.receipts else None
    if last is None or not (last.claim and last.outcome == 1):
        return False
    graded = history.graded_last(view, slice_id, ball, ep.throw.episode, len(ep.receipts))
    return graded is not None and no_verdict(graded)


def no_verdict(score: ScoreRecord) -> bool:
    """T6: the score held because a seat gave no verdict (out of reach, off its lens): the
    tribunal sits again; not a bare pass, nor a tribunal that failed to run."""
    return score.outcome == 0 and score.rule == "T6" and "hold and re-seat" in score.reason


def _refused_again_on_its_red(view: LedgerView, slice_id: str, s: BallStanding) -> bool:
    """Whether the ball's last score refused, on its tests, the last round of its current
    episode, with the very bytes an earlier score refused on its tests under an older spec
    (a walk-away hunt: a test author's wrong red sent the person round the same respec, as
    no respec changes a frozen red)."""
    ep = s.episode
    if ep is None or not history.has(view, slice_id, s.ball, "scores"):
        return False
    scores = history.scores(view, slice_id, s.ball)
    failed = [sc for sc in scores if sc.outcome == -1 and sc.steps
              and sc.steps[-1].step == "tests" and sc.steps[-1].result == "fail"]
    last = scores[-1]
    return len(failed) >= 2 and failed[-1].score == last.score and \
        (last.episode, last.rounds) == (ep.throw.episode, len(ep.receipts)) and \
        any(sc.candidate == last.candidate and sc.spec_version < last.spec_version
            for sc in failed[:-1])


def refused_hint(view: LedgerView, slice_id: str, s: BallStanding) -> str:
    """What leads on from a refused ball (L3): its spec repaired, or, once a respec
    changed nothing its frozen red judges, the red itself (``wrong_red``)."""
    if _refused_again_on_its_red(view, slice_id, s):
        return wrong_red(slice_id, s.ball)
    return (f"repair the spec with `leap ball respec {slice_id} {s.ball} FILE`, then "
            f"`leap run {slice_id}` throws it again")


def wrong_red(slice_id: str, ball: str) -> str:
    """T7.1: a red that asks what the goal does not is never redone once a round was built
    on it; a different test is a different ball."""
    return (f"its red may ask what the goal does not; no red is redone once a round was "
            f"built on it, and a different test is a different ball (T7.1): give the slice "
            f"up (`leap slice abandon {slice_id} --reason TEXT`) and cut it again under "
            f"another id with a right red (`leap slice cut FILE`, then `leap run NEW-ID`); "
            f"if the build is what is wrong after all, {repair(slice_id, ball)}")


def repair(slice_id: str, ball: str) -> str:
    """L3: what a spec that needs repair asks of a person (`leap run` and `leap status`)."""
    return f"`leap ball respec {slice_id} {ball} FILE`, then `leap run {slice_id}`"


def escalation(view: LedgerView, slice_id: str, s: BallStanding) -> tuple[str, str] | None:
    """T9: the latest score of this round held on an escalation (NEW findings flat or
    rising two rounds in a row): a person decides, the run does not go on. (why, what the
    person runs), one wording for `leap run`'s stop and `leap status`. Refusals that carry
    no finding at all (jurors that answered badly: T6, a valid refuse) are the jurors' to
    mend, not the spec's."""
    ep = s.episode
    if ep is None or not history.has(view, slice_id, s.ball, "scores"):
        return None

    score = history.graded_last(view, slice_id, s.ball, ep.throw.episode, len(ep.receipts))
    if not escalated(view, score) or score is None or not score.run_id:
        return None
    folder = layout.tribunal_dir(score.run_id, slice_id, s.ball)
    summary = view.record(f"{folder}/summary.yaml", SummaryRecord)
    if summary is None or not summary.escalated:
        return None
    counts = ", ".join(map(str, summary.new_counts)) or str(summary.new_count)
    why = (f"T9 escalation after tribunal round {summary.round}: NEW findings per round "
           f"{counts}, flat or rising two rounds in a row")
    named = ", ".join(f"{f.lens} ({f.severity}): {f.claim}" for f in summary.findings
                      if f.severity != "info")[:400]
    said = []
    for name in [] if named else view.list(f"{folder}/verdicts"):
        verdict = view.record(f"{folder}/verdicts/{name}", VerdictRecord)
        if verdict is not None and verdict.outcome == "refuse" and not verdict.findings:
            said.append(f"{verdict.lens}: {verdict.reason}")
    if named or not said:
        return (f"{why}; findings: {named or 'none'}",
                f"a person reads the findings (`leap log --slice {slice_id}`); repair the "
                f"spec with {repair(slice_id, s.ball)} once they decide")
    return (f"{why}; the refusals carry no finding to answer ({'; '.join(said)[:400]})",
            f"the jurors refused without a finding: mend their rungs (`leap tribunal rungs "
            f"--probe` shows which answer), then `leap throw {slice_id} --ball {s.ball} "
            f"--resume` starts a new episode and `leap run {slice_id}` goes on")
