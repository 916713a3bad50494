"""Score step 2, keep-or-revert (L7.2): when the ball declares a metric, run it on the
champion (the base) and on the candidate, one after the other in this one session, each in
a clean throwaway worktree, and compare field by field in the declared order. A tie or a
regression loses: -1, and the candidate is reverted in the ball's worktree through the
ball's own rollback (L6: only this ball's changes)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from leapgit.errors import LeapError
from leapgit.records.scoring import MetricOutcome, RunEvidence, Step
from leapgit.records.types import BallRecord, Metric, ThrowRecord
from leapgit.scoring.commands import run_command
from leapgit.scoring.metric import MetricUnreadable, compare, read_fields
from leapgit.scoring.proofrun import evidence
from leapgit.tribunal.worktree import temporary
from leapgit.worktrees.handoff import environment
from leapgit.worktrees.rollback import rollback


@dataclass(frozen=True)
class Kept:
    step: Step
    runs: tuple[RunEvidence, ...]
    verdict: MetricOutcome | None
    rolled_back: str | None = None


def _measure(root: Path, commit: str, metric: Metric, who: str, timeout: float
             ) -> tuple[RunEvidence, dict[str, float] | None, str | None]:
    with temporary(root, commit, prefix=f"leap-metric-{who}-") as tree:  # a measurement:
        run = run_command("metric", metric.command, tree, timeout=timeout)  # never reused
    ev = evidence(run, f"{who} {commit[:12]}")
    if run.timed_out:
        return ev, None, "hold"
    if not run.ok:
        return ev, None, f"the {who}'s metric command exited {run.exit_code}"
    try:
        return ev, read_fields(run.stdout, metric, who), None
    except MetricUnreadable as exc:
        return ev, None, str(exc)


def keep_or_revert(root: Path, common_dir: Path, ball: BallRecord, thrown: ThrowRecord,
                   commit: str, timeout: float, red: str | None = None) -> Kept:
    metric = ball.metric
    if metric is None:
        return Kept(Step("metric", "skipped", "the ball declares no metric"), (), None)
    runs = []
    values = {}
    for who, rev in (("champion", thrown.base), ("candidate", commit)):
        ev, fields, problem = _measure(root, rev, metric, who, timeout)
        runs.append(ev)
        if problem == "hold":
            return Kept(Step("metric", "hold", f"the {who}'s metric timed out", "L7.2"),
                        tuple(runs), None)
        if problem is not None or fields is None:
            return Kept(Step("metric", "fail", f"{problem}: the metric decides nothing",
                             "L7.2"), tuple(runs), None)
        values[who] = fields
    verdict = compare(metric, values["champion"], values["candidate"])
    if verdict.keep:
        return Kept(Step("metric", "ok", f"keep: {verdict.reason}"), tuple(runs), verdict)
    # a published ball (issue 16) has no worktree here: its worker's next round starts over
    worktree = Path(thrown.worktree) if thrown.worktree and not thrown.published else None
    try:
        rolled = rollback(common_dir, worktree, ball, thrown, environment({}),
                          red).summary() \
            if worktree is not None and worktree.is_dir() else \
            f"not rolled back: worktree {worktree or '(none: built by a worker)'} is gone"
    except LeapError as exc:
        rolled = f"rollback failed: {exc.lines()[0]}"
    return Kept(Step("metric", "fail", f"revert: {verdict.reason}; {rolled}", "L7.2"),
                tuple(runs), verdict, rolled)
