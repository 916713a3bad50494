"""One write at a time, and recovery after a writer that died mid-write. A write runs under
leapgit's process-wide writer lock (``lock.WriterLock`` on ``<git dir>/leap-ledger.lock``)
with a marker file present only while it writes; the next writer that finds the marker
cleans up what a dead one (SIGKILL, power loss) may have left."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from leapgit.errors import LedgerBusy
from leapgit.gitobj import oid, refname
from leapgit.ledger.lock import LockTimeout, WriterLock
from leapgit.records.trailers import RECORD, parse

if TYPE_CHECKING:
    from leapgit.gitobj import GitRepo

LOCK_TIMEOUT = 60.0
EMPTY_LOCK_GRACE = 0.1  # seconds: git writes its ref lock's content right after creating it
WRITING_MARKER = "leap-ledger.writing"  # present only while a leapgit writer is mid-write

_T = TypeVar("_T")
_locks: dict[str, WriterLock] = {}  # one lock object per path per process


def lock_path(git_dir: Path) -> Path:
    return git_dir / "leap-ledger.lock"


def locked(repo: GitRepo, git_dir: Path, ref: str, write: Callable[[], _T]) -> _T:
    """Run one write under leapgit's lock, with the mid-write marker that lets the next
    writer clean up after one that died (SIGKILL, power loss)."""
    lock = _writer_lock(lock_path(git_dir))
    marker = git_dir / WRITING_MARKER
    try:
        with lock:
            if marker.exists():
                recover_after_crash(repo, git_dir, ref)
            marker.touch()
            try:
                return write()
            finally:
                marker.unlink(missing_ok=True)
    except LockTimeout:
        raise LedgerBusy(
            f"another leapgit process held the ledger lock for {LOCK_TIMEOUT:.0f} s",
            file=str(lock_path(git_dir)), hint="nothing was written; try again",
        ) from None


def _writer_lock(path: Path) -> WriterLock:
    key = str(path)
    if key not in _locks:
        _locks[key] = WriterLock(key, LOCK_TIMEOUT, on_wait=_say_waiting)
    return _locks[key]


def _say_waiting(path: str) -> None:
    sys.stderr.write(f"leap: waiting for the ledger lock ({path}): another leapgit process is "
                     f"writing; giving up after {LOCK_TIMEOUT:.0f} s\n")
    sys.stderr.flush()


def recover_after_crash(repo: GitRepo, git_dir: Path, ref: str) -> None:
    """A leapgit writer died inside a write (it left the marker). We hold leapgit's lock,
    so the lock files it may have left are no one's now: dulwich's loose-object locks
    (git never names a loose object ``*.lock``) and a ref lock holding a leapgit commit.
    A ref lock holding anything else may be a live git transaction: it is left alone."""
    objects = git_dir / "objects"
    removed = 0
    for folder in objects.glob("[0-9a-f][0-9a-f]"):
        for stale in folder.glob("*.lock"):
            stale.unlink(missing_ok=True)
            removed += 1
    ref_lock = git_dir / (ref + ".lock")
    if ref_lock.exists() and _leapgit_lock(repo, ref_lock):
        # F7: while the dead writer's lock stands, no git can move the ref or log a move
        _drop_unmoved_reflog_line(repo, git_dir, ref, ref_lock.read_bytes().strip())
        ref_lock.unlink(missing_ok=True)
        removed += 1
    if removed:
        sys.stderr.write(
            f"leap: warning: removed {removed} lock file(s) left in {git_dir} by a "
            "leapgit writer that died mid-write; the ledger ref was never moved by it\n"
        )


def _drop_unmoved_reflog_line(repo: GitRepo, git_dir: Path, ref: str, held: bytes) -> None:
    """Issue 18 F7 (L8): dulwich appends the reflog line while it holds the ref's lock, then
    flushes and renames the lock into place. A writer killed in between left a last line
    moving the ref from its tip to the commit the dead writer built (the one the lock
    holds, when its bytes got there), a move that never happened (the audit would read it
    as a rewrite of the ledger): drop that line, as if the write had never begun."""
    log = git_dir / "logs" / ref
    try:
        data = log.read_bytes()
    except OSError:
        return
    lines = data.splitlines(keepends=True)
    fields = lines[-1].split(b"\t", 1)[0].split(b" ") if lines else []
    tip: bytes
    try:
        tip = repo.refs[refname(ref.encode())]
    except KeyError:
        tip = b"0" * 40
    if len(fields) < 2 or fields[0] != tip or fields[1] == tip or \
            (held and fields[1] != held) or oid(fields[1]) not in repo.object_store:
        return
    keep = b"".join(lines[:-1])
    tmp = log.with_name(log.name + ".leap-tmp")
    tmp.write_bytes(keep)
    tmp.replace(log)


def _leapgit_lock(repo: GitRepo, lock: Path) -> bool:
    content = lock.read_bytes().strip()
    if not content:
        # Empty: our dead writer was killed between creating and filling it (git fills
        # its own within microseconds). Look once more before deciding.
        time.sleep(EMPTY_LOCK_GRACE)
        try:
            return not lock.read_bytes().strip()
        except FileNotFoundError:
            return False
    try:
        obj = repo.object_store[oid(content)]
    except (KeyError, ValueError):
        return False
    return parse(getattr(obj, "message", b"")).get(RECORD) is not None
