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


class _Held:
    """What the main thread's blocks hold: how deep it is in them, and the signals that came
    meanwhile, each with the handler it would have met (main thread only: Python runs every
    signal handler there)."""

    depth = 0
    queue: list[tuple[int, Any]] = []


class _Deferring:
    """SIGINT's or SIGTERM's handler while a block runs, in front of the one it found
    (``target``): inside a block it only queues the signal; outside, it hands it on at once,
    as if it were not there. So a signal that lands in any instant of putting it in front
    or taking it away meets either this or its own handler, and both do the right thing."""

    __slots__ = ("target",)

    def __init__(self, target: Any) -> None:
        self.target = target

    def __call__(self, signum: int, frame: Any) -> None:
        if _Held.depth:
            _Held.queue.append((signum, self.target))
        else:
            _hand_on(signum, self.target, frame)


def _forked() -> None:
    """A child forked while the main thread was in a block (a thread's fork, no exec) holds
    none: its own signals go on at once."""
    _Held.depth = 0
    _Held.queue = []


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)


def _hand_on(signum: int, target: Any, frame: Any) -> None:
    """``signum`` to ``target`` as the kernel would have given it: its Python handler, the
    default action (SIG_DFL), or nothing (SIG_IGN)."""
    if callable(target):
        target(signum, frame)
    elif target != signal.SIG_IGN:
        signal.signal(signum, signal.SIG_DFL)
        signal.raise_signal(signum)  # SIGINT's and SIGTERM's default: the process ends


@contextmanager
def uninterrupted() -> Iterator[None]:
    """Ctrl-C and SIGTERM wait until the block is done: a ref moves whole or not at all.
    dulwich holds ``<ref>.lock`` across the write, fsync and rename; a KeyboardInterrupt
    raised in between left the lock behind for as long as the interrupt was handled, and
    the handler's own write (a lease given back) found the ledger locked. Every signal that
    came meanwhile goes to its handler as the outermost block ends, in the order Python ran
    the block's handler for them, once for each such run (two signals of one number that
    land together are one run to Python: `leap run` counts those from the wakeup fd,
    ``loop.presses``). Only the main thread receives signals in Python; another thread's
    block runs as it is.

    Python runs a due handler at almost any point of Python code, so nothing here swaps
    handlers or blocks signals in a way a signal could land half way through: a
    ``_Deferring`` goes in front of each handler, and only a counter says whether it queues
    (review of issue 13: with handlers swapped and signals masked, a SIGTERM raised as the
    mask was set back lost the SIGINT the block had caught, and `leap run` waited for its
    jurors after two signals; with both raising, the mask could stay blocked)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    try:
        for sig in _DEFERRED:
            current = signal.getsignal(sig)
            # one ignored waits for nothing; one set outside Python (None) cannot be set
            # back by Python: both are left as they are
            if current not in (signal.SIG_IGN, None) and not isinstance(current, _Deferring):
                signal.signal(sig, _Deferring(current))
    except BaseException as exc:  # a signal before the block: handled as if it never was
        while True:
            try:  # first, as a second signal due runs at the next call: kept out of the way
                if not _Held.depth:
                    _put_back()
                break
            except BaseException:  # noqa: BLE001 -- handed on; the first one goes up
                continue
        raise exc
    _Held.depth += 1
    try:
        yield
    finally:
        _leave()


def _leave() -> None:
    """The block's end: the outermost one hands every queued signal on, then the handlers
    go back. A handler's raise is kept and the loop goes on where it stood: while the depth
    is above 0 a signal that lands only queues, so none is lost between taking one from the
    queue and handing it on; from the last look at the queue to the depth's fall no point
    lies where CPython runs a handler (no call, no backward jump). The first exception is
    raised once every signal went on."""
    first: BaseException | None = None
    left = False
    while True:
        try:
            if not left:
                if _Held.depth == 1:  # the outermost block: what it held goes on now
                    while _Held.queue:
                        signum, target = _Held.queue.pop(0)
                        _hand_on(signum, target, None)
                _Held.depth -= 1
                left = True
            if not _Held.depth:
                first = _put_back() or first
            break
        except BaseException as exc:  # noqa: BLE001 -- a handler's own raise: kept
            first = first or exc
    if first is not None:
        raise first


def _put_back() -> BaseException | None:
    """Each handler a ``_Deferring`` stands in front of, back in its place; what a handler
    raised meanwhile (the ``_Deferring`` hands on until then, so nothing is lost either
    way). Two signals whose handlers both raise, landing together as it runs, can leave a
    ``_Deferring`` in front (a review's exhaustive two-signal fuzz: 2% of its pairs with
    such handlers): it hands every later signal on, at the main thread's next Python step,
    and ``signal.getsignal`` names it instead of the handler behind it."""
    first: BaseException | None = None
    for _ in range(_PUT_BACK_TRIES):
        try:
            for sig in _DEFERRED:
                current = signal.getsignal(sig)
                if isinstance(current, _Deferring):
                    signal.signal(sig, current.target)
            return first
        except BaseException as exc:  # noqa: BLE001 -- a signal that landed: handed on
            first = first or exc
    return first  # a signal at every try: what stays in front hands each on as it comes


_PUT_BACK_TRIES = 64  # each failed try ran a handler that raised: a storm, no more


def write(ledger: Ledger, records: dict[str, bytes], message: bytes, *, root: bool,
          identical_ok: bool) -> Written:
    """Add ``records`` (path -> bytes) in one commit with ``message``; ``root``: the
    ledger's first commit, which only the first writer makes (idempotent)."""
    def build(old: str | None, attempt: int) -> Move[Written]:
        if root and old is not None:
            return Move(None, b"", Written(old, (), 0))
        if not root and old is None:
            raise LedgerMissing(f"no ledger yet ({ledger.ref} does not exist)",
                                hint=ledger.missing_hint())
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
