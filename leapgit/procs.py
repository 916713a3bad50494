"""Processes on this machine, by pid: whether one still runs (a killed run's builder, the
owner of a throwaway tree)."""

from __future__ import annotations

import os


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs here (one of another user counts; a zombie, dead and
    waiting for its parent to reap it, does not: it holds no lock and does no work)."""
    if pid <= 0:  # 0 and below name process groups, never one process
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # gone, or no pid there can be
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True  # no /proc to ask: it exists
    return state not in ("Z", "X")


def started_at(pid: int) -> float | None:
    """When process ``pid`` started (epoch seconds), or None where /proc cannot tell."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as fh:
            ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/stat", encoding="utf-8") as fh:
            boot = next(int(ln.split()[1]) for ln in fh if ln.startswith("btime "))
    except (OSError, IndexError, ValueError, StopIteration):
        return None
    return boot + ticks / os.sysconf("SC_CLK_TCK")
