"""The ledger's writer lock (``ledger/lock.py``): exclusive between threads and processes,
re-entrant in one thread, released by the kernel when its holder is killed."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from leapgit.ledger.lock import LockTimeout, WriterLock

HOLD = ("import sys, time\nsys.path.insert(0, {root!r})\n"
        "from leapgit.ledger.lock import WriterLock\n"
        "with WriterLock({path!r}, 5):\n"
        "    print('held', flush=True)\n    time.sleep(60)\n")


def test_two_threads_take_turns_and_one_thread_may_take_it_again(tmp_path: Path) -> None:
    lock = WriterLock(tmp_path / "l.lock", timeout=5)
    inside: list[int] = []
    overlap: list[bool] = []

    def work(n: int) -> None:
        for _ in range(20):
            with lock, lock:  # re-entrant within a thread
                inside.append(n)
                overlap.append(len(inside) > 1)
                time.sleep(0.001)
                inside.remove(n)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(overlap) == 80
    assert not any(overlap)


def test_a_held_lock_times_out_and_a_killed_holder_releases_it(tmp_path: Path) -> None:
    path = tmp_path / "l.lock"
    root = str(Path(__file__).resolve().parents[2])
    holder = subprocess.Popen([sys.executable, "-c", HOLD.format(root=root, path=str(path))],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(LockTimeout), WriterLock(path, timeout=0.2):
            pass
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        with WriterLock(path, timeout=5) as taken:
            assert taken.path == str(path)
    finally:
        holder.kill()
        holder.wait()


def test_it_excludes_a_filelock_holder_on_the_same_file(tmp_path: Path) -> None:
    from filelock import FileLock

    path = tmp_path / "l.lock"
    other = FileLock(str(path), timeout=0)
    result: list[str] = []

    def probe() -> None:  # another thread: filelock's lock is per thread
        try:
            with WriterLock(path, timeout=0.1):
                result.append("taken")
        except LockTimeout:
            result.append("refused")

    with other:
        t = threading.Thread(target=probe)
        t.start()
        t.join()
    assert result == ["refused"]


def test_a_forked_child_does_not_inherit_its_parents_hold(tmp_path: Path) -> None:
    import os

    lock = WriterLock(tmp_path / "l.lock", timeout=0.2)
    with lock:
        pid = os.fork()
        if pid == 0:  # the child: the parent's hold is not its own
            try:
                with lock:
                    os._exit(1)  # entered while the parent holds it
            except LockTimeout:
                os._exit(0)
            os._exit(2)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_a_notice_that_cannot_be_said_never_costs_the_write(tmp_path: Path) -> None:
    """The wait notice is best effort (final review, reversibility F3): a stderr that is a
    closed pipe must not abort the write that waited, nor leak the descriptor it waited on;
    a timeout leaks none either."""
    import os

    path = tmp_path / "l.lock"
    root = str(Path(__file__).resolve().parents[2])
    hold = HOLD.replace("time.sleep(60)", "time.sleep(0.6)")
    holder = subprocess.Popen([sys.executable, "-c", hold.format(root=root, path=str(path))],
                              stdout=subprocess.PIPE, text=True)
    said: list[str] = []

    def broken_pipe(where: str) -> None:
        said.append(where)
        raise BrokenPipeError(32, "Broken pipe")

    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        before = len(os.listdir("/proc/self/fd"))
        with pytest.raises(LockTimeout), WriterLock(path, timeout=0.1):
            pass
        assert len(os.listdir("/proc/self/fd")) == before
        with WriterLock(path, timeout=5, on_wait=broken_pipe, notice_after=0.1) as taken:
            assert taken.path == str(path)
        assert said == [str(path)]
        assert len(os.listdir("/proc/self/fd")) == before
    finally:
        holder.kill()
        holder.wait()
