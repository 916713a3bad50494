"""Reading the ledger: a read-only look at one ledger commit (``LedgerView``), where every
record read is validated and built into its type, and the parsed trees it walks, cached by
id (a tree is immutable)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from leapgit.errors import InvalidRecord, LeapError, UsageError
from leapgit.gitobj import object_size, oid
from leapgit.records import yamlio
from leapgit.records.yamlio import MAX_BYTES, freeze, thaw

if TYPE_CHECKING:
    from dulwich.object_store import BaseObjectStore
    from dulwich.objects import Tree

    from leapgit.gitobj import GitRepo
    from leapgit.records.cache import RecordCache
    from leapgit.records.kinds import Loadable

R = TypeVar("R", bound="Loadable")
TREE_MODE = 0o040000
# Parsed trees by id, one cache per object store: a tree is immutable, so an entry never goes
# stale, and keeping stores apart never lets one repository "see" another's objects.
_tree_caches: dict[str, dict[bytes, Tree]] = {}
_TREE_CACHE_MAX = 4096
# and the entries they hold, all trees of a cache together: 4,096 versions of a folder of
# 5,000 leases (a push of 10^4 lease commits) held ~2 GB
_tree_entries: dict[str, int] = {}
_TREE_ENTRIES_MAX = 1 << 20
# Validated records by blob id, one memo per object store as the trees': the same bytes
# parse and validate the same way (the schemas do not change under a running process), so a
# record read again at a newer ledger commit costs a copy, not a YAML parse (3 ms each;
# `leap run` reads the same records at every turn). Each reader gets its own copy: no
# reader's change reaches another. Bounded by the bytes parsed (a record may be 1 MiB).
_parsed: dict[tuple[str, str], bytes] = {}  # frozen (``yamlio.freeze``)
_parsed_bytes = 0
_PARSED_MAX_BYTES = 64 << 20


def _remember(key: tuple[str, str], raw: dict[str, Any], size: int) -> None:
    global _parsed_bytes
    if _parsed_bytes + size > _PARSED_MAX_BYTES:
        _parsed.clear()
        _parsed_bytes = 0
    _parsed[key] = freeze(raw)
    _parsed_bytes += size


class LedgerMissing(UsageError):
    """No ledger yet: the ledger ref does not exist."""


class LedgerCorrupt(LeapError):
    """An object the ledger names is missing from the repository."""


class NotACommit(LedgerCorrupt):
    """A ledger view asked of an object that is no commit: a ref pointed by hand at a blob,
    a tree, a tag, or at nothing this repository holds."""


def commit_tree(repo: GitRepo, commit: str) -> bytes:
    """The tree of ``commit``, or ``NotACommit`` saying what the id names instead."""
    try:
        found = repo.object_store[oid(commit)]
    except KeyError:
        raise NotACommit(f"names nothing in this repository, {commit[:12]}, not a commit"
                         ) from None
    if found.type_name != b"commit":
        raise NotACommit(f"names a {found.type_name.decode()}, {commit[:12]}, not a commit")
    return found.tree  # type: ignore[attr-defined]


def cached_tree(repo: GitRepo, sha: bytes) -> Tree:
    return cached_tree_in(repo.object_store, sha)


def cached_tree_in(store: BaseObjectStore, sha: bytes) -> Tree:
    key = str(getattr(store, "path", id(store)))
    cache = _tree_caches.setdefault(key, {})
    tree = cache.pop(sha, None)
    if tree is not None:
        cache[sha] = tree  # most recently used last: the root and folder trees stay hot
    else:
        try:
            tree = store[oid(sha)]  # type: ignore[assignment]
        except KeyError:
            raise LedgerCorrupt(
                f"object {sha.decode()} is missing from {store}",
                hint="the repository is damaged: run `git fsck` and restore it from a clone",
            ) from None
        held = _tree_entries.get(key, 0) + _entries_of(tree)
        while cache and (len(cache) >= _TREE_CACHE_MAX or held > _TREE_ENTRIES_MAX):
            # evict the least recently used; clearing all would re-parse the big folder
            # trees on every later read, and a walk of the whole ledger would go quadratic
            held -= _entries_of(cache.pop(next(iter(cache))))
        _tree_entries[key] = held
        cache[sha] = tree  # type: ignore[assignment]
    return tree  # type: ignore[return-value]


def _entries_of(obj: object) -> int:
    return len(obj) if hasattr(obj, "__len__") else 1  # a tree's entries; anything else, 1


class LedgerView:
    """A read-only look at one ledger commit."""

    def __init__(self, repo: GitRepo, commit: str | None,
                 records: RecordCache | None = None) -> None:
        self._repo = repo
        self.commit = commit
        self.records = records
        self.tree: bytes | None = None
        # path -> its entry: a view is of one commit, which never changes (the checks of a
        # pass ask the same paths again and again)
        self._entries: dict[str, tuple[int, bytes] | None] = {}
        if commit is not None:
            self.tree = commit_tree(repo, commit)

    def _tree(self, sha: bytes) -> Tree:
        return cached_tree(self._repo, sha)

    def _entry(self, path: str) -> tuple[int, bytes] | None:
        try:
            return self._entries[path]
        except KeyError:
            pass
        found = self._entries[path] = self._walk(path)
        return found

    def _walk(self, path: str) -> tuple[int, bytes] | None:
        """``path`` one folder at a time, each folder's entry remembered like any path's:
        the records of one folder share its walk from the root (a 1,000-ball audit looked up
        255,000 trees, now a third as many). A loop, not a recursion: no depth limit."""
        entry: tuple[int, bytes] | None = (TREE_MODE, self.tree) if self.tree else None
        at = ""
        for depth, part in enumerate(path.split("/")):
            if entry is None or entry[0] != TREE_MODE:
                return None
            at = f"{at}/{part}" if depth else part
            if at in self._entries:
                entry = self._entries[at]
                continue
            tree = self._tree(entry[1])  # a missing object is corruption, not an absent record
            try:
                entry = tree[part.encode()]
            except KeyError:
                entry = None
            self._entries[at] = entry
        return entry

    def blob_id(self, path: str) -> str | None:
        entry = self._entry(path)
        if entry is None or entry[0] == TREE_MODE:
            return None
        return entry[1].decode()

    def read(self, path: str) -> bytes | None:
        entry = self._entry(path)
        if entry is None or entry[0] == TREE_MODE:
            return None
        return self._blob(entry[1], path)

    def _blob(self, sha: bytes, path: str) -> bytes:
        """A record's bytes; one over the records' cap is refused from its object header,
        never inflated (issue 18 F9: 300 MB of zeros travel as 300 KB)."""
        size = object_size(self._repo.object_store, sha)
        if size is not None and size > MAX_BYTES:
            raise InvalidRecord(f"larger than the {MAX_BYTES} byte cap ({size} bytes)",
                                file=f"{self.commit and self.commit[:12]}:{path}")
        return self._repo.object_store[oid(sha)].as_raw_string()

    def record(self, path: str, record_type: type[R]) -> R | None:
        """The record at ``path`` as ``record_type``, or None: parsed and validated against
        the schema of its kind (the ledger is data anyone can push to: every record read is
        input); a record of another kind there is an ``InvalidRecord``."""
        raw = self._validated(path)
        if raw is None:
            return None
        from leapgit.records.kinds import kind_of

        expected = kind_of(record_type)
        if raw["kind"] != expected:
            raise InvalidRecord(f"a {raw['kind']} record where a {expected} record belongs",
                                file=path, field="kind")
        return record_type.from_dict(raw)

    def check(self, path: str) -> None:
        """Parse and validate the record at ``path``, as ``record`` does (filling the record
        cache, when there is one), or raise ``InvalidRecord``."""
        self._validated(path)

    def _validated(self, path: str) -> dict[str, Any] | None:
        """The validated mapping at ``path``; it never leaves the view. With a record
        cache, bytes parsed once are not parsed again."""
        entry = self._entry(path)
        if entry is None or entry[0] == TREE_MODE:
            return None
        blob = entry[1].decode()
        hit = self.records.get(blob) if self.records is not None else None
        if hit is not None:
            return hit
        memo = (str(getattr(self._repo.object_store, "path", id(self._repo.object_store))),
                blob)
        seen = _parsed.get(memo)
        if seen is not None:
            hit = thaw(seen)
        else:
            data = self._blob(entry[1], path)
            hit = yamlio.loads_shared(data, f"{self.commit and self.commit[:12]}:{path}")
            from leapgit.records import schema  # only here: a hook's records are cached

            schema.validate_record(hit, path)
            _remember(memo, hit, len(data))
        if self.records is not None:
            self.records.put(blob, hit)
        return hit

    def exists(self, path: str) -> bool:
        return self._entry(path) is not None

    def list(self, directory: str) -> list[str]:
        """Names directly under ``directory`` (files and folders), sorted."""
        entry = self._entry(directory) if directory else (
            (TREE_MODE, self.tree) if self.tree else None
        )
        if entry is None or entry[0] != TREE_MODE:
            return []
        return sorted(name.decode() for name in self._tree(entry[1]))

    def walk(self, directory: str = "") -> Iterator[str]:
        """Every file path under ``directory``."""
        for name in self.list(directory):
            path = f"{directory}/{name}" if directory else name
            entry = self._entry(path)
            if entry and entry[0] == TREE_MODE:
                yield from self.walk(path)
            else:
                yield path
