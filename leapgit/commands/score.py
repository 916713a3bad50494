"""`leap score SLICE BALL [--builder ID]` (L7): derive the ball's outcome from its candidate."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from leapgit.errors import EXIT_HOLD, EXIT_OK, EXIT_RULE
from leapgit.ledger import sync as syncing
from leapgit.ledger.workspace import open_workspace
from leapgit.loop import remote as rm
from leapgit.scoring.score import Scored, score
from leapgit.tribunal.worktree import once_a_tree

NAMES = {1: "pass", 0: "hold", -1: "refuse"}


@once_a_tree
def score_ball(slice_id: str, ball_id: str, builder: str | None = None,
               start: Path | str = ".", echo: Callable[[str], None] = print,
               remote: str | None = None) -> Scored:
    """``remote``: a ball published to workers is scored as the shared remote holds it, as
    `leap run --remote` scores it: the remote's ledger and ball branches fetched first, the
    branch here brought up to the remote's (a fast-forward), the score pushed after."""
    ws = open_workspace(start)
    if remote is None:
        return score(ws, slice_id, ball_id, builder, echo)

    rm.sync_with_balls(ws, remote, push=False)
    rm.bring_home(ws, remote, ws.config.ball_branch(slice_id, ball_id))
    scored = score(open_workspace(start), slice_id, ball_id, builder, echo, read=remote)
    # pushed whenever this clone's ledger is ahead: also a score recorded by a run whose push
    # failed (a blind review: run again, it said "already passed" and never pushed it)
    pushed = syncing.sync(remote, start=ws.paths.root).pushed
    return replace(scored, shared=remote) if pushed else scored


def exit_code(result: Scored) -> int:
    return {1: EXIT_OK, 0: EXIT_HOLD, -1: EXIT_RULE}[result.record.outcome]


def lines(result: Scored) -> list[str]:
    r = result.record
    out = [f"reopened {o.slice}/{o.ball} (L8): {o.reason}" for o in result.reopened]
    if result.already:
        shared = f"; pushed to {result.shared}" if result.shared else ""
        return out + [f"{r.slice}/{r.ball} already passed: score {r.score}, candidate "
                      f"{r.candidate[:12]}; nothing to do{shared}"]
    for step in r.steps:
        rule = f" [{step.rule}]" if step.rule else ""
        out.append(f"  {step.step:<10} {step.result:<7} {step.detail}{rule}")
    rule = f" [{r.rule}]" if r.rule else ""
    out.append(f"score {r.score} of {r.slice}/{r.ball}: {r.outcome} ({NAMES[r.outcome]}), "
               f"candidate {r.candidate[:12]}{rule}")
    if r.outcome != 1:
        out.append(f"  reason: {r.reason}")
    elif r.provenance is not None:
        p = r.provenance
        out.append(f"  pass record: {len(p.reviewers)} reviewer(s), tribunal {p.run_id}, "
                   f"{len(p.tests)} test run(s), live proof "
                   f"{'ran' if p.live_proof else 'not declared'}")
    if result.ledger_commit:
        out.append(f"recorded in the ledger at {result.ledger_commit[:12]}"
                   + (f", pushed to {result.shared}" if result.shared else ""))
    return out
