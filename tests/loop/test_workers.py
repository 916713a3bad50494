"""Builders on many machines (issue 16): `leap run --remote` publishes, `leap worker`s on
other clones claim and build, the server's pre-receive holds the claims (L9). Real clones,
the real hook behind `git daemon` on 127.0.0.1, scripted jurors on loopback."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from leapgit.ledger import layout
from leapgit.records import yamlio
from tests.loop import workers_world as ww
from tests.loop.workers_world import wait
from tests.support import GitDaemon, git, leap
from tests.tribunal.jurors import JurorServer

DEPS = {"b7": ["b1"], "b8": ["b7"]}


def world(daemon: GitDaemon, jurors: JurorServer, name: str, n: int,
          deps: dict[str, list[str]] | None = None,
          claim_seconds: float = ww.CLAIM_SECONDS) -> ww.World:
    base = daemon.base / name
    base.mkdir()
    return ww.build(base, lambda bare: daemon.url(str(bare.relative_to(daemon.base))),
                    jurors.url, n, deps, claim_seconds)


def receipts(w: ww.World) -> dict[str, list[dict[str, object]]]:
    out: dict[str, list[dict[str, object]]] = {}
    for path in w.ledger_files("/receipts/"):
        raw = yamlio.loads(w.ledger_text(path).encode(), path)
        out.setdefault(str(raw["ball"]), []).append(raw)
    return out


def fsck(bare: Path) -> None:
    """The remote's objects are whole (dangling objects of lost races are no damage)."""
    proc = subprocess.run(["git", "fsck", "--no-progress", "--no-dangling"], cwd=bare,
                          capture_output=True, text=True)
    assert proc.returncode == 0 and not proc.stdout.strip(), proc


# -- three workers, an 8-ball slice -------------------------------------------------------

@pytest.fixture(scope="module")
def landed(daemon: GitDaemon, jurors: JurorServer) -> Iterator[tuple[ww.World, int, list[int]]]:
    w = world(daemon, jurors, "eight", 8, DEPS)
    clones = [w.clone(f"w{i}") for i in (1, 2, 3)]
    orch = w.popen("run", ww.S, "--remote", "origin", "--poll", "0.2", "--heartbeat", "0",
                   "--jobs", "3", cwd=w.work)
    workers = [w.popen("worker", "--remote", "origin", "--name", c.name, "--poll", "0.2",
                       cwd=c) for c in clones]
    code = wait(orch, w.base_dir / "work.log")
    codes = [wait(p, w.base_dir / f"w{i}.log", 60) for i, p in enumerate(workers, 1)]
    yield w, code, codes


def test_the_slice_lands_built_by_the_workers(landed: tuple[ww.World, int, list[int]]) -> None:
    w, code, codes = landed
    assert code == 0, (w.base_dir / "work.log").read_text()[-4000:]
    logs = {i: [ln for ln in (w.base_dir / f"w{i}.log").read_text().splitlines()
                if "error" in ln or "stopped" in ln or "refused" in ln] for i in (1, 2, 3)}
    assert codes == [0, 0, 0], (codes, logs)
    spine = git("log", "--first-parent", "--format=%s", "main", cwd=w.bare).splitlines()
    merged = [s for s in spine if s.startswith(f"leap: integrate {ww.S}/")]
    assert len(merged) == 8, spine


def test_every_round_names_the_worker_that_held_its_claim(
        landed: tuple[ww.World, int, list[int]]) -> None:
    w, _, _ = landed
    got = receipts(w)
    assert sorted(got) == ww.balls(8)
    names = {str(r["worker"]) for rs in got.values() for r in rs}
    assert names <= {"w1", "w2", "w3"} and names, names
    for ball, rs in got.items():
        claim_dir = f"slices/{ww.S}/balls/{ball}/episodes/1/claims/"
        takes = [p for p in w.ledger_files(claim_dir) if p.endswith("/take.yaml")]
        assert takes, ball
        holders = {yamlio.loads(w.ledger_text(p).encode(), p)["holder"] for p in takes}
        assert {r["worker"] for r in rs} <= holders, (ball, rs, holders)
        assert any(p.endswith("/release.yaml") for p in w.ledger_files(claim_dir)), ball
    # the thrower built nothing: no worktree of its own
    assert not (w.base_dir / "work.leap-worktrees").exists()


def test_the_audit_holds_on_a_fresh_clone(landed: tuple[ww.World, int, list[int]],
                                          tmp_path: Path) -> None:
    w, _, _ = landed
    fresh = tmp_path / "fresh"
    git("clone", "-q", w.url, str(fresh), cwd=tmp_path)
    git("fetch", "-q", "origin", "leap/ledger:leap/ledger", cwd=fresh)
    res = leap("audit", cwd=fresh)
    assert res.code == 0, res
    fsck(w.bare)


# -- the server holds the claim -----------------------------------------------------------

def published(daemon: GitDaemon, jurors: JurorServer, name: str,
              claim_seconds: float = ww.CLAIM_SECONDS) -> ww.World:
    """A one-ball slice thrown to workers (`leap throw --remote`), its red recorded."""
    from tests.scoring.world import commit_files

    w = world(daemon, jurors, name, 2, claim_seconds=claim_seconds)  # L4: two balls or more
    base = git("rev-parse", "main", cwd=w.work)
    red = commit_files(w.work, base, {"tests/test_b1.py": ww.red_test("b1")}, "test: b1")
    res = w.leap("red", ww.S, "b1", red)
    assert res.code == 0, res
    res = w.leap("throw", ww.S, "--ball", "b1", "--remote", "origin")
    assert res.code == 0 and "published to workers" in res.out, res
    assert git("rev-parse", "refs/heads/leap/ball/pkgs/b1", cwd=w.bare) == red
    return w


def claim_files(w: ww.World, ball: str = "b1") -> list[str]:
    return w.ledger_files(f"slices/{ww.S}/balls/{ball}/episodes/1/claims/")


def test_a_round_from_a_worker_without_the_claim_is_refused(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    from leapgit.ledger import layout
    from leapgit.ledger.sync import push_records
    from leapgit.records.claims import ClaimRecord
    from leapgit.records.types import Receipt
    from leapgit.timeutil import iso_at, now_iso

    w = published(daemon, jurors, "refused")
    holder, other = w.clone("holder"), w.clone("other")
    git("fetch", "-q", "origin", "leap/ledger:leap/ledger", cwd=other)
    (w.base_dir / "hang-b1").write_text("")
    proc = w.popen("worker", "--remote", "origin", "--name", "holder", "--poll", "0.2",
                   "--once", cwd=holder)
    deadline = time.monotonic() + 60
    while not any(p.endswith("take.yaml") for p in claim_files(w)):
        assert time.monotonic() < deadline and proc.poll() is None, \
            (w.base_dir / "holder.log").read_text()
        time.sleep(0.1)
    before = w.remote_ledger()
    # a second claim while holder's is live (L9: one writer per ball)
    rec = ClaimRecord(ww.S, "b1", 1, 2, "take", "other", now_iso(),
                      claimed_until=iso_at(time.time() + 3))
    with pytest.raises(Exception) as second:
        push_records("origin", {layout.claim_path(ww.S, "b1", 1, 2, "take"):
                                yamlio.dumps(rec.to_dict())}, "claim", start=other)
    assert "[L9]" in str(second.value.lines()) and "'holder' is live until" in \
        " ".join(second.value.lines()), second.value.lines()
    # a receipt of round 1 by another worker
    receipt = Receipt(ww.S, "b1", 1, 1, 0, "tried", now_iso(), worker="other")
    with pytest.raises(Exception) as third:
        push_records("origin", {layout.receipt_path(ww.S, "b1", 1, 1):
                                yamlio.dumps(receipt.to_dict())}, "round", start=other)
    said = " ".join(third.value.lines())
    assert "[L9]" in said and "recorded by worker 'other', but claim 1 is held by " \
        "'holder'" in said, said
    assert w.remote_ledger() == before  # nothing of it landed
    (w.base_dir / "hang-b1").unlink()
    assert wait(proc, w.base_dir / "holder.log", 60) == 0
    assert [r["worker"] for r in receipts(w)["b1"]] == ["holder"]


def test_two_workers_racing_for_a_ball_one_claim_wins_each_time(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    from leapgit.ledger import layout
    from leapgit.ledger.sync import push_records
    from leapgit.records.claims import ClaimRecord
    from leapgit.timeutil import iso_at, now_iso

    w = published(daemon, jurors, "race")
    a, b = w.clone("ra"), w.clone("rb")
    for c in (a, b):
        git("fetch", "-q", "origin", "leap/ledger:leap/ledger", cwd=c)

    def take(clone: Path, n: int, won: dict[str, bool]) -> None:
        rec = ClaimRecord(ww.S, "b1", 1, n, "take", clone.name, now_iso(),
                          claimed_until=iso_at(time.time() + 30))
        path = layout.claim_path(ww.S, "b1", 1, n, "take")
        try:
            push_records("origin", {path: yamlio.dumps(rec.to_dict())}, f"claim {n}",
                         start=clone)
            won[clone.name] = True
        except Exception:  # noqa: BLE001 -- the loser: a conflict or the server's refusal
            won[clone.name] = False

    for n in range(1, 51):
        won: dict[str, bool] = {}
        threads = [threading.Thread(target=take, args=(c, n, won)) for c in (a, b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(won.values()) == [False, True], (n, won)
        winner = a if won["ra"] else b
        rel = ClaimRecord(ww.S, "b1", 1, n, "release", winner.name, now_iso())
        push_records("origin", {layout.claim_path(ww.S, "b1", 1, n, "release"):
                                yamlio.dumps(rel.to_dict())}, "release", start=winner)
    takes = [p for p in claim_files(w) if p.endswith("take.yaml")]
    assert len(takes) == 50  # one take per race: the loser's never landed


def hung_worker(w: ww.World, name: str, *extra: str) -> subprocess.Popen[bytes]:
    """A worker (``name``, its own clone) whose builder has started ball b1's round and
    waits there (the ``hang-b1`` file) until the test lets it go on."""
    clone = w.clone(name)
    (w.base_dir / "hang-b1").write_text("")
    proc = w.popen("worker", "--remote", "origin", "--name", name, "--poll", "0.2", *extra,
                   cwd=clone)
    built = w.base_dir / "built.log"
    deadline = time.monotonic() + 60
    while not built.exists():  # the builder runs: the round is in the middle
        assert time.monotonic() < deadline and proc.poll() is None, \
            (w.base_dir / f"{name}.log").read_text()
        time.sleep(0.05)
    return proc


# -- a worker killed, a worker cut off -----------------------------------------------------

def test_a_killed_worker_s_ball_is_taken_over_once_its_claim_runs_out(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    w = published(daemon, jurors, "killed", claim_seconds=5)
    second = w.clone("second")
    proc = hung_worker(w, "first")
    built = w.base_dir / "built.log"
    proc.send_signal(signal.SIGKILL)  # the worker, in the middle of its round
    proc.wait()
    pid = int(built.read_text().split()[-1])
    try:
        os.kill(pid, signal.SIGKILL)  # the orphaned builder, as a dead machine's would be
    except ProcessLookupError:
        pass
    (w.base_dir / "hang-b1").unlink()
    took = time.monotonic()
    res = leap("worker", "--remote", "origin", "--name", "second", "--once", "--poll", "0.2",
               cwd=second, env=w.env, timeout=120)
    assert res.code == 0, res
    assert time.monotonic() - took >= 5 - 1.5  # it waited for the lease to run out
    got = receipts(w)["b1"]
    assert [r["round"] for r in got] == [1] and got[0]["worker"] == "second", got
    takes = sorted(p for p in claim_files(w) if p.endswith("take.yaml"))
    assert len(takes) == 2, takes
    assert yamlio.loads(w.ledger_text(takes[1]).encode(), takes[1])["holder"] == "second"
    fsck(w.bare)


def test_a_worker_that_loses_the_remote_stops_and_pushes_nothing_half(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    w = published(daemon, jurors, "cutoff")
    proc = hung_worker(w, "cut")
    clone = w.base_dir / "cut"
    branch_before = git("rev-parse", "refs/heads/leap/ball/pkgs/b1", cwd=w.bare)
    git("remote", "set-url", "origin", "git://127.0.0.1:9/gone.git", cwd=clone)
    (w.base_dir / "hang-b1").unlink()
    code = wait(proc, w.base_dir / "cut.log", 60)
    log = (w.base_dir / "cut.log").read_text()
    assert code == 1, log
    # one clear line: what stopped it, and where to look
    assert "stopped: cannot reach origin" in log and "nothing was pushed" in log, log
    assert "Traceback" not in log
    assert "receipts" not in " ".join(w.ledger_files(f"slices/{ww.S}/balls/b1/"))
    assert git("rev-parse", "refs/heads/leap/ball/pkgs/b1", cwd=w.bare) == branch_before


def test_a_stalled_worker_whose_lease_lapsed_renews_it_and_its_round_counts(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """A worker stopped (SIGSTOP: a machine asleep) past its lease, and no one took the
    ball over: it renews the lapsed claim before its round goes up (L9 allows it while no
    later claim exists), and the round lands."""
    w = published(daemon, jurors, "stalled", claim_seconds=3)
    proc = hung_worker(w, "sleepy", "--once")
    proc.send_signal(signal.SIGSTOP)
    time.sleep(4)  # past the 3 s lease: the claim lapsed
    (w.base_dir / "hang-b1").unlink()
    proc.send_signal(signal.SIGCONT)
    assert wait(proc, w.base_dir / "sleepy.log", 60) == 0, \
        (w.base_dir / "sleepy.log").read_text()
    got = receipts(w)["b1"]
    assert [(r["round"], r["worker"]) for r in got] == [(1, "sleepy")], got
    names = claim_files(w)
    assert any("/claims/1/renew-" in p for p in names), names
    assert not any("/claims/2/" in p for p in names), names


def test_ctrl_c_records_the_running_round_as_0_and_gives_the_claim_back(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    w = published(daemon, jurors, "ctrlc")
    proc = hung_worker(w, "polite")
    proc.send_signal(signal.SIGINT)
    assert wait(proc, w.base_dir / "polite.log", 60) == 130, \
        (w.base_dir / "polite.log").read_text()
    (w.base_dir / "hang-b1").unlink()
    got = receipts(w)["b1"]
    assert [(r["round"], r["outcome"], r["worker"]) for r in got] == [(1, 0, "polite")], got
    assert any(p.endswith("/claims/1/release.yaml") for p in claim_files(w))


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
    w = published(daemon, jurors, "resumed")
    (w.base_dir / "builder.py").write_text(HOLDING)
    clone = w.clone("holder")
    res = w.leap("worker", "--remote", "origin", "--name", "holder", "--once", cwd=clone)
    assert res.code == 0, res
    assert [(r["round"], r["outcome"]) for r in receipts(w)["b1"]] == \
        [(n, 0) for n in (1, 2, 3, 4)]
    tip = git("rev-parse", "refs/heads/leap/ball/pkgs/b1", cwd=w.bare)
    other = w.clone("second-orchestrator")
    hold = w.leap("throw", ww.S, "--ball", "b1", "--remote", "origin", cwd=other)
    assert hold.code == 3 and "--resume" in hold.err, hold
    res = w.leap("throw", ww.S, "--ball", "b1", "--resume", "--remote", "origin", cwd=other)
    assert res.code == 0 and "published to workers" in res.out, res
    thrown = yamlio.loads(w.ledger_text(layout.throw_path(ww.S, "b1", 2))
                          .encode(), "throw.yaml")
    assert thrown["resumed_from"] == 1 and thrown["published"] is True, thrown
    assert git("rev-parse", "refs/heads/leap/ball/pkgs/b1", cwd=w.bare) == tip
    assert git("rev-parse", "refs/heads/leap/ball/pkgs/b1", cwd=other) == tip


def test_a_published_ball_in_flight_is_sent_to_a_worker_and_a_worker_continues_it(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """Its worker was stopped (Ctrl-C: round 1 held, the claim given back): throwing it
    again is refused (L3) with the hint that leads on, and the hinted worker builds round 2
    from the branch's tip."""
    w = published(daemon, jurors, "inflight")
    proc = hung_worker(w, "stopped")
    proc.send_signal(signal.SIGINT)
    assert wait(proc, w.base_dir / "stopped.log", 60) == 130
    (w.base_dir / "hang-b1").unlink()
    res = w.leap("throw", ww.S, "--ball", "b1", "--remote", "origin")
    assert res.code == 1 and "[L3]" in res.err, res
    hint = f"`leap worker --remote REMOTE --slice {ww.S}` on any clone continues it"
    assert hint in res.err, res
    # the hinted command, as is (it keeps serving: stopped once its round is up)
    proc = w.popen("worker", "--remote", "origin", "--slice", ww.S, "--name", "next",
                   cwd=w.clone("next"))
    deadline = time.monotonic() + 120
    while len(receipts(w)["b1"]) < 2:
        assert time.monotonic() < deadline and proc.poll() is None, \
            (w.base_dir / "next.log").read_text()
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    wait(proc, w.base_dir / "next.log", 60)
    got = receipts(w)["b1"]
    assert [(r["round"], r["outcome"], r["worker"]) for r in got] == \
        [(1, 0, "stopped"), (2, 1, "next")], got


def test_ctrl_c_while_the_claim_goes_up_gives_a_landed_claim_back(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """Ctrl-C came after the remote took the claim, before `git push` said so: the worker
    gives it back before it exits, instead of leaving the ball held by no one until the
    lease runs out (L9)."""
    w = published(daemon, jurors, "ctrlc-claim")
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
    names = claim_files(w)
    assert any(p.endswith("/claims/1/take.yaml") for p in names), names
    assert any(p.endswith("/claims/1/release.yaml") for p in names), \
        (names, (w.base_dir / "hasty.log").read_text())
    assert "receipts" not in " ".join(w.ledger_files(f"slices/{ww.S}/balls/b1/"))
