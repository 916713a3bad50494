"""A refused round leaves the ball branch pushable (L6, L9; issue 14 item 11).

Once a refused (-1) round's commit is kept under its evidence ref (``evidence``), the ball
branch moves back to where the round started, by compare-and-swap from the refused commit,
in the ball's own worktree (whose HEAD is that branch, so it follows). The round's changes
outside the scope leave that worktree: their index entries go back to the start, a file the
round added is removed, a tracked file it changed is put back at its blob at the start. The
scope files are the rollback's (``rollback``). The server refuses a ball branch holding a
commit outside the scope; after this the branch holds what it held before the round.

Nothing is lost: a file is removed or rewritten only when its bytes are the refused
commit's, which the evidence ref keeps; never a file that was untracked before the round
(``untracked``: what `leap throw --run` saw before the builder ran; `leap round` and a
commit made by hand start the round at the last commit), nor an ignored one; never a path
outside the worktree.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from dulwich.diff_tree import tree_changes

from leapgit import git
from leapgit.errors import RuleViolation
from leapgit.gitobj import oid
from leapgit.ledger.repo import open_repo
from leapgit.records.types import ABSENT, BallRecord
from leapgit.slices.diff import out_of_scope
from leapgit.worktrees.check import blob_of_file, checkout_bytes
from leapgit.worktrees.rollback import _inside, _write

if TYPE_CHECKING:
    from leapgit.gitobj import GitRepo

_FILE_MODES = (0o100644, 0o100755)


@dataclass(frozen=True)
class Rewound:
    start: str  # where the ball branch stands now: the round's start
    removed: tuple[str, ...] = ()  # the round's additions outside the scope
    restored: tuple[str, ...] = ()  # tracked files outside the scope, back at the start
    kept: tuple[str, ...] = ()  # left as they are (untracked before the round, changed since)

    def summary(self) -> str:
        text = (f"the ball branch is back at the round's start {self.start[:12]}; "
                f"{len(self.removed) + len(self.restored)} file(s) outside the scope undone")
        return text + (f"; left as they are: {', '.join(self.kept)}" if self.kept else "")


class _Change(NamedTuple):
    path: str
    before: tuple[int, bytes] | None  # (mode, blob) at the start
    after: tuple[int, bytes] | None  # (mode, blob) in the refused commit


def untracked_paths(worktree: Path) -> frozenset[str]:
    """The untracked files of ``worktree`` (not ignored ones): taken before a builder runs,
    so a refused round never removes what was there before it."""
    raw = git.run(["ls-files", "--others", "--exclude-standard", "-z"], worktree,
                  detached=True).stdout
    return frozenset(p.decode("utf-8", "surrogateescape") for p in raw.split(b"\0") if p)


def _changes(repo: GitRepo, start: str, refused: str) -> list[_Change]:
    """Every path the round changed (no rename detection: a rename is two paths)."""
    store = repo.object_store
    old, new = (store[oid(c)].tree for c in (start, refused))  # type: ignore[attr-defined]
    sides: dict[str, list[tuple[int, bytes] | None]] = {}
    for change in tree_changes(store, old, new):
        for at, entry in enumerate((change.old, change.new)):
            if entry is None or entry.path is None or entry.mode is None or entry.sha is None:
                continue
            path = entry.path.decode("utf-8", "surrogateescape")
            sides.setdefault(path, [None, None])[at] = (entry.mode, bytes(entry.sha))
    return [_Change(path, before, after) for path, (before, after) in sides.items()]


def rewind(common_dir: Path, worktree: Path, branch: str, start: str, refused: str,
           ball: BallRecord, untracked: frozenset[str] | None = None) -> Rewound:
    """Move ``branch`` from ``refused`` back to ``start`` and undo the round's changes
    outside the scope in ``worktree``, the ball's own (the caller checks it is)."""
    if not git.is_ancestor(worktree, start, refused):
        raise RuleViolation(f"the round's start {start[:12]} is no ancestor of the refused "
                            f"commit {refused[:12]}: {branch} stays where it is", rule="L6")
    with open_repo(str(common_dir)) as repo:
        changes = _changes(repo, start, refused)
        moved = git.run(["update-ref", "-m", "leap: a refused round leaves the branch (L6)",
                         f"refs/heads/{branch}", start, refused], worktree, check=False,
                        detached=True)
        if moved.returncode != 0:  # L6: compare-and-swap; someone moved the branch meanwhile
            raise RuleViolation(f"{branch} is no longer at the refused commit "
                                f"{refused[:12]}: it stays where it is", rule="L6")
        paths = [c.path for c in changes]
        if paths:  # the index of exactly these paths back at the start; no file touched
            git.run(["update-index", "-z", "--index-info"], worktree, detached=True,
                    input=b"".join(_index_line(c) for c in changes))
        outside = set(out_of_scope(paths, ball))
        return _undo(repo, worktree, start, [c for c in changes if c.path in outside],
                     untracked if untracked is not None else frozenset())


def _index_line(c: _Change) -> bytes:
    """``c.path`` in the index as the start holds it (a mode of 0 drops it), as `git reset
    START -- PATH` puts it. Never that reset itself: it matches every pathspec against every
    index entry, and a round that touched 10^5 files took minutes to leave."""
    mode, blob = c.before if c.before is not None else (0, b"0" * 40)
    return f"{mode:o} {blob.decode()}\t".encode() + \
        c.path.encode("utf-8", "surrogateescape") + b"\0"


def _undo(repo: GitRepo, worktree: Path, start: str, changes: list[_Change],
          untracked: frozenset[str]) -> Rewound:
    ignored = _ignored(worktree, [c.path for c in changes if c.before is None])
    removed, restored, kept = [], [], []
    for c in changes:  # each path asked as it comes: an undo before it may change the answer
        target = worktree / c.path  # (a symlink the round put in a folder's place, removed)
        if not _inside(worktree, target) or c.path in untracked or c.path in ignored:
            kept.append(c.path)
        # its bytes, not git's view of them: a clean filter that drops lines would call a
        # file with uncommitted edits unchanged, and the undo would write over them
        elif blob_of_file(target) != (c.after[1].decode() if c.after else ABSENT):
            if target.exists() or target.is_symlink():
                kept.append(c.path)  # changed since the commit: bytes no record holds
        elif c.before is None:
            target.unlink()
            _prune_folders(worktree, target.parent)
            removed.append(c.path)
        elif c.before[0] in _FILE_MODES:
            target.parent.mkdir(parents=True, exist_ok=True)
            blob = c.before[1].decode()
            _write(target, checkout_bytes(worktree, c.path, blob, repo.object_store[
                oid(blob)].as_raw_string()), c.before[0])
            restored.append(c.path)
        else:
            kept.append(c.path)  # a link or a submodule at the start: not a file to write
    return Rewound(start, tuple(removed), tuple(restored), tuple(kept))


def _ignored(worktree: Path, paths: list[str]) -> set[str]:
    """Of ``paths`` (untracked now), those git ignores: a generated file stays."""
    if not paths:
        return set()
    proc = git.run(["check-ignore", "-z", "--stdin"], worktree, check=False, detached=True,
                   input=b"\0".join(p.encode("utf-8", "surrogateescape") for p in paths))
    return {p.decode("utf-8", "surrogateescape") for p in proc.stdout.split(b"\0") if p}


def _prune_folders(worktree: Path, folder: Path) -> None:
    """Remove the folders the removal left empty, up to the worktree, never beyond."""
    root = os.path.realpath(worktree)
    while os.path.realpath(folder) != root and _inside(worktree, folder):
        try:
            folder.rmdir()  # only an empty folder
        except OSError:
            return
        folder = folder.parent
