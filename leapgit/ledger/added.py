"""What a ledger commit added to its first parent's tree: the files (path, blob id) that are
new there, in path order, the "add" changes of ``dulwich.diff_tree.tree_changes``.

The ledger is written one small commit at a time into wide folders (``slices/`` holds every
slice), so a diff of each commit re-reads and re-merges those folders: over a whole history
that is commits x width, and with dulwich's loose-object reads and entry merging it was the
one superlinear part of `leap audit` (10x the balls, ~18x the diff time). Here every tree is
parsed once (the store's tree cache: a tree a commit writes is its child's parent tree),
the entries that differ are found by a set difference, and only the folders on changed paths
are descended; a caller that has git's own diff of the history (`git log --raw`, C speed)
hands it over with ``known``."""

from __future__ import annotations

import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING

from leapgit.ledger.view import cached_tree_in

if TYPE_CHECKING:
    from dulwich.object_store import BaseObjectStore
    from dulwich.objects import Commit


_known: dict[bytes, list[tuple[str, bytes]]] = {}


@contextmanager
def known(found: Mapping[str, list[tuple[str, str]]]) -> Iterator[None]:
    """While inside, ``added_files`` answers for these commits from ``found`` (commit ->
    [(path, blob id)]), what one `git log --raw` of the whole ledger already said (the
    audit reads it anyway): git's C diff instead of a dulwich diff of every commit. A
    commit's additions follow from its id alone, so the answer cannot go stale."""
    _known.update({sha.encode(): [(p, b.encode()) for p, b in files]
                   for sha, files in found.items()})
    try:
        yield
    finally:
        _known.clear()


def added_files(store: BaseObjectStore, commit: Commit) -> list[tuple[str, bytes]]:
    """(path, blob id) of every file ``commit`` added to its first parent's tree."""
    found = _known.get(commit.id)
    if found is not None:
        return list(found)
    parent = store[commit.parents[0]].tree if commit.parents else None  # type: ignore[attr-defined]
    return added_between(store, parent, commit.tree)


def added_between(store: BaseObjectStore, old: bytes | None, new: bytes, prefix: str = ""
                  ) -> list[tuple[str, bytes]]:
    """(path, blob id) of every file in tree ``new`` that tree ``old`` lacks (a file whose
    type changed counts as added, as in ``tree_changes``); paths start with ``prefix``."""
    out: list[tuple[bytes, bytes]] = []
    _walk(store, old, new, prefix.encode("utf-8", "surrogateescape"), out)
    return [(p.decode("utf-8", "surrogateescape"), sha) for p, sha in out]


def _walk(store: BaseObjectStore, old: bytes | None, new: bytes, prefix: bytes,
          out: list[tuple[bytes, bytes]]) -> None:
    if old == new:
        return
    before = _entries(store, old) if old is not None else {}
    after = _entries(store, new)
    # the entries that differ, found at C speed: a wide folder costs a set difference, not
    # a Python loop over every entry
    for name, (mode, sha) in sorted(after.items() - before.items()):
        was = before.get(name)
        path = prefix + name
        if stat.S_ISDIR(mode):
            kept = was[1] if was is not None and stat.S_ISDIR(was[0]) else None
            _walk(store, kept, sha, path + b"/", out)
        elif was is None or stat.S_IFMT(was[0]) != stat.S_IFMT(mode):
            out.append((path, sha))


def _entries(store: BaseObjectStore, sha: bytes) -> dict[bytes, tuple[int, bytes]]:
    """name -> (mode, id) of a tree, parsed once (the store's tree cache)."""
    tree = cached_tree_in(store, sha)
    found = getattr(tree, "_entries", None)  # dulwich's own parsed dict: no copy, no sort
    if isinstance(found, dict):
        return found
    return {e.path: (e.mode, e.sha) for e in tree.iteritems()}
