"""A live view of running balls: wave, round and state per ball.

On a terminal the block of lines is redrawn in place; otherwise (a pipe, a log, a test) each
change is one plain line, so nothing is lost and nothing needs a terminal to read.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from leapgit.errors import printable

_LINE = 120  # characters of a log line shown in a heartbeat


@dataclass
class _Row:
    ball: str
    wave: int
    round: int = 0
    state: str = "queued"


class Progress:
    def __init__(self, stream: TextIO, slice_id: str, balls: list[tuple[str, int]],
                 round_cap: int, live: bool | None = None) -> None:
        self._out = stream
        self._slice = slice_id
        self._limit = round_cap
        self._rows = {ball: _Row(ball, wave) for ball, wave in balls}
        self._width = max((len(b) for b, _ in balls), default=4)
        self._live = stream.isatty() if live is None else live
        self._lock = threading.Lock()
        self._drawn = 0
        self._started = time.monotonic()
        if self._live:
            self._draw()

    def update(self, ball: str, round_no: int, state: str) -> None:
        with self._lock:
            row = self._rows[ball]
            row.round, row.state = round_no, state
            if self._live:
                self._draw()
            else:
                self._out.write(self._line(row) + "\n")
                self._out.flush()

    def beat(self, ball: str, round_no: int, seconds: float, line: str) -> None:
        """A running builder is alive: ``line`` is the last its log shows."""
        self.update(ball, round_no, f"building for {seconds:.1f} s: {line}")

    def note(self, text: str) -> None:
        with self._lock:
            if self._live:
                self._out.write(f"\x1b[{self._drawn}F\x1b[J" if self._drawn else "")
                self._drawn = 0
            self._out.write(text + "\n")
            if self._live:
                self._draw()
            self._out.flush()

    def _line(self, row: _Row) -> str:
        elapsed = time.monotonic() - self._started
        return (f"[{elapsed:6.1f}s] wave {row.wave}  {self._slice}/{row.ball:<{self._width}}  "
                f"round {row.round}/{self._limit}  {row.state}")

    def _draw(self) -> None:
        lines = [self._line(r) for r in self._rows.values()]
        if self._drawn:
            self._out.write(f"\x1b[{self._drawn}F")
        for line in lines:
            self._out.write("\x1b[2K" + line + "\n")
        self._drawn = len(lines)
        self._out.flush()


def last_line(log: Path) -> str:
    """The last line a builder wrote to its log, shown escaped (it is the builder's text),
    or what stands in for it. Reads only the log's end."""
    try:
        with open(log, "rb") as fh:
            start = max(0, os.fstat(fh.fileno()).st_size - 4096)
            fh.seek(start)
            lines = fh.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return "(no log yet)"
    if lines and (start > 0 or lines[0].startswith("$ ")):
        lines = lines[1:]  # a line cut in half, or the command leapgit wrote first
    said = [ln.strip() for ln in lines if ln.strip()]
    if not said:
        return "(no output yet)"
    line = printable(said[-1])
    return line if len(line) <= _LINE else line[: _LINE - 1] + "…"
