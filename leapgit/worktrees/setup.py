"""`worktrees.setup` in a ball's worktree (issue 14): run once in each fresh worktree, before
anything else happens there. Under `leap throw --run` it runs at the start of the first round
in that worktree, its output going to the round's log; a plain `leap throw` runs it when it
creates the worktree, into a log of its own. A setup that succeeded leaves a mark in the
worktree's own git dir (never in the tracked tree), naming the command, so it runs again only
in a new worktree or when the command changes; one that failed runs again next time.
"""

from __future__ import annotations

from pathlib import Path

from leapgit.ledger.workspace import Workspace
from leapgit.tribunal.worktree import SetupRun, run_setup
from leapgit.worktrees.closeround import admin_dir

MARK = "setup.done"


def set_up(ws: Workspace, worktree: Path, log: Path) -> SetupRun | None:
    """The setup's run in ``worktree``, or None when there is nothing to run."""
    command = ws.config.worktree_setup
    admin = admin_dir(ws.paths.common_dir, worktree)
    if not command or admin is None:
        return None
    mark = admin / "leap" / MARK
    try:
        if mark.read_text(encoding="utf-8") == command:
            return None
    except OSError:
        pass
    run = run_setup(worktree, command, ws.main_top or ws.paths.root,
                    ws.config.builder_timeout, log)
    if run.ok:
        mark.parent.mkdir(parents=True, exist_ok=True)
        mark.write_text(command, encoding="utf-8")
    return run


def setup_evidence(run: SetupRun, then: str) -> str:
    """A round's evidence when its setup failed: the cause, the tail, and what leads on."""
    return (f"{run.describe()} in the ball's worktree (L2: a missing dependency holds); "
            f"the builder did not run; it printed: {run.tail()}; fix worktrees.setup, "
            f"then {then}")
