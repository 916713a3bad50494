"""`leap ball check SLICE BALL` (L2), `leap ball base SLICE BALL` (L5) and
`leap ball respec SLICE BALL FILE` (L3)."""

from __future__ import annotations

from pathlib import Path

from leapgit.ledger import query
from leapgit.ledger.workspace import open_workspace
from leapgit.rules.episodes import current_episode
from leapgit.rules.stack import restacking
from leapgit.worktrees.check import CheckResult, check_ball
from leapgit.worktrees.place import recorded_in, require_worktree, worktree_of
from leapgit.worktrees.respec import Respecced
from leapgit.worktrees.respec import respec as respec_ball
from leapgit.worktrees.stack import BASE_REF, BallBase, ball_base


def base(slice_id: str, ball_id: str, start: Path | str = ".") -> tuple[BallBase, bool]:
    """L5: the commit the ball's red is built on (a dependent ball's stack base), named by
    ``refs/leap/bases/<slice>/<ball>``; and whether the ball is restacking (its red is then
    carried there, not written anew)."""
    ws = open_workspace(start)
    with ws.ledger() as ledger:
        view = ledger.require()
        found = ball_base(ws.paths.root, view, slice_id, ball_id, ws.config.spine)
        return found, restacking(view, slice_id, ball_id) is not None


def base_lines(slice_id: str, ball_id: str, found: BallBase, restack: bool = False
               ) -> list[str]:
    ref = BASE_REF.format(slice=slice_id, ball=ball_id)
    out = [found.commit, f"  {slice_id}/{ball_id} builds on {found.source}"]
    out += [f"  + {e.ball}: score {e.score}, candidate {e.candidate[:12]} (commit "
            f"{e.commit[:12]})" for e in found.stack]
    if restack:  # L5: its red is carried, byte for byte; a new red is refused (T7.1)
        out.append(f"  ref {ref}: its dependencies passed again: `leap red {slice_id} "
                   f"{ball_id} --carry` carries its red there")
        return out
    out.append(f"  ref {ref}: build the red on it (`git worktree add PATH {ref}`), commit "
               f"the failing test, then `leap red {slice_id} {ball_id} COMMIT`")
    return out


def check(slice_id: str, ball_id: str, start: Path | str = ".") -> CheckResult:
    ws = open_workspace(start)
    with ws.ledger() as ledger:
        view = ledger.require()
        query.load_slice(view, slice_id)
        episode = current_episode(view, slice_id, ball_id)
        ball = query.load_ball_version(view, slice_id, ball_id, episode.throw.spec_version)

    worktree = worktree_of(ws, episode.throw)
    require_worktree(ws.paths.root, worktree, episode.throw.branch, f"{slice_id}/{ball_id}",
                     lambda: recorded_in(ws, episode))
    return check_ball(ws.paths.common_dir, worktree, ball, episode.throw)


def respec(slice_id: str, ball_id: str, file: Path, reason: str | None = None,
           start: Path | str = ".") -> Respecced:
    return respec_ball(open_workspace(start), slice_id, ball_id, file, reason)
