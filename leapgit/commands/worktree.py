"""`leap worktree prune [SLICE] [--force]`."""

from __future__ import annotations

from pathlib import Path

from leapgit.ledger.workspace import open_workspace
from leapgit.worktrees.prune import PruneLine
from leapgit.worktrees.prune import prune as prune_worktrees


def prune(slice_id: str | None = None, force: bool = False,
          start: Path | str = ".") -> list[PruneLine]:
    return prune_worktrees(open_workspace(start), slice_id, force)
