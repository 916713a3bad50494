"""L9, a hunt of two people on one remote: A's `leap run pkgs` is killed (-9) while the push
of its integrator lease's take waits on the remote: the remote took lease 1 for A's clone,
A's own ledger never recorded it. B's run of its slice `more` waits for lease 1 and named
what gives it back: `leap lease release --holder integrator` and `leap sync origin` in its
clone. Followed exactly in A's clone, the release found no open lease (A's ledger lacked
its own take), and B waited on for good. The hint syncs first; followed, B's run lands."""

from __future__ import annotations

import os
import signal
import sys
import time

from tests.loop import workers_world as ww
from tests.loop.test_run_lease import MORE
from tests.support import GitDaemon, hinted_leap
from tests.tribunal.jurors import JurorServer

# post-receive: a ledger push whose commits carry the marker's text is held open 4 s after
# it landed (the pusher is killed meanwhile)
HOOK = """#!{py}
import os, re, subprocess, sys, time
lines = sys.stdin.read().split()
if os.path.exists({marker!r}):
    for i in range(0, len(lines), 3):
        old, new, ref = lines[i:i + 3]
        if ref == "refs/heads/leap/ledger" and set(old) != {{"0"}}:
            text = subprocess.run(["git", "log", "-p", f"{{old}}..{{new}}"],
                                  capture_output=True, text=True).stdout
            if re.search(open({marker!r}).read().strip(), text):
                open({entered!r}, "w").write("")
                time.sleep(4)
"""
RUN = ("--poll", "0.2", "--heartbeat", "0")


def until(pred, what, timeout=120.0):  # noqa: ANN001, ANN201
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, what()
        time.sleep(0.05)


def test_the_holders_release_hint_a_waiting_run_names_gives_back_a_lease_its_clone_never_saw(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    w = ww.world(daemon, jurors, "lease-hint-order", 2)
    b = w.clone("B")
    assert w.leap("sync", "origin", cwd=b).code == 0
    (w.base_dir / "more.yaml").write_text(MORE)
    assert w.leap("slice", "cut", str(w.base_dir / "more.yaml"), cwd=b).code == 0
    marker, entered = w.base_dir / "slow", w.base_dir / "entered"
    hook = w.bare / "hooks" / "post-receive"
    hook.write_text(HOOK.format(py=sys.executable, marker=str(marker), entered=str(entered)))
    hook.chmod(0o755)
    marker.write_text(r'reason: .merge pkgs on')
    a = w.popen("run", ww.S, *RUN, cwd=w.work, log=w.base_dir / "A.log")
    until(entered.exists, lambda: (w.base_dir / "A.log").read_text()[-3000:])
    os.kill(a.pid, signal.SIGKILL)  # its lease's take landed on the remote, not here
    a.wait()
    marker.unlink()
    time.sleep(4.5)  # the held push ends
    log = w.base_dir / "B.log"
    bb = w.popen("run", "more", *RUN, cwd=b, log=log)
    try:
        until(lambda: "waits for lease" in log.read_text(), lambda: log.read_text()[-3000:])
        [line] = [ln for ln in log.read_text().splitlines() if "waits for lease" in ln]
        said = line.partition("its holder gives back")[2]
        hints = hinted_leap(said)
        assert hints == [["sync", "origin"], ["lease", "release", "--holder", "integrator"],
                         ["sync", "origin"]], line
        for cmd in hints:  # the hint, exactly, in the holder's clone
            res = w.leap(*cmd)
            assert res.code == 0, (cmd, res)
        assert ww.wait(bb, log, 60) == 0, log.read_text()[-3000:]
    finally:
        if bb.poll() is None:
            bb.kill()
            bb.wait()
