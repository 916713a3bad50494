"""Scope paths (L1, L2): normalise a path as written, resolve it in the base commit's tree
(following symlinks stored in git) and in the work tree, and stamp its blob id.

A scope names exact files. It is reference data, never instruction: a path that is
absolute, walks out with ``..``, or reaches outside the repository through a symlink is
refused, and so is one that names a directory or a submodule.
"""

from __future__ import annotations

import os
import posixpath
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from leapgit.gitobj import oid
from leapgit.records.types import ABSENT

if TYPE_CHECKING:
    from leapgit.gitobj import GitRepo

MAX_LINK_HOPS = 40
_TREE, _LINK, _GITLINK = 0o040000, 0o120000, 0o160000
_DRIVE = re.compile(r"^[A-Za-z]:")


class ScopeError(Exception):
    """An L2 refusal for one path; the caller turns it into a Problem with file and field."""


class Resolved(NamedTuple):
    path: str  # normalised as written
    real: str  # after following symlinks inside the repository
    blob: str  # blob id at the base, or ABSENT


def normalise(raw: str) -> str:
    """The path relative to the repository root, or ScopeError (L2)."""
    if any(ord(c) < 32 for c in raw):
        raise ScopeError("control characters in a path")
    if raw.startswith("/") or raw.startswith("\\") or _DRIVE.match(raw):
        raise ScopeError(f"absolute path {raw!r}; scope paths are relative to the repository root")
    if "\\" in raw:
        raise ScopeError(f"backslash in {raw!r}; separate folders with '/'")
    if raw.endswith("/"):
        raise ScopeError(f"{raw!r} names a directory; a scope lists exact files")
    path = posixpath.normpath(raw)
    if path == ".." or path.startswith("../"):
        raise ScopeError(f"{raw!r} walks out of the repository with '..'")
    if path in ("", "."):
        raise ScopeError(f"{raw!r} names the repository root; a scope lists exact files")
    if ".git" in path.split("/"):
        raise ScopeError(f"{raw!r} is inside .git; git's own files are never in scope")
    return path


class TreeResolver:
    """Resolves scope paths against one commit's tree (and, when given, a work tree)."""

    def __init__(self, repo: GitRepo | None, tree: bytes | None, work_tree: Path | None) -> None:
        self._repo = repo
        self._root = tree
        self._work = work_tree.resolve() if work_tree else None
        self._trees: dict[bytes, object] = {}

    def _tree_items(self, sha: bytes) -> object:
        tree = self._trees.get(sha)
        if tree is None:
            assert self._repo is not None
            tree = self._repo.object_store[oid(sha)]
            self._trees[sha] = tree
        return tree

    def resolve(self, raw: str) -> Resolved:
        path = normalise(raw)
        real, blob = self._in_tree(path, 0)
        fs_real = self._in_work_tree(path)
        if fs_real is not None and blob == ABSENT:
            real = fs_real
        return Resolved(path=path, real=real, blob=blob)

    def _in_tree(self, path: str, hops: int) -> tuple[str, str]:
        if self._root is None:
            return path, ABSENT
        parts = path.split("/")
        sha = self._root
        for i, part in enumerate(parts):
            tree = self._tree_items(sha)
            try:
                mode, sha = tree[part.encode()]  # type: ignore[index]
            except KeyError:
                return path, ABSENT
            here = "/".join(parts[: i + 1])
            last = i == len(parts) - 1
            if mode == _LINK:
                return self._follow(here, sha, parts[i + 1:], hops)
            if mode == _GITLINK:
                raise ScopeError(f"{here!r} is a submodule; scope files of the submodule itself")
            if mode == _TREE:
                if last:
                    raise ScopeError(f"{path!r} is a directory; a scope lists exact files")
                continue
            if not last:
                raise ScopeError(f"{here!r} is a file, so {path!r} cannot exist")
            return path, sha.decode()
        return path, ABSENT  # unreachable: the loop returns on the last part

    def _follow(self, link: str, sha: bytes, rest: list[str], hops: int) -> tuple[str, str]:
        if hops >= MAX_LINK_HOPS:
            raise ScopeError(f"symlink loop at {link!r}")
        assert self._repo is not None
        target = self._repo.object_store[oid(sha)].as_raw_string().decode("utf-8", "replace")
        if target.startswith("/"):
            raise ScopeError(f"symlink {link!r} points outside the repository ({target})")
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(link), target, *rest))
        if joined == ".." or joined.startswith("../"):
            raise ScopeError(f"symlink {link!r} leads outside the repository ({target})")
        if joined in ("", "."):
            raise ScopeError(f"symlink {link!r} points at the repository root")
        if ".git" in joined.split("/"):
            raise ScopeError(f"symlink {link!r} leads into .git; git's own files are never "
                             "in scope")
        return self._in_tree(joined, hops + 1)

    def _in_work_tree(self, path: str) -> str | None:
        """The work tree's view: a symlink here that leaves the repository is refused too."""
        if self._work is None:
            return None
        work = str(self._work)
        probe = work
        for part in path.split("/"):
            probe = f"{probe}/{part}"
            try:
                mode = os.lstat(probe).st_mode
            except OSError:
                return None  # not there: nothing in the work tree to follow
            if stat.S_ISLNK(mode):
                break
        else:
            if stat.S_ISDIR(mode):  # an untracked folder (build/, node_modules/) is no file
                raise ScopeError(f"{path!r} is a directory; a scope lists exact files")
            return None  # no symlink on the way: the tree's answer stands
        real = os.path.realpath(f"{work}/{path}")
        if real != work and not real.startswith(work + "/"):
            raise ScopeError(
                f"{path!r} leads outside the repository through a symlink (to {real})"
            )
        if real == work or os.path.isdir(real):
            raise ScopeError(f"{path!r} is a directory; a scope lists exact files")
        rel = real[len(work) + 1:]
        if ".git" in rel.split("/"):
            raise ScopeError(f"{path!r} leads into .git through a symlink; git's own files "
                             "are never in scope")
        return rel
