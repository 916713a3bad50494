"""The writer lock of one ledger: an advisory ``flock`` on ``<git dir>/leap-ledger.lock``.

The kernel drops the lock the moment its holder dies, even by SIGKILL, so a killed writer
never leaves it held (the file stays on disk, harmlessly). Each thread takes it through its
own file descriptor, so two threads of one process exclude each other as two processes do;
one thread may take it again while it holds it.

This is what ``filelock.FileLock`` does on POSIX, in a few lines: importing filelock 4.x
costs ~50 ms (FIELD-NOTES), and the post-commit hook takes this lock on every round. Where
there is no ``fcntl`` (Windows) it falls back to filelock.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, cast

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


class LockTimeout(Exception):
    """The lock stayed held by another writer for the whole timeout."""


class WriterLock:
    """``with WriterLock(path, timeout):``. A writer that has waited ``notice_after`` seconds
    is told once, through ``on_wait`` (the ledger prints who it waits for and how long it
    will), so a ``git commit`` whose hook waits never looks hung."""

    def __init__(self, path: Path | str, timeout: float,
                 on_wait: Callable[[str], None] | None = None,
                 notice_after: float = 1.0) -> None:
        self.path = str(path)
        self.timeout = timeout
        self.on_wait = on_wait
        self.notice_after = notice_after
        self._held = threading.local()

    def __enter__(self) -> WriterLock:
        depth = getattr(self._held, "depth", 0)
        if getattr(self._held, "pid", None) != os.getpid():
            depth = 0  # a forked child: the lock it inherited is its parent's, not its own
        if depth == 0:
            self._held.handle = self._acquire()
            self._held.pid = os.getpid()
        self._held.depth = depth + 1
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._held.depth -= 1
        if self._held.depth == 0:
            self._release(self._held.handle)
            self._held.handle = None

    def note(self, text: str) -> None:
        """Write ``text`` into the lock file through the descriptor this thread holds it
        by (never by its path again: a link planted there would be written through);
        best effort, only a name for those who wait."""
        handle = getattr(self._held, "handle", None)
        if not isinstance(handle, int):
            return  # pragma: no cover - filelock's, on Windows
        try:
            os.ftruncate(handle, 0)
            os.pwrite(handle, text.encode("utf-8", "replace"), 0)
        except OSError:
            pass

    def _acquire(self) -> object:
        if fcntl is None:  # pragma: no cover - Windows
            return self._acquire_portable()
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        start = time.monotonic()
        deadline = start + self.timeout
        told = self.on_wait is None
        pause = 0.001
        taken = False
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    taken = True
                    return fd
                except BlockingIOError:
                    now = time.monotonic()
                    if now >= deadline:
                        raise LockTimeout(self.path) from None
                    if not told and now - start >= self.notice_after:
                        told = True
                        self._notify()
                    time.sleep(pause)
                    pause = min(pause * 2, 0.05)
        finally:
            if not taken:  # a timeout, a Ctrl-C while waiting: the descriptor is not kept
                os.close(fd)

    def _notify(self) -> None:
        """The wait notice is best effort: a stderr that cannot be written (a closed pipe)
        never costs the write it waits for."""
        try:
            cast(Callable[[str], None], self.on_wait)(self.path)
        except Exception:  # noqa: BLE001 -- only a notice
            pass

    def _release(self, handle: object) -> None:
        if not isinstance(handle, int):  # pragma: no cover - filelock's, on Windows
            cast(Any, handle).release()
            return
        try:
            fcntl.flock(handle, fcntl.LOCK_UN)
        finally:
            os.close(handle)

    def _acquire_portable(self) -> object:  # pragma: no cover - Windows
        from filelock import FileLock, Timeout

        lock = FileLock(self.path, timeout=self.timeout, thread_local=True)
        try:
            lock.acquire()
        except Timeout:
            raise LockTimeout(self.path) from None
        return lock
