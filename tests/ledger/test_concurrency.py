"""Nothing lost: many writers at once, and writers killed mid-write."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from leapgit.ledger.store import Ledger
from tests.support import IDENTITY, git, make_repo

WRITER = """
import sys
from leapgit.ledger.store import Ledger
root, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
with Ledger(root) as ledger:
    print("ready", flush=True)
    i = 0
    while count < 0 or i < count:
        ledger.append({f"w/{name}/{i}.yaml": f"writer: {name}\\nn: {i}\\n".encode()},
                      f"{name} {i}", [("Leap-Writer", name)])
        i += 1
"""


def _writer(git_dir: Path, name: str, count: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(git_dir), name, str(count)],
        stdout=subprocess.PIPE, text=True, env={**os.environ, **IDENTITY},
    )


def _ledger_repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "repo", {"f": "x\n"})
    with Ledger(root / ".git") as ledger:
        ledger.init(b"kind: ledger\n")
    return root


def test_four_processes_append_fifty_each_and_none_is_lost(tmp_path: Path) -> None:
    root = _ledger_repo(tmp_path)
    procs = [_writer(root / ".git", f"p{i}", 50) for i in range(4)]
    # a plain git writer racing them, to prove the compare-and-swap against git itself
    for i in range(10):
        blob = git("hash-object", "-w", "--stdin", cwd=root, input=f"git {i}\n".encode())
        env = {"GIT_INDEX_FILE": str(tmp_path / "idx")}
        while True:
            tip = git("rev-parse", "leap/ledger", cwd=root)
            git("read-tree", tip, cwd=root, env=env)
            git("update-index", "--add", "--cacheinfo", f"100644,{blob},g/{i}.yaml",
                cwd=root, env=env)
            tree = git("write-tree", cwd=root, env=env)
            new = git("commit-tree", tree, "-p", tip, "-m", f"git {i}", cwd=root)
            moved = subprocess.run(["git", "update-ref", "refs/heads/leap/ledger", new, tip],
                                   cwd=root, capture_output=True)
            if moved.returncode == 0:
                break
    for proc in procs:
        assert proc.wait(120) == 0
    files = git("ls-tree", "-r", "--name-only", "leap/ledger", "w", cwd=root).split()
    assert len(files) == 200 and len(set(files)) == 200
    assert len(git("ls-tree", "-r", "--name-only", "leap/ledger", "g", cwd=root).split()) == 10
    assert git("rev-list", "--count", "leap/ledger", cwd=root) == str(1 + 200 + 10)
    assert git("rev-list", "--merges", "leap/ledger", cwd=root) == ""  # linear
    fsck = subprocess.run(["git", "fsck", "--strict", "--no-dangling"], cwd=root,
                          capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stderr


def test_a_writer_killed_at_random_points_never_leaves_a_broken_ref(tmp_path: Path) -> None:
    root = _ledger_repo(tmp_path)
    rng = random.Random(20261130)
    kills = 0
    for round_no in range(50):
        proc = _writer(root / ".git", f"k{round_no}", -1)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0, 0.03))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills += 1
        tip = git("rev-parse", "leap/ledger", cwd=root)
        # the ref names a complete commit whose whole tree is readable
        git("cat-file", "-e", f"{tip}^{{commit}}", cwd=root)
        git("ls-tree", "-r", tip, cwd=root)
    fsck = subprocess.run(["git", "fsck", "--strict", "--no-dangling", "leap/ledger"], cwd=root,
                          capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stderr
    with Ledger(root / ".git") as ledger:
        before = ledger.tip()
        written = ledger.append({"after-crash.yaml": b"ok\n"}, "after the crashes")
    assert kills == 50
    # the next write cleared whatever lock files a kill left (none may block a later write)
    assert not list((root / ".git" / "objects").glob("*/*.lock"))
    assert not list((root / ".git" / "refs").rglob("*.lock"))
    assert git("rev-parse", f"{written.commit}^", cwd=root) == before


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="names an fd through /proc")
def test_ctrl_c_while_the_ref_swap_holds_git_s_ref_lock_leaves_no_lock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C (a real SIGINT to this process) that arrives while the compare-and-swap
    holds ``<ref>.lock``: dulwich fsyncs the lock file in its close, and a KeyboardInterrupt
    raised there left the lock behind for as long as the interrupt was handled, so the
    handler's own write (`leap run` giving its run lease back) was LedgerBusy and the lease
    stayed open (found under load). The swap finishes whole; the interrupt comes after."""
    import dulwich.file

    git_dir = _ledger_repo(tmp_path) / ".git"
    real_fsync = os.fsync

    def fsync_then_ctrl_c(fd: int) -> None:
        real_fsync(fd)
        if os.readlink(f"/proc/self/fd/{fd}").endswith("ledger.lock"):  # the ref's lock
            monkeypatch.setattr(dulwich.file.os, "fsync", real_fsync)  # once
            os.kill(os.getpid(), signal.SIGINT)  # Python raises it at the next bytecode

    monkeypatch.setattr(dulwich.file.os, "fsync", fsync_then_ctrl_c)
    interrupted = False
    with Ledger(git_dir) as ledger:
        try:
            ledger.append({"a.yaml": b"a: 1\n"}, "a")
        except KeyboardInterrupt:
            interrupted = True
            ledger.append({"b.yaml": b"b: 1\n"}, "b")  # while the interrupt is handled
    assert interrupted
    assert not (git_dir / "refs" / "heads" / "leap" / "ledger.lock").exists()
    files = git("ls-tree", "--name-only", "leap/ledger", cwd=git_dir.parent).split()
    assert {"a.yaml", "b.yaml"} <= set(files), files
    assert git("fsck", "--no-progress", cwd=git_dir.parent) == ""
