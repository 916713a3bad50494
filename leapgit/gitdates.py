"""``GIT_COMMITTER_DATE`` read as git reads it, in the three forms git documents: its raw
form (``<seconds> <+hhmm>``, ``@<seconds>``), ISO 8601 and RFC 2822; a time without a zone
is local time. A zone git fsck would refuse, or one git does not know, is no date: it is
refused, never misread."""

from __future__ import annotations

import calendar
import re
import time
from email.utils import mktime_tz, parsedate_tz

MAX_SECONDS = 2**53  # far past any clock; git refuses larger ones too
# the zone names email.utils and git both read alike (git knows more; those are refused)
_ZONE_NAMES = {"UTC", "GMT", "Z", "EST", "EDT", "CST", "CDT", "MST", "MDT", "PST",
               "PDT"}


def read_git_date(text: str) -> tuple[int, int] | None:
    """(seconds since the epoch, zone in seconds east of UTC), or None when ``text`` is not a
    date git reads the same way."""
    try:
        return _read(text.strip())
    except (ValueError, OverflowError):  # a year 0, seconds past what the clock holds...
        return None


def local_offset(when: int) -> int:
    """The local zone at ``when``, in seconds east of UTC."""
    return -time.altzone if time.localtime(when).tm_isdst > 0 else -time.timezone


def _read(text: str) -> tuple[int, int] | None:
    parts = text.removeprefix("@").split()
    # a bare number is seconds only from 100000000 on, as git reads it ("20240102" is no time)
    if parts and parts[0].isascii() and parts[0].isdigit() and len(parts) <= 2 and \
            (text.startswith("@") or int(parts[0]) >= 100_000_000):
        when = int(parts[0])
        if when > MAX_SECONDS:
            return None
        zone = _zone(parts[1]) if len(parts) == 2 else local_offset(when)
        return None if zone is None else (when, zone)
    return _iso_date(text) or _rfc2822_date(text)


def _zone(text: str) -> int | None:
    """``+hhmm``, ``+hh:mm``, ``+hh`` or ``Z`` as seconds east of UTC."""
    if text in ("Z", "z"):
        return 0
    digits = text[1:].replace(":", "")
    digits = digits + "00" if len(digits) == 2 else digits
    if text[:1] not in ("+", "-") or len(digits) != 4 or not digits.isdigit() or \
            int(digits[:2]) > 23 or int(digits[2:]) > 59:  # git fsck refuses such a zone
        return None
    return (-1 if text[0] == "-" else 1) * (int(digits[:2]) * 3600 + int(digits[2:]) * 60)


def _iso_date(text: str) -> tuple[int, int] | None:
    """``2024-01-02T03:04:05``, a space for the ``T``, fractions of a second (dropped, as git
    does), and a zone after the time with or without a space."""
    found = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d)(?::(\d\d)(?:[.,]\d+)?)?"
                         r" ?(Z|z|[+-]\d\d(?::?\d\d)?)?", text)
    if found is None:
        return None
    year, month, day, hour, minute = (int(g) for g in found.groups()[:5])
    second = int(found.group(6) or 0)
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour < 24 and minute < 60 and second < 61):
        return None
    utc_guess = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    if found.group(7) is None:  # local time, as git reads it
        local = int(time.mktime((year, month, day, hour, minute, second, 0, 0, -1)))
        return local, local_offset(local)
    zone = _zone(found.group(7))
    return (None if zone is None else (utc_guess - zone, zone))


def _rfc2822_date(text: str) -> tuple[int, int] | None:
    found = parsedate_tz(text)
    year = re.search(r"(?<![+\-\d])\d{4}\b", text)  # not the zone's digits
    if found is None or year is None:  # a two-digit year git refuses; Python would guess
        return None
    if re.search(r"\d:\d\d\s*$", text):  # the time ends it: no zone, so local time
        local = int(time.mktime((*found[:8], -1)))
        return local, local_offset(local)
    zone = text.split()[-1]
    offset = int(found[9] or 0)
    # a zone name Python reads as UTC but git does not know, or one out of range (git fsck
    # refuses a commit that carries it): refused, never misread
    if not (zone[:1] in "+-" or zone.upper() in _ZONE_NAMES) or \
            _zone(f"{'-' if offset < 0 else '+'}{abs(offset) // 3600:02d}"
                  f"{abs(offset) % 3600 // 60:02d}") is None:
        return None
    return int(mktime_tz(found)), offset
