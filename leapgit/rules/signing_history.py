"""The policy in git: read at a tree, along the spine's first-parent line (one epoch per
commit: ``timeline`` decides which was in force for a record), and which ledger commit
added a record (its signer acted for it)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dulwich.errors import NotTreeError
from dulwich.object_store import tree_lookup_path

from leapgit.errors import LeapError
from leapgit.gitobj import oid
from leapgit.ledger.added import added_between, added_files
from leapgit.ledger.view import cached_tree_in
from leapgit.signing import POLICY_PATH
from leapgit.signing.policy import Policy, parse_policy

if TYPE_CHECKING:
    from dulwich.object_store import BaseObjectStore
    from dulwich.objects import Commit

_TREE_MODE = 0o040000
_parsed: dict[bytes, Policy] = {}  # by blob id: immutable, never stale


def blob_at(store: BaseObjectStore, tree: bytes, path: str) -> bytes | None:
    try:
        mode, sha = tree_lookup_path(store.__getitem__, oid(tree), path.encode())
    except (KeyError, NotTreeError):
        return None
    return None if mode == _TREE_MODE else sha


def policy_at(store: BaseObjectStore, tree: bytes, source: str = POLICY_PATH,
              ) -> Policy | None:
    """The policy a tree holds, or None when it holds none."""
    return policy_of(store, blob_at(store, tree, POLICY_PATH), source)


def policy_of(store: BaseObjectStore, blob: bytes | None, source: str = POLICY_PATH,
              ) -> Policy | None:
    """The policy a blob of ``.leap/allowed_signers`` holds (None: no such file)."""
    if blob is None:
        return None
    if blob not in _parsed:
        _parsed[blob] = parse_policy(store[oid(blob)].as_raw_string(), source)
    return _parsed[blob]


@dataclass(frozen=True)
class PolicyEpoch:
    since: int  # committer time of the spine commit that put this policy in force
    commit: str
    policy: Policy | None
    problem: str | None = None  # the policy's bytes did not parse (its line and why)
    blob: bytes | None = None  # the policy's blob id (None: the commit holds none)


def spine_epochs(store: BaseObjectStore, tip: str | None) -> list[PolicyEpoch]:
    """The spine's first-parent line, oldest first, as the policy each commit held; a
    policy that does not parse is an epoch with no policy and its ``problem``."""
    out: list[PolicyEpoch] = []
    sha = tip
    while sha:
        commit: Commit = store[oid(sha)]  # type: ignore[assignment]
        blob = blob_at(store, commit.tree, POLICY_PATH)
        try:
            policy, problem = policy_of(store, blob, f"{sha[:12]}:{POLICY_PATH}"), None
        except LeapError as exc:
            policy, problem = None, str(exc.problems[0].message)
        out.append(PolicyEpoch(int(commit.commit_time), sha, policy, problem, blob))
        sha = commit.parents[0].decode() if commit.parents else None
    out.reverse()
    return out


def ledger_line(store: BaseObjectStore, tip: str) -> Iterator[Commit]:
    """The ledger's commits, newest first (it is linear: the server refuses merges, L8)."""
    sha: bytes | None = oid(tip)
    while sha is not None:
        commit: Commit = store[oid(sha)]  # type: ignore[assignment]
        yield commit
        sha = commit.parents[0] if commit.parents else None


def _entry(store: BaseObjectStore, tree: bytes | None, path: str) -> bytes | None:
    """The id at ``path`` in ``tree`` (a blob or a tree), through the store's tree cache."""
    sha = tree
    for part in path.encode().split(b"/") if path else ():
        if sha is None:
            return None
        try:
            _mode, sha = cached_tree_in(store, sha)[part]
        except (KeyError, TypeError, AttributeError):
            return None
    return sha


def adding_commit(store: BaseObjectStore, tip: str, path: str) -> Commit | None:
    """The ledger commit that added ``path`` (the ledger is add-only: exactly one)."""
    for commit in ledger_line(store, tip):
        parent = store[commit.parents[0]].tree if commit.parents else None  # type: ignore[attr-defined]
        if _entry(store, commit.tree, path) is not None and _entry(store, parent, path) is None:
            return commit
    return None


_added: dict[bytes, list[tuple[str, bytes]]] = {}  # commit id -> its added (path, blob id)
_ADDED_MAX = 65536


def added_blobs(store: BaseObjectStore, commit: Commit) -> list[tuple[str, bytes]]:
    """(path, blob id) for every file ``commit`` added to its first parent's tree; a
    commit id names its trees, so the answer is cached (the audit asks several rules)."""
    found = _added.get(commit.id)
    if found is None:
        found = added_files(store, commit)
        if len(_added) > _ADDED_MAX:
            _added.clear()
        _added[commit.id] = found
    return found


def added_under(store: BaseObjectStore, commit: Commit, folder: str,
                load: Callable[[bytes, str], object]) -> list[tuple[str, object]]:
    """Like ``added_records``, but only below ``folder``; a commit that left the folder's
    tree as it was costs two lookups, not a diff."""
    if commit.id in _added:
        return [(p, load(store[oid(sha)].as_raw_string(), p)) for p, sha in _added[commit.id]
                if p.startswith(folder + "/")]
    parent = store[commit.parents[0]].tree if commit.parents else None  # type: ignore[attr-defined]
    new, old = _entry(store, commit.tree, folder), _entry(store, parent, folder)
    if new is None or new == old:
        return []
    return [(path, load(store[oid(sha)].as_raw_string(), path)) for path, sha in
            added_between(store, oid(old) if old else None, oid(new), f"{folder}/")]


def added_records(store: BaseObjectStore, commit: Commit,
                  load: Callable[[bytes, str], object]) -> list[tuple[str, object]]:
    """(path, loaded record) for every file ``commit`` added to its first parent's tree."""
    return [(p, load(store[oid(sha)].as_raw_string(), p)) for p, sha in added_blobs(store, commit)]
