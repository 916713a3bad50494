"""The repository a command works on: where it lives, its config, and its ledger; and
the one check of a folder a command is told to use or make (``require_folder``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from leapgit.errors import UsageError
from leapgit.git import RepoPaths, discover
from leapgit.records.cache import RecordCache
from leapgit.records.config import CONFIG_PATH, load_config
from leapgit.records.types import Config

if TYPE_CHECKING:
    from leapgit.ledger.store import Ledger


class Workspace(NamedTuple):
    paths: RepoPaths
    config: Config

    def ledger(self, cache_records: bool = False) -> Ledger:
        # not at the top: `leap status` answered from its kept answer opens no ledger, and
        # loads no dulwich (``commands.status_cache``)
        from leapgit.ledger.store import Ledger

        return Ledger(self.paths.common_dir, self.config.ledger_ref,
                      cache_records=cache_records)

    @property
    def main_top(self) -> Path | None:
        return main_top(self.paths)


def main_top(paths: RepoPaths) -> Path | None:
    """The user's own checkout (the main worktree), also when run inside a ball worktree."""
    if paths.common_dir.name == ".git":
        return paths.common_dir.parent
    return paths.top if paths.top is not None and paths.git_dir == paths.common_dir else None


def open_workspace(start: Path | str = ".") -> Workspace:
    """The repository at ``start`` and its config, read through the record cache as the
    hooks read it: bytes found valid once are not parsed or checked again (no YAML parser
    is loaded for them, ~10 ms of a command's start-up); an entry is keyed by the bytes,
    so an edited config is read anew."""
    paths = discover(start)
    top = paths.top
    main = main_top(paths)
    # A ball worktree is a checkout of the spine and may lack an untracked .leap/config.yaml:
    # the user's checkout holds the config every worktree of the repository obeys.
    if main is not None and (top is None or not (top / CONFIG_PATH).exists()):
        top = main
    return Workspace(paths=paths, config=load_config(top, RecordCache(paths.common_dir,
                                                                      "config")))


def require_folder(path: Path, *, field: str | None = None, file: str | None = None,
                   hint: str | None = None, rule: str | None = None) -> None:
    """A folder is at ``path``, or can be made there; else a UsageError naming ``path``
    and the option or config ``field`` that put it there. Nothing is left behind: making
    is tried with a temporary folder in the nearest existing parent, removed at once (a
    root under /proc passes every look and fails only the making)."""
    if path.is_dir():
        return
    parent = next((p for p in (path, *path.parents) if os.path.lexists(p)), path)
    if not parent.is_dir():
        also = "" if parent == path else f", so {path} cannot be one"
        raise UsageError(f"{parent} is not a folder{also}", file=file, field=field, hint=hint,
                         rule=rule)
    import tempfile  # not at the top: the post-commit hook imports this module

    try:
        os.rmdir(tempfile.mkdtemp(prefix=".leap-probe-", dir=parent))
    except OSError as exc:
        raise UsageError(f"cannot make {path}: {exc.strerror} in {parent}", file=file,
                         field=field, hint=hint, rule=rule) from None
