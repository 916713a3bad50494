"""Processes on this machine, by pid: whether one still runs (a killed run's builder, the
owner of a throwaway tree)."""

from __future__ import annotations

import os


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs here (one of another user counts; a zombie, dead and
    waiting for its parent to reap it, does not: it holds no lock and does no work)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True  # no /proc to ask: it exists
    return state not in ("Z", "X")
