"""`leap ball check SLICE BALL` (L2) and `leap ball respec SLICE BALL FILE` (L3)."""

from __future__ import annotations

from pathlib import Path

from leapgit.errors import RuleViolation
from leapgit.ledger import query
from leapgit.ledger.workspace import open_workspace
from leapgit.rules.episodes import current_episode
from leapgit.worktrees.check import CheckResult, check_ball
from leapgit.worktrees.respec import Respecced
from leapgit.worktrees.respec import respec as respec_ball


def check(slice_id: str, ball_id: str, start: Path | str = ".") -> CheckResult:
    ws = open_workspace(start)
    with ws.ledger() as ledger:
        view = ledger.require()
        query.load_slice(view, slice_id)
        episode = current_episode(view, slice_id, ball_id)
        ball = query.load_ball_version(view, slice_id, ball_id, episode.throw.spec_version)
    worktree = Path(episode.throw.worktree or "")
    if not worktree.is_dir():
        raise RuleViolation(f"the worktree of {slice_id}/{ball_id} is gone: {worktree}",
                            rule="L5",
                            hint=f"`leap throw {slice_id} --ball {ball_id} --resume` recreates it")
    return check_ball(ws.paths.common_dir, worktree, ball, episode.throw)


def respec(slice_id: str, ball_id: str, file: Path, reason: str | None = None,
           start: Path | str = ".") -> Respecced:
    return respec_ball(open_workspace(start), slice_id, ball_id, file, reason)
