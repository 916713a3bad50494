"""Typed commands: the proof, the tests, the live proof and the metric are each run as a
command of a declared type, with a timeout, and recorded as typed evidence (what ran, where,
how it ended, the tail of what it said). Nothing here decides an outcome."""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from leapgit.procs import run_group
from leapgit.tribunal.worktree import in_fresh

CommandType = Literal["proof", "tests", "live_proof", "metric", "red"]
TAIL = 4000  # characters of output kept as evidence
# signals that end a command from outside it (a kill, the OOM killer, a closed terminal,
# Ctrl-C, a shutdown): the command did nothing wrong, and running it again is the way on
FROM_OUTSIDE = frozenset({signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP})
DEFAULT_TIMEOUT = 900.0
SHOWN = 20  # lines of a refused run's tail shown on the terminal
# ANSI/ECMA-48 escapes a test runner writes for a terminal: CSI (ESC [ or 8-bit 0x9b,
# parameters, intermediates, one final byte: colours, cursor moves, erasing); the string
# controls OSC, DCS, PM and APC (ESC ] P ^ _ or 8-bit, up to BEL or ST: titles, hyperlinks);
# every other escape (ESC, intermediates, one final byte: charsets, cursor save).
_ANSI = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
                   r"|(?:\x1b[\]P^_]|[\x90\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
                   r"|\x1b[ -/]*[0-~]")


def clean_tail(output: str) -> str:
    """The tail of a command's output as it is recorded: the last ``TAIL`` characters of
    what it said, with ANSI escapes removed first. A recorded tail is evidence for a reader
    (``leap red``, score records, the audit), not bytes to replay on a terminal."""
    return _ANSI.sub("", output)[-TAIL:]


@dataclass(frozen=True)
class CommandRun:
    type: CommandType
    command: str
    cwd: str
    exit_code: int | None  # None: it never finished (timeout)
    seconds: float
    output_tail: str
    stdout: str  # whole stdout, for the metric's JSON; not recorded

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    @property
    def timed_out(self) -> bool:
        return self.exit_code is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type, "command": self.command, "exit_code": self.exit_code,
            "seconds": round(self.seconds, 3), "output_tail": self.output_tail,
        }

    @property
    def signal(self) -> signal.Signals | None:
        """The signal that ended it (the shell's negative exit status), or None."""
        if self.exit_code is None or self.exit_code >= 0:
            return None
        try:
            return signal.Signals(-self.exit_code)
        except ValueError:
            return None

    @property
    def stopped_from_outside(self) -> bool:
        return self.signal in FROM_OUTSIDE

    def ended(self) -> str:
        """How it ended, in words: "timed out after 9 s", "exited 1", "exited -9 (SIGKILL)"."""
        if self.timed_out:
            return f"timed out after {self.seconds:.0f} s"
        return f"exited {self.exit_code}" + (f" ({self.signal.name})" if self.signal else "")

    def describe(self) -> str:
        return f"{self.type} `{self.command}` {self.ended()}"

    def shown(self, what: str, count: int = SHOWN) -> list[str]:
        """The last ``count`` lines of the recorded tail, for the terminal under a refusal
        (``LeapError.details``): what the user needs to see to fix the command."""
        lines = self.output_tail.rstrip("\n").splitlines()[-count:]
        if not lines:
            return [f"{what} printed nothing"]
        return [f"{what}, the last {len(lines)} line(s) it printed:",
                *(f"| {line}" for line in lines)]


def run_command(
    kind: CommandType, command: str, cwd: Path, *, timeout: float = DEFAULT_TIMEOUT,
    env: Mapping[str, str] | None = None,
) -> CommandRun:
    """Run ``command`` through the shell in ``cwd``, in its own process group, so a timeout
    stops everything it started."""
    start = time.monotonic()
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    full_env.update(env or {})
    code, out = run_group(command, cwd, full_env, timeout)
    text = out.decode("utf-8", "replace")
    return CommandRun(kind, command, str(cwd), code, time.monotonic() - start, clean_tail(text),
                      text)


def run_fresh(kind: CommandType, command: str, root: Path, commit: str, *, timeout: float,
              prefix: str, again: bool = False) -> tuple[CommandRun, bool]:
    """``command`` in a fresh throwaway tree of ``commit``: once it passed, not again for a
    command that scores (``worktree.once_a_tree``), whoever asks (the red's and the score's
    harness at a base), unless ``again``; and whether the run is one kept from before."""
    return in_fresh(root, commit, ("typed", kind, command, repr(timeout)),
                    lambda tree: run_command(kind, command, tree, timeout=timeout),
                    lambda run: run.ok, prefix=prefix, again=again)
