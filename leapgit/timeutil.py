from __future__ import annotations

import time


def now_iso() -> str:
    """The time now in UTC, to the second, as ISO 8601 with ``Z`` (what records hold)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def iso_at(seconds: float) -> str:
    """``seconds`` since the epoch as a record's time (``now_iso``'s form)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def epoch_of(stamp: str) -> float | None:
    """A record's time (``now_iso``'s form) as seconds since the epoch; None when it is not
    in that form."""
    import calendar

    try:
        return float(calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")))
    except (TypeError, ValueError):
        return None
