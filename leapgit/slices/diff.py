"""Which paths a commit touches, and which of them lie outside a ball's scope (L4, L9).

Default deny: a path is in scope only when the ball's stamped scope names it. A rename
touches both its old and its new path; a deletion touches the deleted path.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

from dulwich.diff_tree import tree_changes
from dulwich.errors import NotTreeError
from dulwich.object_store import tree_lookup_path

from leapgit.gitobj import oid
from leapgit.records.types import BallRecord

if TYPE_CHECKING:
    from dulwich.object_store import BaseObjectStore

    from leapgit.gitobj import GitRepo

_LINK, _GITLINK = 0o120000, 0o160000


def touched_paths(store: BaseObjectStore, old_tree: bytes | None, new_tree: bytes) -> set[str]:
    """Every path added, modified, deleted or renamed between two trees (no rename
    detection: a rename shows as a deletion plus an addition, so both paths count)."""
    paths: set[str] = set()
    old = oid(old_tree) if old_tree is not None else None
    for change in tree_changes(store, old, oid(new_tree)):
        for entry in (change.old, change.new):
            if entry is not None and entry.path is not None:
                paths.add(entry.path.decode("utf-8", "surrogateescape"))
    return paths


def allowed_paths(ball: BallRecord) -> set[str]:
    allowed = set()
    for entry in ball.scope:
        allowed.add(entry.path)
        if entry.resolved:
            allowed.add(entry.resolved)
    return allowed


def out_of_scope(paths: Iterable[str], ball: BallRecord) -> list[str]:
    allowed = allowed_paths(ball)
    return sorted(p for p in paths if p not in allowed)


class Escape(NamedTuple):
    """A scope path whose entry reaches past its bytes: a gitlink, or a symlink that leaves
    the repository (``in_repo`` False: L2) or the ball's scope (``in_repo`` True: L4, L9)."""

    path: str
    message: str
    in_repo: bool


def escapes(repo: GitRepo, tree: bytes, paths: Iterable[str], ball: BallRecord) -> list[Escape]:
    """The in-scope ``paths`` that ``tree`` holds as a gitlink, or as a symlink whose target
    (resolved by the L2 rules of ``slices.scope``) is not a file of the same ball's scope.
    A scope names files by path; a link would let the ball's bytes name someone else's."""
    from leapgit.slices.scope import ScopeError, TreeResolver

    allowed = allowed_paths(ball)
    resolver = TreeResolver(repo, tree, None)
    out = []
    for path in sorted(p for p in paths if p in allowed):
        try:
            mode, _ = tree_lookup_path(repo.object_store.__getitem__, oid(tree), path.encode())
        except (KeyError, NotTreeError):
            continue  # deleted here: no entry to follow
        if mode == _GITLINK:
            out.append(Escape(path, "a gitlink (submodule) on a scope path; a scope lists "
                              "files", False))
        elif mode == _LINK:
            try:
                real = resolver.resolve(path).real
            except ScopeError as exc:
                out.append(Escape(path, str(exc), False))
                continue
            if real not in allowed:
                out.append(Escape(path, f"a symlink to {real}, outside the scope of ball "
                                  f"{ball.slice}/{ball.ball}", True))
    return out
