"""Throwaway trees of one commit (T5, T8): jurors and test runs never sit in the tree being
graded. A test run gets a writable worktree (tests write caches); a command juror gets a
plain read-only export with no ``.git`` (no history, authors or ledger to read), hashed
before and after it sits so a write under the seat is seen."""

from __future__ import annotations

import hashlib
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
def temporary(repo_root: Path, commit: str, *, prefix: str = "leap-tree-") -> Iterator[Path]:
    parent = Path(tempfile.mkdtemp(prefix=prefix))
    tree = parent / "tree"
    git.run(["worktree", "add", "--detach", "--quiet", str(tree), commit], repo_root)
    try:
        yield tree
    finally:
        git.run(["worktree", "remove", "--force", str(tree)], repo_root, check=False)
        shutil.rmtree(parent, ignore_errors=True)
        git.run(["worktree", "prune"], repo_root, check=False)


def _restore_writable(root: Path) -> None:
    """Undo the read-only marks (a juror may have added unreadable folders) for removal."""
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            if not path.is_symlink():
                with _quiet():
                    path.chmod(path.stat().st_mode | stat.S_IRWXU)
    with _quiet():
        root.chmod(root.stat().st_mode | stat.S_IRWXU)


@contextmanager
def _quiet() -> Iterator[None]:
    try:
        yield
    except OSError:
        pass


@contextmanager
def export(repo_root: Path, commit: str, *, prefix: str = "leap-juror-") -> Iterator[Path]:
    """T5: the commit's files in a fresh folder, read-only, with no ``.git`` beside them."""
    parent = Path(tempfile.mkdtemp(prefix=prefix))
    tree, index = parent / "tree", {"GIT_INDEX_FILE": str(parent / "index")}
    try:
        git.run(["read-tree", commit], repo_root, env=index)
        git.run(["checkout-index", "--all", "--force", f"--prefix={tree}/"], repo_root,
                env=index)
        (parent / "index").unlink()
        tree.mkdir(exist_ok=True)  # a commit with an empty tree
        _chmod_tree(tree, writable=False)
        yield tree
    finally:
        _restore_writable(parent)
        shutil.rmtree(parent, ignore_errors=True)


def digest(tree: Path) -> str:
    """T8: every path, kind, mode, link target and byte under ``tree``, hashed; what cannot
    be read counts as changed (it differs from the export, which was all readable)."""
    h = hashlib.sha256()
    for folder, dirs, files in os.walk(tree, onerror=lambda e: h.update(f"!{e}".encode())):
        dirs.sort()
        for name in sorted(dirs + files):
            path = os.path.join(folder, name)
            h.update(os.fsencode(os.path.relpath(path, tree)) + b"\0")
            try:
                info = os.lstat(path)
                h.update(f"{info.st_mode:o}\0".encode())
                if stat.S_ISLNK(info.st_mode):
                    h.update(os.fsencode(os.readlink(path)))
                elif stat.S_ISREG(info.st_mode):
                    with open(path, "rb") as fh:
                        for chunk in iter(lambda: fh.read(1 << 20), b""):
                            h.update(chunk)
            except OSError as exc:
                h.update(f"!{exc.errno}".encode())
            h.update(b"\0")
    return h.hexdigest()
