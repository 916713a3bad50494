"""Typed views of dulwich's object ids and ref names (dulwich types them as NewTypes over
bytes); one boundary for the conversion instead of casts scattered through the code."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, cast

if TYPE_CHECKING:
    from dulwich.config import ConfigFile, StackedConfig
    from dulwich.object_store import DiskObjectStore
    from dulwich.objects import ObjectID, ShaFile
    from dulwich.refs import Ref, RefsContainer


def oid(value: bytes | str) -> ObjectID:
    return cast("ObjectID", _raw(value))


def refname(value: bytes | str) -> Ref:
    return cast("Ref", _raw(value))


def _raw(value: bytes | str) -> bytes:
    """Text read from git as surrogateescape gets its own bytes back (issue 18 F9)."""
    return value.encode("utf-8", "surrogateescape") if isinstance(value, str) else value


class GitRepo(Protocol):
    """What leapgit reads and writes a repository through: a dulwich ``Repo``, or the
    ledger's ``PlainRepo`` (``ledger.repo``), which opens the same object store and refs
    without ``Repo``'s start-up cost."""

    @property
    def object_store(self) -> DiskObjectStore: ...

    @property
    def refs(self) -> RefsContainer: ...

    def __getitem__(self, sha: ObjectID) -> ShaFile: ...

    def get_config(self) -> ConfigFile: ...

    def get_config_stack(self) -> StackedConfig: ...

    def parents_provider(self) -> Any: ...

    def close(self) -> None: ...
