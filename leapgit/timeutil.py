from __future__ import annotations

import time


def now_iso() -> str:
    """The time now in UTC, to the second, as ISO 8601 with ``Z`` (what records hold)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
