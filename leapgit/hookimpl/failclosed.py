"""The error boundary of a hook that guards refs: expected errors print their lines, an
unexpected one prints a short message, and both refuse (fail closed)."""

from __future__ import annotations

import sys
from collections.abc import Callable

from leapgit.errors import LeapError


def guarded(hook: str, body: Callable[[], int]) -> int:
    try:
        return body()
    except LeapError as exc:
        for line in exc.lines():
            print(f"leap {hook}: refused: {line}", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 -- fail closed: a hook that cannot judge a push refuses it
        print(f"leap {hook}: internal error, refusing (fail closed): "
              f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
