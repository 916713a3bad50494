"""One driver a ball at a time (L3): never two builders in one worktree.

`leap throw --run` holds an advisory ``flock`` on ``<worktree's git dir>/leap/drive.lock``
while it drives a ball, and hands the lock's descriptor to the builder it starts. The kernel
drops the lock when its last holder is gone, so a run killed by SIGKILL frees the ball at
once, unless its builder (in a session of its own) is still running: then that builder
keeps the ball until it ends, and a new run is told which process group to stop. The file
names the driver's pid and, from just before a builder starts, the round (and then the
builder's process group, ``-`` until it is known):
a round the file still names when the next driver takes the lock was never closed by its
own (the run was killed), and that driver closes it first (``carry.close_killed_round``).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from leapgit.errors import Hold
from leapgit.procs import alive

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no lock, as before
    fcntl = None  # type: ignore[assignment]

NAME = "drive.lock"


def _busy(path: Path, worktree: Path, ball: str) -> Hold:
    try:
        said = path.read_text(encoding="utf-8").split()
    except OSError:
        said = []
    driver = int(said[0]) if said and said[0].isdigit() else None
    group = int(said[1]) if len(said) > 1 and said[1].isdigit() else None
    if driver is not None and driver != os.getpid() and alive(driver):
        return Hold(f"{ball} is being driven by another run of leapgit (pid {driver}) in "
                    f"{worktree}", rule="L3", hint="wait for that run to end, or stop it "
                    f"(`kill {driver}`), then run again")
    stop = f"`kill -- -{group}`" if group is not None else "stop it"
    return Hold(f"a builder is still running in {worktree} (process group {group or '?'}, "
                "left by a run of leapgit that is gone: a throw's, a slice's or a worker's)",
                rule="L3",
                hint=f"wait for it to end, or stop it ({stop}), then run again")


class DriveLock:
    """``with DriveLock(folder, worktree, ball) as lock:`` while driving; ``lock.fd`` goes to
    the builder (``pass_fds``), ``lock.started(pgid)`` names its process group."""

    def __init__(self, folder: Path | None, worktree: Path, ball: str) -> None:
        self.path = folder / NAME if folder is not None else None  # None: no lock to take
        self.worktree, self.ball = worktree, ball
        self.fd: int | None = None
        # the round named (``starting``): its number, its episode (None: a lock file an
        # older leapgit wrote), HEAD and the time (epoch seconds) as its builder started
        self.unclosed: int | None = None
        self.episode: int | None = None
        self.start = ""
        self.began: float | None = None

    def take(self) -> int | None:
        """The locked descriptor, or the Hold that says who holds the ball."""
        if fcntl is None or self.path is None:
            return None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise _busy(self.path, self.worktree, self.ball) from None
        return fd

    def __enter__(self) -> DriveLock:
        fd = self.take()
        if fd is None:
            return self
        self.fd = fd
        said = os.pread(fd, 300, 0).decode(errors="replace").split() + ["-"] * 6
        # a round the last driver started and never closed (it was killed); named on until
        # it is closed, so a kill of this driver before then loses it no more than the last
        self.unclosed = int(said[2]) if said[2].isdigit() else None
        if self.unclosed is not None:
            self.episode = int(said[3]) if said[3].isdigit() else None
            self.start = said[4] if self.episode is not None and said[4] != "-" else ""
            try:
                self.began = float(said[5]) if self.episode is not None else None
            except ValueError:
                self.began = None
        self._say(self._line("-"))
        return self

    def _line(self, group: str) -> str:
        if self.unclosed is None:
            return f"{os.getpid()}\n"
        began = f"{self.began:.3f}" if self.began is not None else "-"
        return (f"{os.getpid()} {group} {self.unclosed} {self.episode or '-'} "
                f"{self.start or '-'} {began}\n")

    def starting(self, round_no: int, episode: int, start: str) -> None:
        """Before the builder of ``episode``'s round ``round_no`` starts (at HEAD ``start``):
        from here a kill leaves a round for the next driver to close, with what the builder
        left and, once it ended, its exit status (``exit_file``); never files that no round
        accounts for."""
        self.unclosed, self.episode, self.start, self.began = \
            round_no, episode, start, time.time()
        exit_file = self.exit_file()
        if exit_file is not None:
            exit_file.unlink(missing_ok=True)  # never an earlier builder's word for this one
        self._say(self._line("-"))

    def started(self, group: int, round_no: int) -> None:
        self._say(self._line(str(group)))

    def exit_file(self) -> Path | None:
        """Where the named round's builder's exit status is written as it ends (by its own
        shell, ``builder.run_builder``): a driver killed meanwhile loses it no more."""
        if self.path is None or self.unclosed is None or self.episode is None:
            return None
        return self.path.parent / f"builder-{self.episode}-{self.unclosed}.exit"

    def closed(self) -> None:
        """The round is recorded: nothing is left to close."""
        exit_file = self.exit_file()
        if exit_file is not None:
            exit_file.unlink(missing_ok=True)
        self.unclosed, self.episode, self.start, self.began = None, None, "", None
        self._say(self._line("-"))

    def _say(self, text: str) -> None:
        """Written over what it said, then cut to length: a kill in between leaves the round
        named (never an empty file)."""
        if self.fd is not None:
            data = text.encode()
            os.pwrite(self.fd, data, 0)
            os.ftruncate(self.fd, len(data))

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def held(folder: Path) -> bool:
    """Whether a driver (or the builder it handed the lock to, in any process) holds the
    drive lock in ``folder`` now: its worktree is being built in."""
    path = folder / NAME
    if fcntl is None or not path.exists():
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops a lock taken here
    return False


def left_running(folder: Path) -> bool:
    """Whether a builder a driver that is gone handed the lock to still holds it in
    ``folder`` (the builder runs in a session of its own and outlives a killed driver)."""
    if not held(folder):
        return False
    try:
        said = (folder / NAME).read_text(encoding="utf-8").split()
    except OSError:
        said = []
    driver = int(said[0]) if said and said[0].isdigit() else None
    return driver is None or (driver != os.getpid() and not alive(driver))


def check_free(folder: Path | None, worktree: Path, ball: str) -> None:
    """Raise the Hold a driver would meet now (the throw asks before it changes anything);
    what the file says is left for the driver."""
    fd = DriveLock(folder, worktree, ball).take()
    if fd is not None:
        os.close(fd)
