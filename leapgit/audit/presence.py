"""Which ledger commits carry a signature at all (no crypto: for `leap status`).

Kept apart from ``audit.signatures``: presence needs no policy, no verification and no
history replay, and `leap status` imports it on every run (the signature modules it no
longer loads, ``signing.policy`` and ``rules.signing_history`` with ``dulwich.walk``, cost
it ~14 ms of start-up under load, issue 13 item 7)."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from leapgit.gitobj import oid, refname
from leapgit.ledger.added import added_files

if TYPE_CHECKING:
    from dulwich.objects import Commit

    from leapgit.gitobj import GitRepo


class Presence(NamedTuple):
    commits: int
    unsigned_records: tuple[str, ...]
    unsigned_commits: int
    shallow: bool = False  # a shallow clone: the ledger's older commits are not here
    fetch: str | None = None  # then, the git command that fetches them, when one can


def signature_presence(repo: GitRepo, ledger_ref: str,
                       boundary: frozenset[str] = frozenset()) -> Presence:
    """Every commit the ledger ref reaches, counted once; the records each unsigned one
    added to its first parent's tree. ``boundary``: a shallow clone's commits whose parents
    are not here (``git.shallow_commits``): counted, their additions unknown."""
    try:
        tip: bytes | None = repo.refs[refname(ledger_ref)]
    except KeyError:
        tip = None
    commits, unsigned, cut = 0, 0, False
    paths: list[str] = []
    todo, seen = ([tip] if tip is not None else []), set()
    while todo:
        sha = todo.pop()
        if sha in seen:
            continue
        seen.add(sha)
        commit: Commit = repo.object_store[oid(sha)]  # type: ignore[assignment]
        commits += 1
        at_cut = sha.decode() in boundary and bool(commit.parents)  # a root hides nothing
        cut = cut or at_cut
        if not commit.gpgsig:
            unsigned += 1
            if not at_cut:
                paths.extend(p for p, _ in added_files(repo.object_store, commit))
        if not at_cut:
            todo.extend(commit.parents)
    return Presence(commits, tuple(sorted(paths)), unsigned, cut)
