"""How many Ctrl-Cs and SIGTERMs reached `leap run`, counted where no Python code can miss
one. A handler written in Python can be preempted before its first line: a second signal
landing as it starts runs its own handler there, and when that one raises, the first never
runs at all (a second Ctrl-C then looked like a first, and the run waited for its jurors).
CPython's C-level handler writes each signal's number to the wakeup fd as it lands, before
any Python runs (``signal.set_wakeup_fd``): that is what is counted here."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable

_COUNTED = frozenset({int(signal.SIGINT), int(signal.SIGTERM)})


class Deliveries:
    """SIGINTs and SIGTERMs the kernel delivered since ``open`` (main thread only, as
    ``set_wakeup_fd`` is); 0 where none can be read (``open`` could not set the fd)."""

    def __init__(self) -> None:
        self.seen = 0
        self._read: int | None = None

    def open(self) -> Callable[[], None]:
        """Start counting; returns what ends it (the fd before, back in place), which may
        run more than once. Where no pipe can be made (no fd left), or not in the main
        thread, nothing is counted here: the handler's count stands alone."""
        try:
            read, write = os.pipe()
        except OSError:
            return lambda: None
        try:
            for fd in (read, write):
                os.set_blocking(fd, False)
            before = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
        except BaseException as exc:
            os.close(read)
            os.close(write)
            if isinstance(exc, (ValueError, OSError)):
                return lambda: None
            raise
        self._read = read
        closed: list[bool] = []

        def close() -> None:
            if closed:
                return
            try:
                signal.set_wakeup_fd(before)
                self.count()
            finally:
                if not closed:
                    closed.append(True)
                    self._read = None
                    os.close(read)
                    os.close(write)

        return close

    def count(self) -> int:
        """What was delivered so far (reads what the C handler wrote since the last look)."""
        while self._read is not None:
            try:
                data = os.read(self._read, 4096)
            except OSError:  # BlockingIOError: nothing more now
                break
            if not data:
                break
            self.seen += sum(1 for b in data if b in _COUNTED)
        return self.seen
