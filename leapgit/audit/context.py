"""What every check of one audit reads, opened once: the ledger at any of its commits with
each record parsed and validated once (``ParsedRecords``), the ledger's history as git
diffed it (``audit.ledger``), the commit graph (``audit.graph``) and the objects as git reads
them (``audit.objects``), handed to the rules as ``rules.objects.Objects``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from leapgit.audit.graph import Graph
from leapgit.audit.objects import AuditObjects, GitRepoView, ReadStore
from leapgit.ledger.store import LedgerView
from leapgit.records.cache import RecordCache

R = TypeVar("R", bound="Loadable")

if TYPE_CHECKING:
    from leapgit.audit.ledger import LedgerHistory
    from leapgit.gitobj import GitRepo
    from leapgit.records.kinds import Loadable
    from leapgit.records.types import Config
    from leapgit.rules.context import PushContext, RefUpdate


class ParsedRecords(RecordCache):
    """The records one audit parsed and validated, by blob id, in memory (nothing is
    written): a record read by several checks, or at several ledger commits, is parsed once.
    The same bytes parse and validate the same way, so an entry never goes stale."""

    def __init__(self) -> None:  # no folder: RecordCache's disk is never touched
        self._found: dict[str, dict[str, Any]] = {}

    def get(self, blob: str) -> dict[str, Any] | None:
        return self._found.get(blob)

    def put(self, blob: str, record: dict[str, Any]) -> None:
        self._found[blob] = record


class AuditView(LedgerView):
    """A ledger view whose typed records are built once per blob for the whole audit (a
    record type is frozen: views at several commits share what they built)."""

    def __init__(self, repo: GitRepo, commit: str | None, records: ParsedRecords,
                 built: dict[tuple[str, type], Any]) -> None:
        super().__init__(repo, commit, records)
        self._built = built

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
    records: ParsedRecords = field(default_factory=ParsedRecords)
    _views: dict[str | None, LedgerView] = field(default_factory=dict)
    _built: dict[tuple[str, type], Any] = field(default_factory=dict)

    @classmethod
    def open(cls, root: Path, config: Config, repo: GitRepo, history: LedgerHistory,
             tip: str | None) -> AuditContext:
        store = ReadStore(root, repo)
        # every record's blob and every folder of the ledger's tip: the checks read them all
        store.prefetch(blob for added in history.added.values() for _, blob in added)
        store.prefetch(_trees(root, tip))
        store.prefetch(history.parent)  # the ledger's commits: the signature audit reads all
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
            self._views[commit] = AuditView(self.git, commit, self.records, self._built)
        return self._views[commit]

    def objects(self, refs: Mapping[str, str | None]) -> AuditObjects:
        """The objects with the refs as they stood at one point of the history."""
        return AuditObjects(self.git, self.store, self.graph, refs)

    def push(self, upd: RefUpdate, refs: Mapping[str, str | None]) -> PushContext:
        """One landed ref update as ``pre-receive`` judged it: the refs as they stood, the
        ledger read through this audit's parsed records."""
        from leapgit.rules.context import PushContext

        ledger = refs.get(self.config.ledger_ref)
        return PushContext(self.objects(refs), self.config, (upd,),
                           _views={ledger: self.view_at(ledger)})

    def close(self) -> None:
        self.store.close()


def _trees(root: Path, commit: str | None) -> list[str]:
    """The ids of every tree of ``commit`` (its root tree included): one `git ls-tree`."""
    if commit is None:
        return []
    from leapgit import git

    out = git.run(["ls-tree", "-r", "-t", "-z", "--format=%(objecttype) %(objectname)",
                   commit], root, check=False).stdout
    found = [line[5:].decode() for line in out.split(b"\0") if line.startswith(b"tree ")]
    return [f"{commit}^{{tree}}", *found]
