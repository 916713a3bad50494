"""L3, a hunt of two people on one remote: A threw ball b1 of `pkgs` to the workers
(`--remote origin`); B, in another clone, ran `leap merge pkgs` by hand. Its hold named a
plain `leap run pkgs`, which, followed exactly, waited for the workers' round for good,
silently (it never reads the remote), and built and paid for the slice's other ball a second
time in B's clone, so that B's `leap sync` later stopped on "a true conflict". The hold
names the run with the slice's shared remote, and a plain run of such a slice is refused
naming it; followed, with a worker at work, the slice lands and both clones sync."""

from __future__ import annotations

import signal

from tests.loop import workers_world as ww
from tests.support import GitDaemon, git, hinted_leap, leap
from tests.tribunal.jurors import JurorServer


def test_the_run_a_merge_hold_names_for_a_published_slice_goes_with_its_remote(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    w = ww.published(daemon, jurors, "plain-run-hint")  # b1 thrown to the workers
    b = w.clone("B")  # the other person's clone
    assert w.leap("sync", "origin", cwd=b).code == 0
    held = w.leap("merge", ww.S, cwd=b)
    assert held.code == 3, held
    runs = [h for h in hinted_leap(held.err) if h[0] == "run"]
    assert runs == [["run", ww.S, "--remote", "origin"]], held.err
    plain = w.leap("run", ww.S, "--heartbeat", "0", cwd=b)  # what it named before
    assert plain.code == 2 and "published to workers" in plain.err, plain
    assert hinted_leap(plain.err) == runs, plain.err
    worker = w.popen("worker", "--remote", "origin", "--name", "w1", "--poll", "0.2",
                     cwd=w.clone("w1"))
    try:
        landed = w.leap(*runs[0], "--poll", "0.2", "--heartbeat", "0", cwd=b, timeout=200)
    finally:
        worker.send_signal(signal.SIGINT)
        ww.wait(worker, w.base_dir / "w1.log", 60)
    assert landed.code == 0 and "landed" in landed.out, landed.out[-2000:]
    for clone in (w.work, b):  # nothing built beside the remote's: no conflict anywhere
        assert w.leap("sync", "origin", cwd=clone).code == 0
    assert git("rev-parse", "refs/heads/main", cwd=w.bare) == \
        git("rev-parse", "refs/remotes/origin/main", cwd=b)
    assert leap("audit", cwd=b).code == 0
