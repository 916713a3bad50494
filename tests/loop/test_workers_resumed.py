"""Issue 16: a ball resumed from another machine: a held ball resumed to workers from a
clone that never threw it, a published ball in flight continued by a worker, and a claim
given back after a Ctrl-C while it went up."""

from __future__ import annotations

import re
import signal
import time

import pytest

from leapgit.ledger import layout
from leapgit.records import yamlio
from tests.loop import workers_world as ww
from tests.loop.workers_world import wait
from tests.support import GitDaemon, git, hinted_leap
from tests.tribunal.jurors import JurorServer

# -- a ball resumed from another machine ---------------------------------------------------

HOLDING = """\
import os, pathlib
pathlib.Path(f"pkg/{os.environ['LEAP_BALL']}.py").write_text("def nothing():\\n    pass\\n")
pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 0\\nevidence: not there yet\\n")
"""


def test_a_held_ball_is_resumed_to_workers_from_a_clone_that_never_threw_it(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """A worker's four rounds all hold (the episode ends at 0); an orchestrator on another
    clone, which never had the ball's branch, resumes it to the workers as the hold's hint
    says: the new episode goes on from the worker's last round, as the remote holds it."""
    w = _held_by_a_worker(daemon, jurors, "resumed")
    tip = git("rev-parse", "refs/heads/leap/ball/pkgs/b1", cwd=w.bare)
    other = w.clone("second-orchestrator")
    hold = w.leap("throw", ww.S, "--ball", "b1", "--remote", "origin", cwd=other)
    assert hold.code == 3 and "--resume" in hold.err, hold
    again = hinted_leap(hold.err)  # as printed: it left out --remote, and resumed it here
    assert again == [["throw", ww.S, "--ball", "b1", "--resume", "--remote", "origin"]], \
        hold.err
    res = w.leap(*again[0], cwd=other)
    assert res.code == 0 and "published to workers" in res.out, res
    thrown = yamlio.loads(w.ledger_text(layout.throw_path(ww.S, "b1", 2))
                          .encode(), "throw.yaml")
    assert thrown["resumed_from"] == 1 and thrown["published"] is True, thrown
    assert git("rev-parse", "refs/heads/leap/ball/pkgs/b1", cwd=w.bare) == tip
    assert git("rev-parse", "refs/heads/leap/ball/pkgs/b1", cwd=other) == tip


def _held_by_a_worker(daemon: GitDaemon, jurors: JurorServer, name: str) -> ww.World:
    """b1 published, and a worker's four rounds of it all held: its episode ended at 0."""
    w = ww.published(daemon, jurors, name)
    (w.base_dir / "builder.py").write_text(HOLDING)
    clone = w.clone("holder")
    res = w.leap("worker", "--remote", "origin", "--name", "holder", "--once", cwd=clone)
    assert res.code == 0, res
    assert [(r["round"], r["outcome"]) for r in ww.receipts(w)["b1"]] == \
        [(n, 0) for n in (1, 2, 3, 4)]
    return w


@pytest.mark.parametrize("remote", ["origin", "shared"])
def test_status_of_a_ball_its_worker_held_resumes_it_to_the_workers(
        daemon: GitDaemon, jurors: JurorServer, remote: str) -> None:
    """A hint hunt: `leap status` of a published ball whose worker's episode ended at 0
    named `leap throw S --ball B --resume`, which made episode 2 in a worktree of the
    thrower's clone, never published: no worker ever saw it. It names the shared remote
    (the one the spine tracks, whatever its name), and that publishes episode 2."""
    w = _held_by_a_worker(daemon, jurors, f"status-resume-{remote}")
    if remote != "origin":
        git("remote", "rename", "origin", remote, cwd=w.work)
    assert w.leap("sync", remote).code == 0
    said = w.leap("status", ww.S)
    resume = ["throw", ww.S, "--ball", "b1", "--resume", "--remote", remote]
    assert resume in hinted_leap(said.out), said.out
    # the worker's log is a path on its machine, said so (not a file of this clone)
    [log] = [ln for ln in said.out.splitlines() if ln.strip().startswith("log ")]
    assert log.endswith("(on worker holder's machine)"), said.out
    res = w.leap(*resume)  # the hint, exactly
    assert res.code == 0 and "published to workers" in res.out, res
    thrown = yamlio.loads(w.ledger_text(layout.throw_path(ww.S, "b1", 2)).encode(),
                          "throw.yaml")
    assert thrown["resumed_from"] == 1 and thrown["published"] is True, thrown


def test_a_published_ball_in_flight_is_sent_to_a_worker_and_a_worker_continues_it(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """Its worker was stopped (Ctrl-C: round 1 held, the claim given back): throwing it
    again is refused (L3) with the hint that leads on, and the hinted worker builds round 2
    from the branch's tip."""
    w = ww.published(daemon, jurors, "inflight")
    proc = ww.hung_worker(w, "stopped")
    proc.send_signal(signal.SIGINT)
    assert wait(proc, w.base_dir / "stopped.log", 60) == 130
    (w.base_dir / "hang-b1").unlink()
    res = w.leap("throw", ww.S, "--ball", "b1", "--remote", "origin")
    assert res.code == 1 and "[L3]" in res.err, res
    hint = f"`leap worker --remote origin --slice {ww.S}` on any clone continues it"
    assert hint in res.err, res  # the remote the throw named, not a placeholder
    # the hinted command, as is, named for the receipts (it keeps serving: stopped once its
    # round is up)
    [again] = hinted_leap(res.err)
    proc = w.popen(*again, "--name", "next", cwd=w.clone("next"))
    deadline = time.monotonic() + 120
    while len(ww.receipts(w)["b1"]) < 2:
        assert time.monotonic() < deadline and proc.poll() is None, \
            (w.base_dir / "next.log").read_text()
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    wait(proc, w.base_dir / "next.log", 60)
    got = ww.receipts(w)["b1"]
    assert [(r["round"], r["outcome"], r["worker"]) for r in got] == \
        [(1, 0, "stopped"), (2, 1, "next")], got


def test_ctrl_c_while_the_claim_goes_up_gives_a_landed_claim_back(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """Ctrl-C came after the remote took the claim, before `git push` said so: the worker
    gives it back before it exits, instead of leaving the ball held by no one until the
    lease runs out (L9)."""
    w = ww.published(daemon, jurors, "ctrlc-claim")
    marker, entered = ww.slow_pushes(w)
    clone = w.clone("hasty")
    proc = w.popen("worker", "--remote", "origin", "--name", "hasty", "--poll", "0.2",
                   cwd=clone)
    deadline = time.monotonic() + 60
    while not entered.exists():  # the take landed; its push has not returned
        assert time.monotonic() < deadline and proc.poll() is None, \
            (w.base_dir / "hasty.log").read_text()
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    marker.unlink()
    assert wait(proc, w.base_dir / "hasty.log", 60) == 130
    names = ww.claim_files(w)
    assert any(p.endswith("/claims/1/take.yaml") for p in names), names
    assert any(p.endswith("/claims/1/release.yaml") for p in names), \
        (names, (w.base_dir / "hasty.log").read_text())
    assert "receipts" not in " ".join(w.ledger_files(f"slices/{ww.S}/balls/b1/"))


def test_a_published_ball_whose_branch_only_its_workers_clone_holds_is_resumed_as_said(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """A hint-coverage hunt: a held published ball whose branch is gone from the remote and
    was never in this clone. The hint said to fetch it from the remote, which no longer
    held it; it now says where it is not, to push it back from the clone that built it,
    and the resume after: both, run exactly, put the ball back to its workers."""
    w = ww.published(daemon, jurors, "gone-branch")
    (w.base_dir / "builder.py").write_text(HOLDING)
    clone = w.clone("holder")
    res = w.leap("worker", "--remote", "origin", "--name", "holder", "--once", cwd=clone)
    assert res.code == 0, res
    branch = "leap/ball/pkgs/b1"
    tip = git("rev-parse", f"refs/heads/{branch}", cwd=w.bare)
    git("update-ref", "-d", f"refs/heads/{branch}", cwd=w.bare)  # gone from the remote
    other = w.clone("second-orchestrator")
    gone = w.leap("throw", ww.S, "--ball", "b1", "--resume", "--remote", "origin", cwd=other)
    assert gone.code == 2 and f"branch {branch} is not here to resume from, nor on origin" \
        in gone.err, gone
    fetch = re.search(r"\(`(git fetch CLONE [^`]+)`", gone.err)
    assert fetch is not None and fetch.group(1) == f"git fetch CLONE {branch}:{branch}", \
        gone.err
    git(*fetch.group(1).replace("CLONE", str(clone)).split()[1:], cwd=other)  # as printed
    [again] = hinted_leap(gone.err)
    assert again == ["throw", ww.S, "--ball", "b1", "--resume", "--remote", "origin"], gone
    res = w.leap(*again, cwd=other)
    assert res.code == 0 and "published to workers" in res.out, res
    assert git("rev-parse", f"refs/heads/{branch}", cwd=w.bare) == tip


def test_ctrl_c_twice_to_the_worker_s_group_while_its_round_goes_up_is_no_refusal(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """A walk-away hunt: two Ctrl-C to a worker's process group (a terminal's) while its
    round's push waited: the signal ended that `git push` too, which the worker read as the
    remote refusing the round. It said "the remote refused records recorded here", dropped
    its own receipt and filed the ball's red commit as refused evidence. A push a signal
    ended is no answer of the remote's: nothing is dropped or filed as refused."""
    import os
    import subprocess
    import sys

    w = ww.published(daemon, jurors, "ctrlc-push")
    marker, entered = ww.slow_pushes(w)
    clone = w.clone("pressed")
    log = w.base_dir / "pressed.log"
    with open(log, "ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "leapgit", "worker", "--remote",
                                 "origin", "--name", "pressed", "--poll", "0.2"], cwd=clone,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                env={**os.environ, **w.env})
    try:
        deadline = time.monotonic() + 90
        while "building" not in log.read_text() and "round 1" not in log.read_text():
            assert time.monotonic() < deadline and proc.poll() is None, log.read_text()
            time.sleep(0.02)
        entered.unlink(missing_ok=True)  # the claim's push landed before the build
        while not entered.exists():  # the round's push landed; `git push` has not returned
            assert time.monotonic() < deadline and proc.poll() is None, log.read_text()
            time.sleep(0.02)
        for _ in range(2):
            os.killpg(proc.pid, signal.SIGINT)
            time.sleep(0.5)
        marker.unlink()
        wait(proc, log, 60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    said = log.read_text()
    assert "refused" not in said, said
    assert git("for-each-ref", "refs/leap/evidence/", cwd=clone) == "", said


def test_status_names_the_remote_the_spine_tracks_beside_a_second_remote(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """A blind review: status asked which remote the slice record's `spine:` (a role,
    "integrator") tracks, not the spine branch's: with a second remote holding the ball's
    branch, its hints named `--remote REMOTE`, a placeholder no one can run."""
    w = ww.published(daemon, jurors, "two-remotes")
    mirror = w.base_dir / "mirror.git"
    git("clone", "-q", "--mirror", str(w.bare), str(mirror), cwd=w.base_dir)
    git("remote", "add", "mirror", str(mirror), cwd=w.work)
    git("fetch", "-q", "mirror", cwd=w.work)
    said = w.leap("status", ww.S).out
    runs = {tuple(c) for c in hinted_leap(said) if c[0] in ("run", "worker")}
    assert runs == {("run", ww.S, "--remote", "origin"), ("worker", "--remote", "origin")}, \
        said


def test_status_repair_of_a_ball_its_worker_held_twice_names_the_remote(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """A blind review: a published ball resumed once that a worker held again: status named
    the repair and a plain `leap run S` (built here, followed), while its other lines named
    `--remote R`. Every `leap run S` of a published slice names it."""
    w = _held_by_a_worker(daemon, jurors, "repair-published")
    assert w.leap("sync", "origin").code == 0
    assert w.leap("throw", ww.S, "--ball", "b1", "--resume", "--remote", "origin").code == 0
    res = w.leap("worker", "--remote", "origin", "--name", "holder", "--once",
                 cwd=w.base_dir / "holder")
    assert res.code == 0, res
    assert w.leap("sync", "origin").code == 0
    said = w.leap("status", ww.S).out
    line = next(ln for ln in said.splitlines() if "ended at 0 again" in ln)
    assert [c for c in hinted_leap(line) if c[0] == "run"] == \
        [["run", ww.S, "--remote", "origin"]], line
