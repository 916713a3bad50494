"""The CLI run in the test process, as a fresh `leap` process would run it.

What a process gives a command, this gives it too, and takes back afterwards: the working
folder, the environment (``os.environ``, which every git and builder the command starts
inherits), stdin/stdout/stderr as pipes (not terminals, no echo of the input, bytes written
through ``.buffer`` kept), the SIGINT/SIGTERM/SIGALRM handlers, and the product's per-process caches
and ledger lock objects, emptied, so a call never finds what an earlier call, or the test
itself, left in memory (a lock the test holds blocks the command as it would block a
process; the dicts are found by name, see ``_process_state``). The command line goes where
the `leap` process sends it (``leapgit.launch.run``: a plain `leap status` without click,
any other through click), and the exit code is what ``sys.exit`` was given by
``leapgit.commands.console.finish``, the one error handler. A call still running at
``timeout`` is stopped by SIGALRM (every thread's stack goes to the real stderr) and
fails the test, as the process's TimeoutExpired did.

What it cannot give is a process boundary: a signal, a kill, a closed stream, the installed
entry points. Tests of those call ``leap(..., subprocess=True)`` or start ``python -m
leapgit`` themselves.
"""

from __future__ import annotations

import faulthandler
import io
import os
import signal
import sys
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGALRM)


class Timeout(BaseException):
    """A call still running at its timeout. A BaseException, as KeyboardInterrupt is: the
    product's own ``except Exception`` never swallows it, its ``finally`` blocks run."""


def run_cli(args: list[str], *, cwd: Path | str, env: Mapping[str, str], input: str | None,
            timeout: float) -> tuple[int, str, str]:
    from leapgit.launch import run

    out, err = _pipe(), _pipe()
    stdin = io.TextIOWrapper(io.BytesIO((input or "").encode()), encoding="utf-8")
    code: int = 0
    with _environ(env), _cwd(cwd), _streams(stdin, out, err), _signals(), _fresh_state():
        signal.signal(signal.SIGALRM, _time_out)
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            run(args)
        except SystemExit as exc:
            code = _exit_code(exc.code, err)
        except Timeout:
            raise AssertionError(f"leap {' '.join(args)} still ran after {timeout:g} s "
                                 f"(stacks on stderr); its output so far:\n{_text(out)}"
                                 f"{_text(err)}") from None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    return code, _text(out), _text(err)


def _time_out(signum: int, frame: object) -> None:
    faulthandler.dump_traceback(file=sys.__stderr__ or sys.stderr, all_threads=True)
    raise Timeout


def _pipe() -> io.TextIOWrapper:
    # what a child's stdout is under C.UTF-8: utf-8 with surrogateescape, .buffer underneath
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="surrogateescape",
                            write_through=True)


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    raw = stream.buffer
    assert isinstance(raw, io.BytesIO)
    return raw.getvalue().decode("utf-8")  # strict, as subprocess.run(text=True) reads it


def _exit_code(code: object, err: io.TextIOWrapper) -> int:
    """What the interpreter makes of ``sys.exit(code)``."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    err.write(f"{code}\n")
    return 1


@contextmanager
def _environ(env: Mapping[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        yield
    finally:
        _restore(os.environ, saved)


def _restore(target: MutableMapping[str, str], saved: Mapping[str, str]) -> None:
    for key in [k for k in target if k not in saved]:
        del target[key]
    for key, value in saved.items():
        if target.get(key) != value:
            target[key] = value


@contextmanager
def _cwd(path: Path | str) -> Iterator[None]:
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


@contextmanager
def _streams(stdin: io.TextIOWrapper, out: io.TextIOWrapper, err: io.TextIOWrapper
             ) -> Iterator[None]:
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = stdin, out, err
    try:
        yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved


@contextmanager
def _signals() -> Iterator[None]:
    saved = {sig: signal.getsignal(sig) for sig in _SIGNALS}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


@contextmanager
def _fresh_state() -> Iterator[None]:
    """Empty each per-process cache for the call and put the test's own back after."""
    found = [(state, dict(state)) for state in _process_state()]
    for state, _ in found:
        state.clear()
    try:
        yield
    finally:
        for state, saved in found:
            state.clear()
            state.update(saved)


def _process_state() -> list[dict[Any, Any]]:
    """The module-level dicts a fresh process starts without: leapgit keeps its per-process
    state (ledger lock objects, parsed trees, checked signatures, ...) in private
    lower-case module globals (``_locks``, ``_tree_caches``); upper-case ones are tables.
    Their names are looked for again only when a module was loaded since (a scan of every
    module's globals cost each call a few ms); each dict is read from its module anew."""
    loaded = frozenset(n for n in sys.modules if n == "leapgit" or n.startswith("leapgit."))
    if loaded != _STATE_NAMES[0]:
        _STATE_NAMES[:] = [loaded, [
            (name, attr) for name in sorted(loaded)
            for attr, value in list(vars(sys.modules[name]).items())
            if type(value) is dict and attr.startswith("_") and not attr.startswith("__")
            and attr[1:].islower()]]
    found = []
    for name, attr in _STATE_NAMES[1]:
        value = vars(sys.modules[name]).get(attr)
        if type(value) is dict:
            found.append(value)
    return found


_STATE_NAMES: list[Any] = [frozenset(), []]  # (the leapgit modules scanned, their names)
