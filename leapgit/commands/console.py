"""What a command prints, and how it ends: the one error handler around every command.

Written without click, so the entry point can answer `leap status` before click is loaded
(``leapgit.launch``); the click layer (``leapgit.cli``) prints and ends through it too, so
both ways out of a command say the same lines with the same exit codes.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

from leapgit.errors import EXIT_INTERNAL, LeapError, printable

if TYPE_CHECKING:
    from pathlib import Path


def echo(text: str, err: bool = False) -> None:
    """``text`` and a line break on stdout (stderr with ``err``), flushed, as click.echo
    writes it: nothing when the process was started with that stream closed, and UTF-8
    (a character it cannot hold replaced) to a stream that declares ASCII
    (``PYTHONIOENCODING=ascii``), which would refuse any other character."""
    stream = sys.stderr if err else sys.stdout
    if stream is None:
        return
    line = text + "\n"
    buffer = getattr(stream, "buffer", None)
    if buffer is not None and _ascii(stream) and not line.isascii():
        stream.flush()
        buffer.write(line.encode("utf-8", "replace"))
        buffer.flush()
        return
    stream.write(line)
    stream.flush()


def _ascii(stream: Any) -> bool:
    import codecs

    try:
        return codecs.lookup(getattr(stream, "encoding", None) or "ascii").name == "ascii"
    except LookupError:
        return False


def emit(lines: list[str]) -> None:
    """Report lines on stdout, each shown and never obeyed by the terminal (F9)."""
    if lines:
        echo("\n".join(printable(part) for line in lines for part in line.split("\n")))


def emit_json(data: Any) -> None:
    import json

    echo(json.dumps(data, indent=2, sort_keys=False))


def finish(body: Callable[[], int | None]) -> NoReturn:
    """Run a command's ``body`` and exit with its code, or with the code of what it raised:
    a LeapError's lines and exit code, 130 for an interrupt, and for anything unexpected one
    line here and the traceback in a file of its own (EXIT_INTERNAL)."""
    try:
        code = body()
    except LeapError as exc:
        for line in exc.lines():
            echo(f"leap: {line}", err=True)
        for line in exc.detail_lines():
            echo(f"leap:   {line}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        echo("", err=True)  # ends the line the terminal's ^C began, as click does
        interrupted()
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            _internal(exc)
        # the reader went away (`leap status | head`): exit 1 without a word, as click does
        sys.exit(1)
    except Exception as exc:  # the one place an unexpected error is caught, logged, reported
        _internal(exc)
    sys.exit(code if isinstance(code, int) else 0)


def _internal(exc: BaseException) -> NoReturn:
    echo(f"leap: internal error: {type(exc).__name__}: {printable(str(exc))}", err=True)
    path = _crash_log(exc)
    where = f"is in {path}" if path else "could not be saved (no writable folder)"
    echo(f"leap: the traceback {where}; please report it", err=True)
    sys.exit(EXIT_INTERNAL)


def interrupted() -> NoReturn:
    echo("leap: interrupted", err=True)
    sys.exit(130)


def _crash_log(exc: BaseException) -> Path | None:
    """Write the traceback to a file of its own; None when even that is impossible."""
    import tempfile
    import traceback
    from pathlib import Path

    folder = Path(os.environ.get("XDG_STATE_HOME", Path.home() / ".local" / "state")) / "leapgit"
    for where in (folder, Path(tempfile.gettempdir())):
        try:
            where.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix="crash-", suffix=".log", dir=where)
            with os.fdopen(fd, "w") as fh:
                fh.write("".join(traceback.format_exception(exc)))
            return Path(name)
        except OSError:
            continue
    return None


class Leaving:
    """Whether this process leaves at once after its command (``leapgit.launch.main``): a
    read-only command run as `leap CMD`, never in-process. What it read then stays alive
    (``kept``) and the cyclic collector stays off: a 10,000-ball audit freed and walked
    millions of objects after its report, ~5 s of ~45, only for the exit to drop them."""

    kept: list[object] | None = None


LEAVING = Leaving()
LEAVE_AT_ONCE = (["audit"], ["status"], ["log"])


def leave_at_once(code: object) -> NoReturn:
    """Exit now with ``code`` (SystemExit's), the output flushed, nothing freed first."""
    status = code if isinstance(code, int) else (0 if code is None else 1)
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:  # None: started with the stream closed
                stream.flush()
        except (OSError, ValueError):  # a reader that went away (`leap audit | head`)
            pass
    os._exit(status)
