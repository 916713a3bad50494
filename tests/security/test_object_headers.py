"""Blind review r2 of issue 18: ``gitobj.object_size`` read a fixed 4096 bytes of a pack
entry and inflated at most 32 bytes of a delta's stream: a zlib stream that opens with
empty stored blocks (valid deflate, 5 bytes each, inflating to nothing; what a writer
flushing with Z_FULL_FLUSH emits) gave nothing, and reading the delta's header raised
IndexError in the hook. The objects here are built by hand into real packs that
`git index-pack` accepts, and loose objects `git cat-file` reads; the header readers agree
with `git cat-file -s` / `-t` and never crash."""

from __future__ import annotations

import hashlib
import zlib
from pathlib import Path

import pytest

from leapgit.gitobj import object_size, object_type
from tests.support import git

EMPTY_STORED_BLOCK = b"\x00\x00\x00\xff\xff"  # BFINAL 0, BTYPE 00, LEN 0, NLEN 0xffff


def padded_zlib(data: bytes, empties: int) -> bytes:
    """A zlib stream of ``data`` that opens with ``empties`` empty stored blocks."""
    raw = zlib.compressobj(9, zlib.DEFLATED, -15)
    body = raw.compress(data) + raw.flush()
    stream = b"\x78\x01" + EMPTY_STORED_BLOCK * empties + body + \
        zlib.adler32(data).to_bytes(4, "big")
    assert zlib.decompress(stream) == data
    return stream


def entry_header(kind: int, size: int) -> bytes:
    out = [(kind << 4) | (size & 0x0F)]
    size >>= 4
    while size:
        out[-1] |= 0x80
        out.append(size & 0x7F)
        size >>= 7
    return bytes(out)


def varint(n: int) -> bytes:
    out = []
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        if n <= 0x7F:
            return bytes(out)
        n >>= 7


def ofs(n: int) -> bytes:
    out = [n & 0x7F]
    n >>= 7
    while n:
        n -= 1
        out.insert(0, 0x80 | (n & 0x7F))
        n >>= 7
    return bytes(out)


def literal_delta(source: bytes, target: bytes) -> bytes:
    """A git delta that inserts ``target`` whole (inserts of at most 127 bytes each)."""
    out = varint(len(source)) + varint(len(target))
    for at in range(0, len(target), 127):
        piece = target[at:at + 127]
        out += bytes([len(piece)]) + piece
    return out


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def write_pack(repo: Path, entries: list[bytes]) -> None:
    pack = b"PACK" + (2).to_bytes(4, "big") + len(entries).to_bytes(4, "big") + \
        b"".join(entries)
    pack += hashlib.sha1(pack).digest()
    git("index-pack", "--stdin", cwd=repo, input=pack)


BASE = b"def base():\n    return 1\n" * 8
TARGET = BASE + b"def target():\n    return 2\n" * 8


@pytest.mark.parametrize("delta", ["ofs", "ref"])
@pytest.mark.parametrize("empties", [0, 1000, 5000])
def test_a_delta_whose_stream_opens_with_empty_blocks(tmp_path: Path, delta: str,
                                                      empties: int) -> None:
    from dulwich.repo import Repo

    repo = tmp_path / "r.git"
    git("init", "-q", "--bare", str(repo), cwd=tmp_path)
    first = entry_header(3, len(BASE)) + padded_zlib(BASE, empties)
    data = literal_delta(BASE, TARGET)
    if delta == "ofs":
        second = entry_header(6, len(data)) + ofs(len(first)) + padded_zlib(data, empties)
    else:
        second = entry_header(7, len(data)) + bytes.fromhex(blob_id(BASE)) + \
            padded_zlib(data, empties)
    write_pack(repo, [first, second])
    for sha in (blob_id(BASE), blob_id(TARGET)):
        assert git("cat-file", "-s", sha, cwd=repo) == str(len(BASE if sha == blob_id(BASE)
                                                              else TARGET))
        with Repo(str(repo)) as r:
            assert object_size(r.object_store, sha.encode()) == \
                int(git("cat-file", "-s", sha, cwd=repo))
            assert object_type(r.object_store, sha.encode()) == 3


@pytest.mark.parametrize("empties", [0, 1000])
def test_a_loose_object_whose_stream_opens_with_empty_blocks(tmp_path: Path,
                                                             empties: int) -> None:
    from dulwich.repo import Repo

    repo = tmp_path / "r.git"
    git("init", "-q", "--bare", str(repo), cwd=tmp_path)
    sha = blob_id(TARGET)
    path = repo / "objects" / sha[:2] / sha[2:]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(padded_zlib(b"blob %d\0" % len(TARGET) + TARGET, empties))
    assert git("cat-file", "-t", sha, cwd=repo) == "blob"
    with Repo(str(repo)) as r:
        assert object_size(r.object_store, sha.encode()) == \
            int(git("cat-file", "-s", sha, cwd=repo))
        assert object_type(r.object_store, sha.encode()) == 3


def test_a_truncated_loose_object_is_unknown_never_a_crash(tmp_path: Path) -> None:
    """A loose object whose stream ends before its header: no size to read (None, the
    caller then reads the object, and dulwich refuses it), never an IndexError."""
    from dulwich.repo import Repo

    repo = tmp_path / "r.git"
    git("init", "-q", "--bare", str(repo), cwd=tmp_path)
    sha = blob_id(b"x")
    path = repo / "objects" / sha[:2] / sha[2:]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(padded_zlib(b"blob", 3))
    with Repo(str(repo)) as r:
        assert object_size(r.object_store, sha.encode()) is None
        assert object_type(r.object_store, sha.encode()) is None


def test_a_repack_after_dulwich_listed_the_packs_leaves_the_header_readers_whole(
        tmp_path: Path) -> None:
    """git repacks on its own (after a fetch, past 50 packs) while a leapgit process holds
    the packs dulwich listed; a header read then finds a pack gone (before:
    PackFileDisappeared, an internal error): it says it does not know, and the object is
    read whole as ever."""
    from leapgit.ledger.repo import open_repo
    from tests.support import make_repo

    repo = make_repo(tmp_path / "r", {"a.txt": "a\n"})
    blobs = []
    for n in range(3):  # three packs
        (repo / "a.txt").write_text(f"{n}\n" * (n + 1))
        git("commit", "-q", "-am", f"c{n}", cwd=repo)
        blobs.append(git("rev-parse", "HEAD:a.txt", cwd=repo))
        git("repack", "-q", cwd=repo)
    with open_repo(str(repo / ".git")) as opened:
        store = opened.object_store
        assert len(store.packs) == 3
        git("repack", "-q", "-a", "-d", cwd=repo)  # one pack now; the three are gone
        for blob in blobs:
            assert object_size(store, blob.encode()) in (None, int(git("cat-file", "-s", blob,
                                                                        cwd=repo)))
            assert object_type(store, blob.encode()) in (None, 3)
            assert store[blob.encode()].as_raw_string() == \
                git("cat-file", "blob", blob, cwd=repo).encode() + b"\n"


def test_a_pack_whose_data_went_before_its_index_leaves_the_header_readers_whole(
        tmp_path: Path) -> None:
    """git's repack removes an old pack's data before its index: in between, dulwich still
    finds the object in the index (a blind review: the data file's name was asked outside
    the guard, PackFileDisappeared in a pre-receive)."""
    from leapgit.ledger.repo import open_repo
    from tests.support import make_repo

    repo = make_repo(tmp_path / "r", {"a.txt": "a\n"})
    git("repack", "-q", "-a", "-d", cwd=repo)
    blob = git("rev-parse", "HEAD:a.txt", cwd=repo)
    with open_repo(str(repo / ".git")) as opened:
        store = opened.object_store
        assert object_type(store, blob.encode()) == 3  # the pack is open, its index read
        for pack in (repo / ".git" / "objects" / "pack").glob("*.pack"):
            pack.unlink()  # the data gone, the index left
        assert object_type(store, blob.encode()) in (None, 3)
        assert object_size(store, blob.encode()) in (None, 2)
