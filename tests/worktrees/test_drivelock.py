"""The drive lock's file names a round from just before its builder starts until the round
is recorded (L6: a round always ends in a receipt): whichever driver is killed, the next one
finds the round still to close (a flake under load found a kill between the builder's start
and the file naming its round; the round's files then counted as a change outside any
round, L2, and the ball was refused for good)."""

from __future__ import annotations

import os
from pathlib import Path

from leapgit.worktrees.drivelock import NAME, DriveLock


def test_a_round_is_named_before_its_builder_starts(tmp_path: Path) -> None:
    with DriveLock(tmp_path, tmp_path, "s/b") as lock:
        lock.starting(3)
        assert (tmp_path / NAME).read_text() == f"{os.getpid()} - 3\n"
        lock.started(4242, 3)
        assert (tmp_path / NAME).read_text() == f"{os.getpid()} 4242 3\n"
    with DriveLock(tmp_path, tmp_path, "s/b") as lock:  # the driver before never closed it
        assert lock.unclosed == 3


def test_a_killed_drivers_round_stays_named_until_it_is_closed(tmp_path: Path) -> None:
    (tmp_path / NAME).write_text("999999 4242 2\n")  # a driver killed in round 2
    with DriveLock(tmp_path, tmp_path, "s/b") as lock:
        assert lock.unclosed == 2
        # killed now, before it closed round 2: the next driver must still find it
        assert (tmp_path / NAME).read_text() == f"{os.getpid()} - 2\n"
    with DriveLock(tmp_path, tmp_path, "s/b") as lock:
        assert lock.unclosed == 2
        lock.closed()
        assert (tmp_path / NAME).read_text() == f"{os.getpid()}\n"
    with DriveLock(tmp_path, tmp_path, "s/b") as lock:
        assert lock.unclosed is None


def test_a_shorter_line_never_leaves_the_longer_ones_tail(tmp_path: Path) -> None:
    with DriveLock(tmp_path, tmp_path, "s/b") as lock:
        lock.started(123456789, 4)
        lock.closed()
        assert (tmp_path / NAME).read_text() == f"{os.getpid()}\n"
