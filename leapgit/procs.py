"""Processes on this machine, by pid: whether one still runs (a killed run's builder, the
owner of a throwaway tree)."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path


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


# The process groups this process started and still waits on (a command juror's seat, a
# test run, a setup, a test author): a run that leaves at once (a second Ctrl-C: it walks
# away from a convening) ends them, since no ``finally`` of theirs runs then. Each was
# started with a session of its own, so nothing else would: a paid CLI juror kept spending
# after the user asked to stop (a walk-away hunt). A group is held from before its fork
# (``spawning``): one forked but not yet held when the run left was missed (under load).
_groups: set[int] = set()
_spawning = [0]  # forks under way, each held (``hold``) before it ends
_leaving: list[bool] = []  # ``end_groups`` ran: no group starts any more
_groups_lock = threading.Lock()


class Leaving(Exception):
    """A process group was to start while this process leaves (``end_groups``)."""


@contextmanager
def spawning() -> Iterator[None]:
    """Around the start of a process group, up to its ``hold``: ``end_groups`` waits for
    the block (a group is never forked unseen), and once it ran no group starts."""
    with _groups_lock:
        if _leaving:
            raise Leaving("leapgit is leaving: no process starts")
        _spawning[0] += 1
    try:
        yield
    finally:
        with _groups_lock:
            _spawning[0] -= 1


def hold(pid: int) -> None:
    """``pid`` (the leader of a process group of its own) is ended by ``end_groups`` until
    ``release``; its caller waits for it meanwhile, so the group's id stays its own."""
    with _groups_lock:
        _groups.add(pid)
    if _leaving:  # held after the kill went out: ended now
        _kill_group(pid)


def release(pid: int) -> None:
    with _groups_lock:
        _groups.discard(pid)


def end_groups(wait: float = 2.0) -> int:
    """SIGKILL every process group held, and each one whose start is under way once it is
    held (waiting at most ``wait`` seconds for those); no group starts after. How many
    were ended."""
    with _groups_lock:
        _leaving.append(True)
    ended: set[int] = set()
    deadline = time.monotonic() + wait
    while True:
        with _groups_lock:
            held, busy = set(_groups) - ended, _spawning[0]
        for pid in held:
            _kill_group(pid)
        ended |= held
        if not busy or time.monotonic() >= deadline:
            return len(ended)
        time.sleep(0.01)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_group(command: str, cwd: Path | str, env: Mapping[str, str], timeout: float
              ) -> tuple[int | None, bytes]:
    """``command`` through the shell in ``cwd``, in a process group of its own (a timeout
    stops everything it started), stdin closed, its output and errors as one stream: (its
    exit status, or None when it ran past ``timeout`` and its group was killed; what it
    printed). ``end_groups`` ends it while it runs."""
    with spawning():
        proc = subprocess.Popen(command, shell=True, cwd=cwd, env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True)
        hold(proc.pid)
    try:
        out, _ = proc.communicate(timeout=timeout)
        return proc.returncode, out
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return None, out
    finally:
        release(proc.pid)
