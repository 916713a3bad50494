"""``procs.alive``: whether a process still runs, as the drive lock and the throwaway-tree
reaper ask it; a zombie (dead, not yet reaped by its parent) is gone."""

from __future__ import annotations

import subprocess
import sys
import time

from leapgit.procs import alive


def test_a_running_process_is_alive_and_a_dead_one_is_not() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                            stdin=subprocess.PIPE)
    try:
        assert alive(proc.pid)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
    deadline = time.monotonic() + 10
    while alive(proc.pid):  # exited, not yet waited for: a zombie, gone all the same
        assert time.monotonic() < deadline, "an exited process counted as running"
        time.sleep(0.02)
    assert proc.poll() == 0  # reaped only now: it was a zombie above
    assert not alive(proc.pid)


def test_no_pid_a_lock_file_may_hold_counts_as_running() -> None:
    """A blind review: a damaged lock naming pid 0 counted as running (and its hint named
    `kill 0`, the user's own process group); one past the pid range raised OverflowError."""
    assert not alive(0) and not alive(-1) and not alive(2 ** 40)
