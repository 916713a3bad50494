"""Nothing lost under concurrency (L5, L8): two throws of one new ball at once, or a prune
beside a throw, never take the first throw's worktree, made and not yet recorded, for a
killed throw's leftover. One command at a time places or removes ball worktrees in a clone
(``place.placing``); the second waits, then sees the first's throw record."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from leapgit.worktrees import place
from tests.support import IDENTITY, git, leap, ref
from tests.worktrees.conftest import worktree_of


def _hold(lock: Path) -> subprocess.Popen[str]:
    """Another process holding the advisory lock at ``lock`` until it is killed."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, os, sys, time\n"
         f"fd = os.open({str(lock)!r}, os.O_RDWR | os.O_CREAT)\n"
         "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(120)"],
        stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


def _start(args: list[str], cwd: Path, err: Path) -> subprocess.Popen[str]:
    """A `leap` process, once it has ended or said that it waits (for a lock)."""
    with err.open("w") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "leapgit", *args], cwd=cwd, text=True,
                                stdout=subprocess.PIPE, stderr=fh,
                                env={**os.environ, **IDENTITY})
    deadline = time.monotonic() + 60
    while proc.poll() is None and "waiting for" not in err.read_text():
        assert time.monotonic() < deadline, f"leap {args} neither ended nor waited"
        time.sleep(0.05)
    return proc


def _paused(diamond: Path, tmp_path: Path) -> tuple[subprocess.Popen[str], subprocess.Popen[str]]:
    """A first `leap throw dia --ball A` stopped between its worktree and its record: it
    waits for the ledger's writer lock, which another process holds."""
    holder = _hold(diamond / ".git" / "leap-ledger.lock")
    first = _start(["throw", "dia", "--ball", "A"], diamond, tmp_path / "first.err")
    assert first.poll() is None, (tmp_path / "first.err").read_text()
    assert worktree_of(diamond, "A").is_dir() and ref(diamond, "leap/ball/dia/A") is not None
    assert "throw dia" not in git("log", "--format=%s", "leap/ledger", cwd=diamond)
    return holder, first


def _go_on(holder: subprocess.Popen[str], first: subprocess.Popen[str],
           tmp_path: Path) -> tuple[int, str, str]:
    holder.kill()
    holder.wait()
    out, _ = first.communicate(timeout=120)
    return first.returncode, out, (tmp_path / "first.err").read_text()


def _one_throw_recorded(diamond: Path) -> None:
    throws = git("log", "--format=%s", "leap/ledger", cwd=diamond).splitlines()
    assert [s for s in throws if s.startswith("throw dia")] == ["throw dia: A"], throws
    wt = worktree_of(diamond, "A")
    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=wt) == "leap/ball/dia/A"
    assert git("status", "--porcelain", cwd=wt) == ""


def test_a_second_throw_of_a_ball_being_thrown_waits_and_is_told_it_is_in_flight(
        diamond: Path, tmp_path: Path) -> None:
    holder, first = _paused(diamond, tmp_path)
    second = _start(["throw", "dia", "--ball", "A"], diamond, tmp_path / "second.err")
    code, out, err = _go_on(holder, first, tmp_path)
    assert code == 0, (out, err)
    out2, _ = second.communicate(timeout=120)
    err2 = (tmp_path / "second.err").read_text()
    assert second.returncode == 1 and "dia/A is in flight: episode 1" in err2, (out2, err2)
    assert "re-throwing a ball in flight is refused [L3]" in err2
    _one_throw_recorded(diamond)


def test_a_prune_beside_a_throw_leaves_the_worktree_the_throw_records(
        diamond: Path, tmp_path: Path) -> None:
    holder, first = _paused(diamond, tmp_path)
    prune = _start(["worktree", "prune", "dia"], diamond, tmp_path / "prune.err")
    code, out, err = _go_on(holder, first, tmp_path)
    assert code == 0, (out, err)
    out2, _ = prune.communicate(timeout=120)
    err2 = (tmp_path / "prune.err").read_text()
    assert prune.returncode == 0 and "removed" not in out2, (out2, err2)
    _one_throw_recorded(diamond)


def test_a_throw_that_waited_past_its_patience_holds_and_its_hint_leads_on(
        diamond: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(place, "PLACE_WAIT", 0.3)
    lock = diamond / ".git" / place.PLACE_LOCK
    holder = subprocess.Popen(  # another leap command placing worktrees, hung
        [sys.executable, "-c", "import sys, time\n"
         "from leapgit.ledger.workspace import open_workspace\n"
         "from leapgit.worktrees import place\n"
         "sys.argv = ['leap', 'worktree', 'prune', 'dia']\n"
         "with place.placing(open_workspace('.')):\n"
         "    print('held', flush=True); time.sleep(120)"],
        cwd=diamond, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        r = leap("throw", "dia", "--ball", "A", cwd=diamond)
        assert r.code == 3 and "[L5]" in r.err and str(lock) in r.err, r
        assert f"pid {holder.pid}, `leap worktree prune dia` placed or removed ball " \
            "worktrees in this clone for 0.3 s" in r.err, r
        assert "run the same command again once it is done; if it hangs, stop it " \
            f"(`kill {holder.pid}`)" in r.err, r
        assert not worktree_of(diamond, "A").exists()
        hinted = re.findall(r"`(kill \d+)`", r.err)[0]
        subprocess.run(shlex.split(hinted), check=True)  # as it says
        holder.wait(timeout=30)
    finally:
        holder.kill()
        holder.wait()
    r = leap("throw", "dia", "--ball", "A", cwd=diamond)  # the same command, as it says
    assert r.code == 0, r
    _one_throw_recorded(diamond)


@pytest.mark.parametrize("said", ["\u00b2 leap throw", "9" * 5000 + " leap throw", ""])
def test_a_lock_file_that_names_no_pid_it_can_read_still_holds_in_one_line(
        diamond: Path, monkeypatch: pytest.MonkeyPatch, said: str) -> None:
    """Blind review (boundary): a pid git's int() refuses ('\u00b2' is a digit to
    str.isdigit) made the timeout an internal error."""
    monkeypatch.setattr(place, "PLACE_WAIT", 0.3)
    lock = diamond / ".git" / place.PLACE_LOCK
    holder = _hold(lock)
    try:
        lock.write_text(said)
        r = leap("worktree", "prune", "dia", cwd=diamond)
    finally:
        holder.kill()
        holder.wait()
    assert r.code == 3 and "another leap command placed or removed" in r.err, r


def test_the_lock_names_its_holder_without_writing_through_a_link(diamond: Path,
                                                                   tmp_path: Path) -> None:
    """Blind review (security): a `.git/leap-place.lock` linked to a file of the user's
    had that file truncated and overwritten with the holder's pid."""
    victim = tmp_path / "victim.txt"
    victim.write_text("important data\n")
    (diamond / ".git" / place.PLACE_LOCK).symlink_to(victim)
    r = leap("worktree", "prune", "dia", cwd=diamond)
    assert r.code in (0, 2, 3), r
    assert victim.read_text() == "important data\n"
