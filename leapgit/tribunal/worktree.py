"""Throwaway worktrees of one commit (T8): jurors and test runs never sit in the tree being
graded. A juror's tree is made read-only; a test tree is writable (tests write caches)."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from leapgit import git


def _chmod_tree(root: Path, writable: bool) -> None:
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            if path.is_symlink():
                continue
            mode = path.stat().st_mode
            path.chmod(mode | stat.S_IWUSR if writable else mode & ~0o222)
    mode = root.stat().st_mode
    root.chmod(mode | stat.S_IWUSR if writable else mode & ~0o222)


@contextmanager
def temporary(repo_root: Path, commit: str, *, read_only: bool = False,
              prefix: str = "leap-tree-") -> Iterator[Path]:
    parent = Path(tempfile.mkdtemp(prefix=prefix))
    tree = parent / "tree"
    git.run(["worktree", "add", "--detach", "--quiet", str(tree), commit], repo_root)
    try:
        if read_only:
            _chmod_tree(tree, writable=False)
        yield tree
    finally:
        if read_only:
            _chmod_tree(tree, writable=True)
        git.run(["worktree", "remove", "--force", str(tree)], repo_root, check=False)
        shutil.rmtree(parent, ignore_errors=True)
        git.run(["worktree", "prune"], repo_root, check=False)


def is_clean(tree: Path, commit: str) -> bool:
    """T8: nothing was written under the seat (same HEAD, no changed or new files)."""
    head = git.run(["rev-parse", "HEAD"], tree, check=False).stdout.decode().strip()
    status = git.run(["status", "--porcelain", "--untracked-files=all"], tree, check=False)
    return head == commit and status.returncode == 0 and not status.stdout.strip()
