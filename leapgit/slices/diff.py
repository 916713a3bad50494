"""Which paths a commit touches, and which of them lie outside a ball's scope (L4, L9).

Default deny: a path is in scope only when the ball's stamped scope names it. A rename
touches both its old and its new path; a deletion touches the deleted path.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from leapgit.gitobj import oid
from leapgit.records.types import BallRecord

if TYPE_CHECKING:
    from dulwich.object_store import BaseObjectStore


def touched_paths(store: BaseObjectStore, old_tree: bytes | None, new_tree: bytes) -> set[str]:
    """Every path added, modified, deleted or renamed between two trees (no rename
    detection: a rename shows as a deletion plus an addition, so both paths count)."""
    from dulwich.diff_tree import tree_changes

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
