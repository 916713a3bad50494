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
        lock.starting(3, 2, "ab" * 20)
        said = (tmp_path / NAME).read_text().split()
        assert said[:5] == [str(os.getpid()), "-", "3", "2", "ab" * 20], said
        lock.started(4242, 3)
        assert (tmp_path / NAME).read_text().split()[:5] == \
            [str(os.getpid()), "4242", "3", "2", "ab" * 20]
    with DriveLock(tmp_path, tmp_path, "s/b") as lock:  # the driver before never closed it
        assert (lock.unclosed, lock.episode, lock.start) == (3, 2, "ab" * 20)
        assert lock.began is not None


def test_a_killed_drivers_round_stays_named_until_it_is_closed(tmp_path: Path) -> None:
    (tmp_path / NAME).write_text("999999 4242 2 1 " + "cd" * 20 + " 1700000000.000\n")
    with DriveLock(tmp_path, tmp_path, "s/b") as lock:  # a driver killed in round 2
        assert (lock.unclosed, lock.episode) == (2, 1)
        # killed now, before it closed round 2: the next driver must still find it
        assert (tmp_path / NAME).read_text() == \
            f"{os.getpid()} - 2 1 {'cd' * 20} 1700000000.000\n"
    with DriveLock(tmp_path, tmp_path, "s/b") as lock:
        assert (lock.unclosed, lock.episode) == (2, 1)
        lock.closed()
        assert (tmp_path / NAME).read_text() == f"{os.getpid()}\n"
    with DriveLock(tmp_path, tmp_path, "s/b") as lock:
        assert lock.unclosed is None


def test_a_lock_an_older_leapgit_wrote_names_no_episode(tmp_path: Path) -> None:
    """Its round is closed at 0 as before: no builder's word is read for it."""
    (tmp_path / NAME).write_text("999999 4242 2 " + "cd" * 20 + "\n")
    with DriveLock(tmp_path, tmp_path, "s/b") as lock:
        assert (lock.unclosed, lock.episode, lock.exit_file()) == (2, None, None)


def test_the_exit_file_is_the_named_rounds_own_and_never_outlives_it(tmp_path: Path) -> None:
    """Two blind reviews: ``builder-<round>.exit`` named no episode and was never removed, so
    a kill just after a round was named read an earlier episode's builder's exit 0 as this
    round's claim, for a builder that never ran."""
    with DriveLock(tmp_path, tmp_path, "s/b") as lock:
        lock.starting(1, 1, "ab" * 20)
        first = lock.exit_file()
        assert first is not None
        first.write_text("0\n")  # episode 1's builder ended
        lock.closed()
        assert not first.exists()  # recorded: gone
        stale = tmp_path / "builder-2-1.exit"
        stale.write_text("0\n")  # left by anything else
        lock.starting(1, 2, "ab" * 20)
        assert lock.exit_file() == stale and not stale.exists()  # never read as this one's


def test_a_shorter_line_never_leaves_the_longer_ones_tail(tmp_path: Path) -> None:
    with DriveLock(tmp_path, tmp_path, "s/b") as lock:
        lock.started(123456789, 4)
        lock.closed()
        assert (tmp_path / NAME).read_text() == f"{os.getpid()}\n"
