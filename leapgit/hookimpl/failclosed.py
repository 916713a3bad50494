"""The error boundary of a hook that guards refs: expected errors print their lines, an
unexpected one prints a short message, and both refuse (fail closed)."""

from __future__ import annotations

import sys
from collections.abc import Callable

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
