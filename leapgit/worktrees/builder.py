"""Start one builder process for one round, and stop it: on its own, on a timeout, or when
the run is interrupted. The builder runs in its own process group, so stopping it stops
everything it started (an agent's tool calls, a test run), and a Ctrl-C in the terminal
reaches leapgit, which decides, rather than every child at once.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from leapgit import git
from leapgit.errors import UsageError, printable
from leapgit.records.config import first_init
from leapgit.records.trailers import OUTCOME, parse, round_trailers
from leapgit.worktrees.check import command_words, is_builtin

GRACE = 2.0  # seconds between SIGTERM and SIGKILL
POLL = 0.02
CONFIG, FIELD = ".leap/config.yaml", "builder.command"


@dataclass(frozen=True)
class BuilderExit:
    code: int | None
    timed_out: bool = False
    interrupted: bool = False
    seconds: float = 0.0
    why: str = ""  # interrupted: what stopped the run (``Stop.why``)


class Stop(threading.Event):
    """Set when the running builders are to stop, with why: the first reason given (a
    signal's name, a time limit) is the one their rounds' receipts say."""

    def __init__(self) -> None:
        super().__init__()
        self.why = ""

    def halt(self, why: str) -> None:
        self.why = self.why or why
        self.set()


def signal_name(signum: int) -> str:
    return f"interrupted ({signal.Signals(signum).name})"


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(GRACE)
            return
        except subprocess.TimeoutExpired:
            continue


# the builder's command runs as `/bin/sh -c COMMAND` ever did; its status is then written
# where the next driver reads it, should this one be killed meanwhile
_RECORDS_EXIT = ('/bin/sh -c "$1"; leap_exit=$?; printf "%s\\n" "$leap_exit" > "$2"; '
                 'exit "$leap_exit"')


def run_builder(command: str, worktree: Path, env: dict[str, str], log: Path,
                timeout: float, stop: Stop, *, lock_fd: int | None = None,
                started: Callable[[int], None] | None = None,
                beat: Callable[[float], None] | None = None,
                every: float = 15.0, exit_file: Path | None = None) -> BuilderExit:
    """``lock_fd`` (the ball's drive lock) is inherited by the builder; ``started`` is told
    its process group; ``beat`` is called with the seconds elapsed every ``every`` seconds
    while it runs; ``exit_file``: where the builder's exit status is written as it ends,
    by the shell that runs it (a driver killed meanwhile loses it no more: ``left_exit``)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    started_at = time.monotonic()
    argv: str | list[str] = command
    if exit_file is not None:  # the command parsed by a shell of its own, exactly as ever
        exit_file.unlink(missing_ok=True)
        argv = ["/bin/sh", "-c", _RECORDS_EXIT, "sh", command, str(exit_file)]
    with open(log, "ab") as out:  # after the worktree's setup, when it ran this round
        out.write(f"$ {command}\n".encode())
        out.flush()
        proc = subprocess.Popen(
            argv, shell=isinstance(argv, str), cwd=worktree, env=env, stdin=subprocess.DEVNULL,
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            pass_fds=() if lock_fd is None else (lock_fd,),
        )
        if started is not None:
            started(proc.pid)  # its own session: the process group is its pid
        deadline = started_at + timeout
        next_beat = started_at + every
        while True:
            try:
                code = proc.wait(POLL)
                return BuilderExit(code, seconds=time.monotonic() - started_at)
            except subprocess.TimeoutExpired:
                pass
            now = time.monotonic()
            if beat is not None and now >= next_beat:
                beat(now - started_at)
                next_beat = now + every
            if stop.is_set() or now > deadline:
                _stop_group(proc)
                why = "interrupted" if stop.is_set() else f"timed out after {timeout:g} s"
                out.write(f"\n[leap] builder stopped: {why}\n".encode())
                return BuilderExit(proc.returncode, timed_out=not stop.is_set(),
                                   interrupted=stop.is_set(),
                                   seconds=time.monotonic() - started_at, why=stop.why)


def left_exit(exit_file: Path) -> int | None:
    """The exit status ``run_builder`` had the builder's shell write, if it ended so."""
    try:
        text = exit_file.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def builder_word(ex: BuilderExit, report: tuple[Literal[-1, 0, 1], str] | None,
                 worktree: Path, start: str, timeout: float) -> tuple[Literal[-1, 0, 1], str]:
    """What the builder says its round came to. Interrupt and timeout end the round at 0."""
    if ex.interrupted:
        return 0, f"{ex.why or 'interrupted'}: leap stopped the builder; the round ended at 0"
    if ex.timed_out:
        return 0, f"the builder timed out after {timeout:g} s; the round ended at 0"
    if report is not None:
        return report
    head = git.out(["rev-parse", "HEAD"], worktree)
    if head != start:  # a builder that committed by itself carries its receipt as trailers
        msg = git.run(["log", "-1", "--format=%B", head], worktree).stdout
        said = round_trailers(msg)
        if said.outcome is not None:
            return said.outcome, said.evidence or "builder commit trailers"
        written = parse(msg).all(OUTCOME)
        if written:  # a word that is no outcome is a malformed answer, as in a report
            return -1, (f"malformed builder commit trailer {OUTCOME}: "
                        f"{printable(written[-1][:40])}: needs -1, 0 or 1")
    if ex.code == 0:
        return 1, "the builder exited 0 without a report (a claim, never a pass)"
    return 0, f"the builder exited {ex.code} without a report"


def _unresolved(program: str, root: Path) -> str | None:
    """Why ``program`` would not start, or None. A relative path is read in the worktree,
    which holds the repository's tracked files (``root``: the checkout standing in for it)."""
    if "$" in program or "`" in program or is_builtin(program):
        return None  # the shell decides: nothing to resolve before it runs
    if "/" not in program:
        return None if shutil.which(program) else "is not on PATH"
    path = Path(os.path.expanduser(program))
    path = path if path.is_absolute() else root / path
    if not path.is_file():
        return f"does not exist ({path})"
    return None if os.access(path, os.X_OK) else f"is not executable ({path})"


def _syntax_error(command: str) -> str | None:
    """What /bin/sh, which runs the line, says of its grammar without running it (``-n``):
    a line it cannot parse (``} ; true``, bash's ``select``) never starts. None when it
    parses, or when no /bin/sh answers (the run then says why)."""
    try:
        parsed = subprocess.run(["/bin/sh", "-n", "-c", command], capture_output=True,
                                timeout=10, stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if parsed.returncode == 0:
        return None
    said = parsed.stderr.decode("utf-8", "replace").strip().splitlines()
    return said[-1] if said else f"exit {parsed.returncode}"


def require_program(command: str | None, root: Path, preset: str | None = None,
                    nothing: str = "no ball was thrown", config_root: Path | None = None,
                    field: str = FIELD, rule: str = "L3", then: str | None = None) -> str:
    """L3 (issue 14): a builder that cannot start would spend every round of an episode in a
    fraction of a second; refuse the throw before any worktree or round instead. With
    ``preset`` (issue 17), ``command`` is its expansion and the error names the preset.
    ``nothing``: what was not done for it (a worker takes no claim). The test author's
    command (``field`` red.command, T7.1) is held to the same check; ``then``: the command
    that goes on once the config is mended."""
    def hint(text: str) -> str:
        return f"{text}; then {then}" if then else text

    if not command:
        raise UsageError(f"no builder command; {nothing}", file=CONFIG, field=field, rule=rule,
                         hint=first_init(config_root or root, "set builder.command, e.g. a script"))
    try:
        words = command_words(command)
    except ValueError as exc:
        raise UsageError(f"{command!r} does not read as a command line ({exc}); "
                         f"{nothing}", file=CONFIG, field=field, rule=rule,
                         hint=hint("close its quotes")) from None
    grammar = _syntax_error(command)
    if grammar is not None:
        raise UsageError(f"{command!r} is no command line /bin/sh runs ({grammar}); "
                         f"{nothing}", file=CONFIG, field=field, rule=rule,
                         hint=hint("write it as POSIX sh reads it (or call a script)"))
    problem = _unresolved(words[0], root) if words else "is missing"
    if problem is not None and preset is not None:
        raise UsageError(f"preset {preset!r}: its program {words[0]!r} {problem}; "
                         f"{nothing}", file=CONFIG, field="builder.preset", rule=rule,
                         hint=hint(f"install {words[0]}, or choose another preset "
                                   "(`leap presets`)"))
    if problem is not None:
        raise UsageError(f"its program {words[0] if words else ''!r} {problem}; "
                         f"{nothing}", file=CONFIG, field=field, rule=rule,
                         hint=hint("name a program on PATH or the path of an executable"))
    return command
