"""The error boundary of a hook that guards refs: expected errors print their lines, an
unexpected one prints a short message, and both refuse (fail closed)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import NoReturn

from leapgit.errors import LeapError, printable
from leapgit.hookimpl.chain import run_chained


def guarded(hook: str, body: Callable[[], int]) -> int:
    try:
        return body()
    except LeapError as exc:
        for line in exc.lines():
            print(f"leap {hook}: refused: {line}", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 -- fail closed: a hook that cannot judge a push refuses it
        print(f"leap {hook}: internal error, refusing (fail closed): "
              f"{type(exc).__name__}: {printable(str(exc))}", file=sys.stderr)
        return 1


def hook_main(hook: str, check: Callable[[bytes], int], argv: list[str]) -> int:
    """A ref-guarding hook's entry: run a chained foreign hook first (its refusal stands),
    then judge stdin's ref updates, failing closed."""
    data = sys.stdin.buffer.read()
    # the chained hook inside the boundary too: one that cannot start refuses in one line
    code = guarded(hook, lambda: run_chained(argv[1] if len(argv) > 1 else None, argv[2:],
                                             data))
    if code != 0:
        return code
    return guarded(hook, lambda: check(data))


def leave(code: int) -> NoReturn:
    """Exit with ``code`` without the interpreter's teardown, as post-commit does: when a
    ref-guarding hook's ``main`` returns, its verdict is printed and every repository and
    file it opened is closed (a record cache entry is written whole, by rename), so freeing
    the ~200 modules it loaded would only add CPU to every push. A stream that cannot be
    flushed (the pusher went away) makes the status 120, as that teardown's does: a hook
    that could not say why never turns a refusal into a pass."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:  # None: started with the stream closed
                stream.flush()
        except (OSError, ValueError):
            code = code or 120
    os._exit(code)
