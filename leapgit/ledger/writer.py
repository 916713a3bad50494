"""The ledger's one writer: a write adds files and never edits or deletes one (L8: written
truth), in one commit on the current tip, and the ref moves only by compare-and-swap
(``swap``, the one loop that moves it). When the swap loses a race (another writer, or a
plain ``git update-ref``), the commit is built again on the new tip: additions to distinct
paths commute."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar

from dulwich.file import FileLocked
from dulwich.objects import Blob

from leapgit.errors import LeapError, LedgerBusy, LedgerConflict, UsageError
from leapgit.gitobj import oid, refname
from leapgit.ledger.view import LedgerMissing

if TYPE_CHECKING:
    from leapgit.ledger.store import Ledger

MAX_ATTEMPTS = 200
_T = TypeVar("_T")


class Written(NamedTuple):
    commit: str
    paths: tuple[str, ...]
    attempts: int


class Move(NamedTuple, Generic[_T]):
    """What one attempt built on the tip it read: the commit to move the ledger ref to (None,
    or that tip itself: nothing moves), its reflog line, and what the write returns."""

    to: str | None
    reflog: bytes
    result: _T


def swap(ledger: Ledger, build: Callable[[str | None, int], Move[_T]]) -> _T:
    """Move the ledger ref to what ``build`` makes of the tip it is given (and the attempt
    number), by compare-and-swap, never a read-modify-write. A lost race, or a ref lock git
    holds right now, builds again on the tip as it is then; after ``MAX_ATTEMPTS`` it is a
    ``LedgerBusy`` and nothing moved."""
    ref = refname(ledger.ref.encode())
    refs = ledger.repo.refs
    for attempt in range(MAX_ATTEMPTS):
        old = ledger.tip()
        move = build(old, attempt)
        if move.to is None or move.to == old:
            return move.result
        reflog = ledger.committer.reflog(move.reflog)
        try:
            with uninterrupted():
                if old is None:
                    moved = refs.add_if_new(ref, oid(move.to), **reflog)
                else:
                    moved = refs.set_if_equals(ref, oid(old), oid(move.to), **reflog)
            if old is None and not moved and ledger.tip() is None:
                raise blocked_ref(ledger.ref)
        except FileLocked:
            moved = False  # git holds the ref lock right now: wait and count again
        except OSError as exc:  # the ref lock was given up: the ref did not move
            raise _ref_not_moved(ledger, exc) from None
        if moved:
            return move.result
        time.sleep(min(0.001 * (attempt + 1), 0.05))
    lock = ledger.git_dir / (ledger.ref + ".lock")
    raise LedgerBusy(
        f"the ledger ref {ledger.ref} kept moving or stayed locked; gave up after "
        f"{MAX_ATTEMPTS} tries",
        file=str(lock) if lock.exists() else None,
        hint="nothing was written; try again (if no git process is running and the lock "
             "file stays, delete it)",
    )


_DEFERRED = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def uninterrupted() -> Iterator[None]:
    """Ctrl-C and SIGTERM wait until the block is done: a ref moves whole or not at all.
    dulwich holds ``<ref>.lock`` across the write, fsync and rename; a KeyboardInterrupt
    raised in between left the lock behind for as long as the interrupt was handled, and
    the handler's own write (a lease given back) found the ledger locked. Every signal that
    came meanwhile goes to its handler as the block ends, in order (a handler that counts
    presses sees each). Only the main thread receives signals in Python; another thread's
    block runs as it is.

    Python runs a handler that is due at almost any point of Python code, so no step from
    the first handler swapped to the last signal handed on may let one escape: the block's
    own handlers only append, and from the moment the old ones are back, everything runs
    inside ``_settle``'s loop, which keeps what a handler raised and goes on (review of
    issue 13: a SIGTERM raised as the mask was set back lost the SIGINT the block had
    caught, and `leap run` waited for its jurors after two signals)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    old, due = _swap_handlers({sig: lambda signum, _frame: caught.append(signum)
                               for sig in _DEFERRED})
    if due is not None:  # a signal from before the block: handled as if the block never was
        _settle(old, caught, due)  # raises ``due`` once the block's own catches went on
    try:
        yield
    finally:
        _settle(old, caught, None)


def _restoring(old: dict[signal.Signals, Any]) -> dict[signal.Signals, Any]:
    """The handlers to put back (None: one set outside Python, which Python cannot set
    again: the default)."""
    return {sig: signal.SIG_DFL if h is None else h for sig, h in old.items()}


_SWAP_TRIES = 64  # each try that fails ran a handler that was due; a few at most


def _swap_handlers(handlers: dict[signal.Signals, Any]
                   ) -> tuple[dict[signal.Signals, Any], BaseException | None]:
    """Install every one of ``handlers``, and return the ones they replaced, each read before
    it is replaced, and what a handler that was due raised meanwhile; it never raises.
    Python runs a due handler wherever Python code runs, ``signal.signal``'s wrapper and
    ``pthread_sigmask`` included (after it changed the mask): each such raise is kept and
    the swap goes on where it stood, so it ends with every handler in place and the mask as
    it was. The signals are blocked meanwhile, so in a process of one thread none arrives
    half way; in a process of more (`leap run`), one sent to the process may reach another
    thread, and its handler runs in the main thread at the next Python call, which the loop
    absorbs."""
    mask = getattr(signal, "pthread_sigmask", None)
    old: dict[signal.Signals, Any] = {}
    due: BaseException | None = None
    before: set[signal.Signals] | None = None  # the mask as it was, read without a change
    swapped = False
    for _ in range(_SWAP_TRIES):
        try:
            if not swapped:
                if mask is not None:
                    if before is None:
                        before = mask(signal.SIG_BLOCK, ())
                    mask(signal.SIG_BLOCK, _DEFERRED)
                for sig, handler in handlers.items():
                    if sig not in old:
                        old[sig] = signal.getsignal(sig)
                    signal.signal(sig, handler)
                swapped = True
            if mask is not None and before is not None:
                mask(signal.SIG_SETMASK, before)  # may run a handler due: kept, next try
            return old, due
        except BaseException as exc:  # noqa: BLE001 -- a handler that was due
            due = due or exc
    if mask is not None and before is not None:  # a handler raising at every try
        try:
            mask(signal.SIG_SETMASK, before)
        except BaseException as exc:  # noqa: BLE001 -- the same handler, once more
            due = due or exc
    return old, due


def _settle(old: dict[signal.Signals, Any], caught: list[int],
            due: BaseException | None) -> None:
    """Put the old handlers back, then send each signal caught in the block again, in order,
    where the kernel sends it (``raise_signal``: its handler, the default action, or
    nothing when ignored); raise the first exception (``due``, else a handler's) once every
    one went on. Entered while the block's handlers are in place, which only append; from
    the swap back on, a handler due at any point raises inside the loop, is kept, and the
    loop goes on where it stood: ``i`` counts a signal only as its ``raise_signal`` starts,
    and CPython keeps a raised signal pending until its handler has run."""
    first, restored, i = due, False, 0
    while True:
        try:
            if not restored:
                _, swapped_due = _swap_handlers(_restoring(old))
                restored = True
                first = first or swapped_due
            while i < len(caught):
                i += 1
                signal.raise_signal(caught[i - 1])
            break
        except BaseException as exc:  # noqa: BLE001 -- raised after the others went on
            first = first or exc
    if first is not None:
        raise first


def write(ledger: Ledger, records: dict[str, bytes], message: bytes, *, root: bool,
          identical_ok: bool) -> Written:
    """Add ``records`` (path -> bytes) in one commit with ``message``; ``root``: the
    ledger's first commit, which only the first writer makes (idempotent)."""
    def build(old: str | None, attempt: int) -> Move[Written]:
        if root and old is not None:
            return Move(None, b"", Written(old, (), 0))
        if not root and old is None:
            raise LedgerMissing(f"no ledger yet ({ledger.ref} does not exist)",
                                hint="run `leap init` first")
        todo = new_paths(ledger, old, records, identical_ok)
        if not todo:
            return Move(None, b"", Written(old or "", (), attempt))
        try:
            commit = ledger.committer.commit(old, todo, message).decode()
        except FileLocked as exc:
            raise LedgerBusy(
                "an object lock file is held by another writer",
                file=str(getattr(exc, "lockfilename", "") or exc),
                hint="nothing was written; if no git or leapgit process is running, "
                     "delete that file",
            ) from None
        reflog = message[:200] if old is None else b"leap: " + message[:200]
        return Move(commit, reflog, Written(commit, tuple(sorted(todo)), attempt + 1))

    return swap(ledger, build)


def new_paths(ledger: Ledger, tip: str | None, records: dict[str, bytes],
              identical_ok: bool) -> dict[str, bytes]:
    """The records ``tip`` lacks. L8: a path the ledger holds is never written again (with
    ``identical_ok``, the same bytes are skipped), and a record never lies under another
    record or in a folder's place."""
    view = ledger.view(tip) if tip else None
    todo: dict[str, bytes] = {}
    for path, data in records.items():
        if view is None:
            todo[path] = data
            continue
        existing = view.blob_id(path)
        if existing is None and view.exists(path):
            raise LedgerConflict(
                "a folder of the ledger already has this name", file=path, rule="L8"
            )
        if existing is None:
            parent = path.rsplit("/", 1)[0] if "/" in path else ""
            while parent:
                if view.blob_id(parent) is not None:
                    raise LedgerConflict(
                        f"{parent} is a record, not a folder", file=path, rule="L8"
                    )
                parent = parent.rsplit("/", 1)[0] if "/" in parent else ""
            todo[path] = data
            continue
        if identical_ok and existing == Blob.from_string(data).id.decode():
            continue
        raise LedgerConflict(
            "the ledger already holds this record; records are never edited",
            file=path, rule="L8", hint="write a new record instead of changing this one",
        )
    return todo


def _ref_not_moved(ledger: Ledger, exc: OSError) -> LeapError:
    """Why a ref move failed, by what failed: the reflog line (written before the ref
    moves), a ref or folder in the ref's way, or the disk itself."""
    where = str(exc.filename or "")
    why = exc.strerror or str(exc)
    if where.startswith(str(ledger.git_dir / "logs") + os.sep):
        fix = ("remove that folder: git keeps the ref's reflog there as a file"
               if isinstance(exc, IsADirectoryError) else
               "a file stands where git keeps a folder of logs/: remove it"
               if isinstance(exc, (NotADirectoryError, FileExistsError)) else
               "make the reflog file and its folder writable, or free disk space")
        return UsageError(f"cannot write the ledger ref's reflog: {why}", file=where,
                          hint=f"nothing was written; {fix}, then try again")
    if isinstance(exc, (NotADirectoryError, IsADirectoryError, FileExistsError)):
        return blocked_ref(ledger.ref)  # e.g. a branch named refs/heads/leap
    return UsageError(f"cannot move the ledger ref {ledger.ref}: {why}", file=where or None,
                      hint="nothing was written; check the git dir is writable and has "
                           "space, then try again")


def blocked_ref(ref: str) -> UsageError:
    return UsageError(
        f"cannot create {ref}: another ref is in the way (a ref named like one of "
        "its folders, or refs below it)", file=".leap/config.yaml", field="ledger_ref",
        hint="see `git for-each-ref refs/heads`; choose another ledger_ref",
    )
