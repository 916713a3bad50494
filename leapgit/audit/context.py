"""What every check of one audit reads, opened once: the ledger at any of its commits with
each record parsed and validated once (``AuditView``), the ledger's history as git diffed
it (``audit.ledger``), the commit graph (``audit.graph``) and the objects, each read once
(``audit.objects``), handed to the rules as ``rules.objects.Objects``."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from leapgit import git
from leapgit.audit.graph import Graph
from leapgit.audit.objects import AuditObjects, GitRepoView, ReadStore
from leapgit.ledger.view import LedgerView
from leapgit.rules.context import PushContext

R = TypeVar("R", bound="Loadable")

if TYPE_CHECKING:
    from dulwich.objects import Tree

    from leapgit.audit.index import LedgerIndex
    from leapgit.audit.ledger import LedgerHistory
    from leapgit.gitobj import GitRepo
    from leapgit.records.kinds import Loadable
    from leapgit.records.types import Config
    from leapgit.rules.context import RefUpdate


class AuditView(LedgerView):
    """A ledger view whose records are parsed, validated and built into their type once per
    blob for the whole audit, however many checks read them (a record type is frozen:
    views at several ledger commits share what they built; the same bytes parse and
    validate the same way, so an entry never goes stale)."""

    def __init__(self, repo: GitRepo, commit: str | None,
                 built: dict[tuple[str, type], Any], index: LedgerIndex | None = None
                 ) -> None:
        super().__init__(repo, commit)
        self._built = built
        self._index = index
        # where the commit stands in a history that only ever added: paths and folders are
        # answered from the history's index, no tree parsed (``audit.index``)
        self._place = index.place(commit) if index is not None else None

    def _walk(self, path: str) -> tuple[int, bytes] | None:
        if self._place is None or self._index is None:
            return super()._walk(path)
        return self._index.entry(path, self._place)

    def list(self, directory: str) -> list[str]:
        if self._place is None or self._index is None:
            return super().list(directory)
        return self._index.names(directory, self._place)

    def _tree(self, sha: bytes) -> Tree:
        """Straight from the audit's store, which keeps what it read in bulk for the whole
        audit and what it read one by one while recent: the views' own bounded cache only
        copied it (py-spy, a 10,000-ball audit: 7% of its time went to keeping that cache
        in order)."""
        try:
            return self._repo.object_store[sha]  # type: ignore[index,return-value]
        except KeyError:
            return super()._tree(sha)  # says which object is missing (LedgerCorrupt)

    def record(self, path: str, record_type: type[R]) -> R | None:
        blob = self.blob_id(path)
        if blob is None:
            return super().record(path, record_type)
        key = (blob, record_type)
        if key not in self._built:
            self._built[key] = super().record(path, record_type)
        return self._built[key]


@dataclass
class AuditContext:
    root: Path
    config: Config
    repo: GitRepo  # the repository as dulwich opens it
    history: LedgerHistory
    graph: Graph
    store: ReadStore
    _views: dict[str | None, LedgerView] = field(default_factory=dict)
    _built: dict[tuple[str, type], Any] = field(default_factory=dict)

    @classmethod
    def open(cls, root: Path, config: Config, repo: GitRepo, history: LedgerHistory,
             tip: str | None) -> AuditContext:
        store = ReadStore(root, repo)
        # what the checks read all of: every record's blob, every ledger commit (the
        # signature audit judges each), and every folder of the ledger's tip unless the
        # views read the history's index instead (``AuditView``)
        store.prefetch(itertools.chain(
            (blob for added in history.added.values() for _, blob in added),
            [] if history.index.place(tip) is not None else _trees(root, tip),
            history.parent))
        return cls(root, config, repo, history, Graph(root), store)

    @property
    def git(self) -> GitRepo:
        """The repository with its objects read through this audit's store (what the rules,
        the ledger views and the signature audit read)."""
        return cast("GitRepo", GitRepoView(self.repo, self.store))

    @property
    def spine_ref(self) -> str:
        return f"refs/heads/{self.config.spine}"

    def view_at(self, commit: str | None) -> LedgerView:
        """The ledger as it stood at ``commit`` (None: before its first commit)."""
        if commit not in self._views:
            self._views[commit] = AuditView(self.git, commit, self._built,
                                            self.history.index)
        return self._views[commit]

    def objects(self, refs: Mapping[str, str | None]) -> AuditObjects:
        """The objects with the refs as they stood at one point of the history."""
        return AuditObjects(self.git, self.store, self.graph, refs)

    def push(self, upd: RefUpdate, refs: Mapping[str, str | None]) -> PushContext:
        """One landed ref update as ``pre-receive`` judged it: the refs as they stood, the
        ledger read through this audit's views."""
        ledger = refs.get(self.config.ledger_ref)
        return PushContext(self.objects(refs), self.config, (upd,),
                           _views={ledger: self.view_at(ledger)})

    def close(self) -> None:
        self.store.close()


def _trees(root: Path, commit: str | None) -> list[str]:
    """The ids of every tree of ``commit`` (its root tree included): one `git ls-tree`."""
    if commit is None:
        return []
    out = git.run(["ls-tree", "-r", "-t", "-z", commit], root, check=False).stdout
    found = []
    for entry in out.split(b"\0"):
        meta = entry.partition(b"\t")[0].split()  # <mode> <type> <id>
        if len(meta) == 3 and meta[1] == b"tree":
            found.append(meta[2].decode())
    return [f"{commit}^{{tree}}", *found]
