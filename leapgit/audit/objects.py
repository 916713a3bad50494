"""The objects the audit hands the rules (``rules.objects.Objects``), each read and parsed
once for the whole audit: in-process through the repository's own object store, and in bulk
through one `git cat-file --batch` stream where the audit knows up front what it will read
(every record's blob, every folder of the ledger's tip, every ledger commit). Like every
git leapgit runs (issue 18 F3), the stream ignores replace refs: the audit judges the objects
themselves, as dulwich reads them. Ancestry and lines of commits come from the commit graph
git listed once (``audit.graph``), never from a walk per question."""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from dulwich.object_store import MemoryObjectStore
from dulwich.objects import ShaFile

from leapgit import git
from leapgit.gitobj import oid
from leapgit.records.yamlio import MAX_BYTES
from leapgit.rules.objects import Objects

if TYPE_CHECKING:
    from dulwich.config import ConfigFile, StackedConfig
    from dulwich.objects import Commit, ObjectID, RawObjectID
    from dulwich.refs import RefsContainer

    from leapgit.audit.graph import Graph
    from leapgit.gitobj import GitRepo

_TYPES = {b"commit": 1, b"tree": 2, b"blob": 3, b"tag": 4}
# Objects read one by one (code trees and commits: each merge reads its own, and its
# neighbours') are kept while recent; what was read in bulk is kept for the whole audit.
_RECENT_MAX = 50_000


class ReadStore(MemoryObjectStore):
    """The repository's objects, each parsed once: what ``prefetch`` read for the whole
    audit, what a miss read while it is recent."""

    def __init__(self, root: Path, repo: GitRepo) -> None:
        super().__init__()
        self.root = root
        self.disk = repo.object_store  # the repository's own: where a miss is read
        self._recent: dict[ObjectID, ShaFile] = {}  # what misses read, most recent last
        # (old tree, new tree) -> the paths changed between them, as git diffed them
        self.diffs: dict[tuple[bytes, bytes], frozenset[str]] = {}

    def __getitem__(self, sha: ObjectID | RawObjectID) -> ShaFile:
        key = oid(sha if len(sha) == 40 else sha.hex())
        found = self._data.get(key)
        if found is None:
            found = self._recent.pop(key, None)
            if found is None:
                type_num, raw = self.disk.get_raw(key)
                found = _parsed(key, type_num, raw)
            if len(self._recent) >= _RECENT_MAX:
                del self._recent[next(iter(self._recent))]  # the least recently read
            self._recent[key] = found
        return found

    def __contains__(self, sha: object) -> bool:
        try:
            self[sha]  # type: ignore[index]
        except KeyError:
            return False
        return True

    def contains_loose(self, sha: ObjectID | RawObjectID) -> bool:
        return sha in self

    def prefetch(self, names: Iterable[str]) -> None:
        """Read many objects (ids, or names such as ``<commit>^{tree}``) in one `git cat-file
        --batch` stream, at git's own speed (the blobs of every ledger record). A blob over
        the records' cap is left to the reader that refuses it from its header (issue 18
        F9: a small pack entry may inflate to hundreds of megabytes)."""
        listed = _cat_file(self.root, "--batch-check=%(objectname) %(objecttype) "
                           "%(objectsize)", [n.encode() for n in dict.fromkeys(names)])
        todo = list(dict.fromkeys(
            sha for sha, kind, size in (line.split() for line in listed.splitlines()
                                        if line.count(b" ") == 2)
            if kind in _TYPES and not (kind == b"blob" and int(size) > MAX_BYTES)
            and oid(sha) not in self._data))
        data, at = _cat_file(self.root, "--batch", todo), 0
        for _ in todo:
            end = data.find(b"\n", at)
            header = data[at:end].split()  # <id> <type> <size>
            if end < 0 or len(header) != 3:
                break
            at, size = end + 1, int(header[2])
            sha = oid(header[0])
            self._data[sha] = _parsed(sha, _TYPES[header[1]], data[at:at + size])
            at += size + 1

    def prefetch_diffs(self, pairs: Iterable[tuple[str, str]]) -> None:
        """The paths changed between each pair of trees, for all of them in one `git
        diff-tree --stdin` stream (no renames, as ``slices.diff.touched_paths`` reads a
        diff: a rename touches both paths); a pair git printed nothing for is left to it."""
        todo = list(dict.fromkeys(p for p in pairs if (oid(p[0]), oid(p[1])) not in self.diffs))
        if not todo:
            return
        # --ignore-submodules=none: a checkout's .gitmodules must not hide a gitlink change
        out = subprocess.run(["git", "diff-tree", "--stdin", "-r", "--no-renames", "--raw",
                              "--ignore-submodules=none",
                              "-z"], cwd=self.root, capture_output=True,
                             input="".join(f"{a} {b}\n" for a, b in todo).encode(),
                             env=git.scrubbed_env(), check=False)
        if out.returncode == 0:
            self.diffs.update(_diffs(out.stdout, {f"{a} {b}".encode(): (oid(a), oid(b))
                                                  for a, b in todo}))


def _diffs(data: bytes, asked: Mapping[bytes, tuple[bytes, bytes]]
           ) -> dict[tuple[bytes, bytes], frozenset[str]]:
    """`git diff-tree --stdin --raw -z` output: for each pair its echo (``<a> <b>``, a
    line), then an entry per changed path (``:<meta>`` NUL, the path NUL). Any output that
    does not read that way ends the reading; what was read before it stands."""
    found: dict[tuple[bytes, bytes], set[str]] = {}
    pair: tuple[bytes, bytes] | None = None
    at = 0
    while at < len(data):
        if data[at:at + 1] == b":" and pair is not None:
            meta_end = data.find(b"\0", at)
            path_end = data.find(b"\0", meta_end + 1) if meta_end >= 0 else -1
            if path_end < 0:
                found.pop(pair, None)  # cut short: that pair is left to the slow path
                break
            found[pair].add(data[meta_end + 1:path_end].decode("utf-8", "surrogateescape"))
            at = path_end + 1
            continue
        end = data.find(b"\n", at)
        pair = asked.get(data[at:end]) if end >= 0 else None
        if pair is None:
            break
        found[pair] = set()
        at = end + 1
    return {k: frozenset(v) for k, v in found.items()}


def _parsed(sha: ObjectID, type_num: int, raw: bytes) -> ShaFile:
    return ShaFile.from_raw_string(type_num, raw, verify_sha=sha)  # checked, as dulwich does


def _cat_file(root: Path, mode: str, names: list[bytes]) -> bytes:
    if not names:
        return b""
    return subprocess.run(["git", "cat-file", mode], cwd=root, input=b"\n".join(names) + b"\n",
                          capture_output=True, env=git.scrubbed_env(), check=False).stdout


class _Parents:
    """dulwich's parents provider over a ``ReadStore`` (``dulwich.graph`` asks for one)."""

    def __init__(self, store: ReadStore) -> None:
        self.store = store

    def get_parents(self, commit_id: ObjectID, commit: Commit | None = None
                    ) -> list[ObjectID]:
        found = commit if commit is not None else self.store[commit_id]
        return list(found.parents)  # type: ignore[attr-defined]


class GitRepoView:
    """A repository as the rules and ledger views open it (``gitobj.GitRepo``), its objects
    read through a ``ReadStore``; refs and config are the repository's own."""

    def __init__(self, repo: GitRepo, store: ReadStore) -> None:
        self._repo = repo
        self.object_store = store

    @property
    def refs(self) -> RefsContainer:
        return self._repo.refs

    def __getitem__(self, sha: ObjectID) -> ShaFile:
        return self.object_store[sha]

    def get_config(self) -> ConfigFile:
        return self._repo.get_config()

    def get_config_stack(self) -> StackedConfig:
        return self._repo.get_config_stack()

    def parents_provider(self) -> _Parents:
        return _Parents(self.object_store)

    def get_shallow(self) -> set[ObjectID]:
        return self._repo.get_shallow()

    def close(self) -> None:
        """The audit closes the store and the repository it came from."""


class AuditObjects(Objects):
    """``Objects`` over a ``ReadStore``, with the refs as the audit says they stood (a ref
    not named did not exist), and ancestry and lines from the commit graph."""

    def __init__(self, repo: GitRepo, store: ReadStore, graph: Graph,
                 refs: Mapping[str, str | None]) -> None:
        super().__init__(repo)
        self.store = store  # type: ignore[assignment]
        self.diffs = store.diffs  # shared by every ``at``: the store's, filled up front
        self.graph = graph
        self.refs = dict(refs)

    def ref(self, name: str) -> str | None:
        return self.refs.get(name)

    def at(self, refs: Mapping[str, str | None]) -> AuditObjects:
        """The same objects, with the refs as they stood elsewhere in the history."""
        return AuditObjects(self.repo, self.store, self.graph, refs)  # type: ignore[arg-type]

    def touched(self, old_tree: bytes | None, new_tree: bytes) -> set[str]:
        found = self.diffs.get((old_tree, new_tree)) if old_tree is not None else None
        return set(found) if found is not None else super().touched(old_tree, new_tree)

    def is_ancestor(self, older: str, newer: str) -> bool:
        found = self.graph.is_ancestor(older, newer)
        return super().is_ancestor(older, newer) if found is None else found

    def new_commits(self, include: str, exclude: Sequence[str] = ()) -> list[Commit]:
        """A line back to the one excluded commit is read from the graph (a ball branch
        holds no merge, L9); anything else is walked."""
        if len(exclude) == 1 and include != exclude[0]:
            line = self.graph.line_since(include, exclude[0])
            if line is not None:
                return [self.commit(sha) for sha in reversed(line)]
        return super().new_commits(include, exclude)
