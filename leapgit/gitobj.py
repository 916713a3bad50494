"""Typed views of dulwich's object ids and ref names (dulwich types them as NewTypes over
bytes); one boundary for the conversion instead of casts scattered through the code. And an
object's size read from its header, before anything inflates it."""

from __future__ import annotations

import os
import zlib
from types import TracebackType
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol, cast

from dulwich.object_store import DiskObjectStore
from dulwich.objects import hex_to_filename, hex_to_sha
from dulwich.pack import PackFileDisappeared

if TYPE_CHECKING:
    from collections.abc import Callable

    from dulwich.config import ConfigFile, StackedConfig
    from dulwich.object_store import BaseObjectStore
    from dulwich.objects import Commit, ObjectID, ShaFile
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

    def get_shallow(self) -> set[ObjectID]: ...

    def close(self) -> None: ...

    def __enter__(self) -> Any: ...

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None, /) -> Any: ...


def parents_here(repo: GitRepo) -> Callable[[Commit], list[ObjectID]]:
    """A commit's parents as git walks them in this clone: none for a commit at a shallow
    clone's cut (its named ones are not here), a graft changing nothing (the rules and the
    audit read the commits as they are). For ``dulwich.walk.Walker(get_parents=...)``."""
    cut = repo.get_shallow()
    return lambda commit: [] if commit.id in cut else list(commit.parents)


_OFS_DELTA, _REF_DELTA = 6, 7
_HEADER_READ = 4096  # bytes of a pack entry read: its header and the start of its zlib stream


def object_size(store: BaseObjectStore, sha: bytes) -> int | None:
    """The size of object ``sha`` (hex) as git counts it, read from its header without
    inflating the object (issue 18 F9: 300 MB of zeros travel as 300 KB); None when the
    store and its alternates do not hold it, or it is no store on disk. Looked up in
    dulwich's order: packs, loose, alternates."""
    if not isinstance(store, DiskObjectStore):
        return None  # a store over others (the audit's parsed cache) knows no header
    packed = _in_pack(store, hex_to_sha(oid(sha)))
    if packed is not None:
        try:
            return _packed_size(*packed)
        except FileNotFoundError:  # repacked since dulwich listed it (``_in_pack``)
            return None
    try:
        head = _loose_header(store, sha)
    except FileNotFoundError:
        pass
    else:  # "blob 12345"
        size = head.partition(b" ")[2]
        return int(size) if size.isdigit() else None
    for alternate in store.alternates:
        found = object_size(alternate, sha)
        if found is not None:
            return found
    return None


def _in_pack(store: DiskObjectStore, raw: Any) -> tuple[str, int] | None:
    """(pack file, offset) of the object whose binary id is ``raw``, in dulwich's pack order;
    None when no pack of ``store`` itself holds it, or a pack dulwich listed is gone (a
    `git repack` since, git's own after a fetch or another process's): the caller then
    reads the object whole, through dulwich, which finds the packs again."""
    for pack in store.packs:
        try:
            offset = pack.index.object_offset(raw)
            name = pack.data.filename
        except KeyError:
            continue
        except PackFileDisappeared:
            return None
        return os.path.join(store.pack_dir, name), offset
    return None


def _packed_size(path: str, offset: int) -> int | None:
    """A pack entry's size: in its header, or for a delta, the result size that opens the
    delta's own (deflated) data; None when that data ends before it says."""
    with open(path, "rb") as fh:
        fh.seek(offset)
        data = fh.read(64)  # the entry header, and a delta's base offset or id
        kind = (data[0] >> 4) & 7
        size, pos = data[0] & 0x0F, 1
        shift = 4
        while data[pos - 1] & 0x80:
            size |= (data[pos] & 0x7F) << shift
            shift, pos = shift + 7, pos + 1
        if kind == _OFS_DELTA:
            while data[pos] & 0x80:
                pos += 1
            pos += 1
        elif kind == _REF_DELTA:
            pos += 20
        else:
            return size
        fh.seek(offset + pos)
        delta = _inflated_start(fh, 2 * _VARINT_MAX)
    try:
        _source, at = _varint(delta, 0)
        return _varint(delta, at)[0]
    except IndexError:
        return None  # the delta's data ends inside its own header: corrupt


_VARINT_MAX = 10  # bytes of a size varint (64 bits, 7 a byte)


def _inflated_start(fh: BinaryIO, need: int) -> bytes:
    """The first ``need`` bytes the zlib stream at ``fh``'s position inflates to. The
    stream is read on in chunks until they arrive (blind review r2: empty stored blocks,
    5 bytes each, inflate to nothing, so no fixed read is enough); the input read is
    bounded by the file, and the output by ``need``, never by what the object inflates to."""
    inflater = zlib.decompressobj()
    out = b""
    while len(out) < need and not inflater.eof:
        chunk = inflater.unconsumed_tail or fh.read(_HEADER_READ)
        if not chunk:
            break
        out += inflater.decompress(chunk, need - len(out))
    return out


def _loose_header(store: DiskObjectStore, sha: bytes) -> bytes:
    """A loose object's header, ``blob 12345``; raises FileNotFoundError when the store
    holds no such loose object; what it holds when the stream ends before a NUL."""
    with open(hex_to_filename(os.fspath(store.path), oid(sha)), "rb") as fh:
        head = _inflated_start(fh, 64)
    return head.partition(b"\0")[0] if b"\0" in head else b""


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        shift, pos = shift + 7, pos + 1
        if not byte & 0x80:
            return value, pos


_TYPE_NAMES = {b"commit": 1, b"tree": 2, b"blob": 3, b"tag": 4}


def object_type(store: DiskObjectStore, sha: bytes, depth: int = 0) -> int | None:
    """The type number of object ``sha`` (hex) from its header, never inflating its body
    (blind review r1 F2: the tree check of a push inflated every object, blobs included);
    a delta's type is its base's, followed by offset or id. None when the store does not
    hold it, or the chain is absurdly deep (a caller then reads the object itself)."""
    if depth > 64:
        return None
    packed = _in_pack(store, hex_to_sha(oid(sha)))
    if packed is not None:
        try:
            return _packed_type(store, *packed, depth)
        except FileNotFoundError:  # repacked since dulwich listed it (``_in_pack``)
            return None
    try:
        head = _loose_header(store, sha)
    except FileNotFoundError:
        pass
    else:
        return _TYPE_NAMES.get(head.partition(b" ")[0])
    for alternate in store.alternates:  # pre-receive: the quarantine borrows the repository's
        if isinstance(alternate, type(store)):
            found = object_type(alternate, sha, depth)
            if found is not None:
                return found
    return None


def _packed_type(store: DiskObjectStore, path: str, offset: int, depth: int) -> int | None:
    with open(path, "rb") as fh:
        fh.seek(offset)
        data = fh.read(64)
    kind, pos = (data[0] >> 4) & 7, 1
    while data[pos - 1] & 0x80:
        pos += 1
    if kind == _OFS_DELTA:
        back = data[pos] & 0x7F
        while data[pos] & 0x80:
            pos += 1
            back = ((back + 1) << 7) | (data[pos] & 0x7F)
        return _packed_type(store, path, offset - back, depth + 1) if depth < 64 else None
    if kind == _REF_DELTA:
        return object_type(store, data[pos:pos + 20].hex().encode(), depth + 1)
    return kind
