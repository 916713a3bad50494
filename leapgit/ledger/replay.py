"""Replaying local ledger commits onto another copy's tip (``leap sync``): the local ledger
becomes a descendant of the base, each commit the base lacks rebuilt on it, oldest first,
with its message; the ref moves by the writer's one compare-and-swap loop."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from dulwich.diff_tree import tree_changes
from dulwich.walk import ORDER_TOPO, Walker

from leapgit.errors import LedgerConflict
from leapgit.gitobj import oid, parents_here
from leapgit.ledger.layout import ROOT_RECORD
from leapgit.ledger.writer import Move, new_paths, swap

if TYPE_CHECKING:
    from leapgit.ledger.store import Ledger


class Replayed(NamedTuple):
    tip: str  # the local ledger ref now
    replayed: int  # local commits rebuilt on the base
    records: int  # records they added that the base lacked
    skipped: int  # records the base already held, byte for byte


def replay_onto(ledger: Ledger, base: str) -> Replayed:
    """Additions to distinct paths commute; a path ``base`` holds with the same bytes is
    skipped; with different bytes it is a ``LedgerConflict`` naming the path, and nothing
    moves. A separately started ledger's root record is dropped when ``base`` has its
    own. A local commit that already stands on the tip so far, every addition of it new
    there, written by this committer and signed as it signs, is kept as it is (its id
    too: a push of it saved before stays a fast-forward)."""
    return swap(ledger, lambda old, _attempt: _rebuild(ledger, old, base))


def _rebuild(ledger: Ledger, old: str | None, base: str) -> Move[Replayed]:
    store = ledger.repo.object_store
    parents = parents_here(ledger.repo)  # a shallow clone's ledger ends at its cut
    local = [] if old is None else [
        e.commit for e in Walker(store, [oid(old)], exclude=[oid(base)], order=ORDER_TOPO,
                                 reverse=True, get_parents=parents)]
    tip, records, skipped = base, 0, 0
    # a commit that stands on the tip already is kept as it is only when a replay would
    # write it alike: by this committer, signed as this committer signs (a sync signs the
    # records written before a key was set up, as it always did)
    me, signs = ledger.committer.identity()[0], ledger.committer.signer() is not None
    for commit in local:
        parent_tree = (store[parents(commit)[0]].tree  # type: ignore[attr-defined]
                       if parents(commit) else None)
        added: dict[str, bytes] = {}
        for change in tree_changes(store, parent_tree, commit.tree):
            if change.type != "add" or change.new is None:
                where = change.old.path if change.old and change.old.path else b"?"
                raise LedgerConflict("a local ledger commit changes a record",
                                     file=where.decode(), rule="L8")
            path = (change.new.path or b"").decode()
            if path == ROOT_RECORD and ledger.view(tip).exists(ROOT_RECORD):
                skipped += 1
                continue
            added[path] = store[oid(change.new.sha or b"")].as_raw_string()
        todo = new_paths(ledger, tip, added, identical_ok=True)
        skipped += len(added) - len(todo)
        if todo and len(todo) == len(added) and [p.decode() for p in commit.parents] == [tip] \
                and commit.committer == me and bool(commit.gpgsig) == signs:
            tip = commit.id.decode()  # it stands on the tip already: kept as it is
            records += len(todo)
        elif todo:
            tip = ledger.committer.commit(tip, todo, commit.message).decode()
            records += len(todo)
    reflog = b"leap: sync" if old is None else b"leap: sync replay"
    return Move(tip, reflog, Replayed(tip, len(local), records, skipped))
