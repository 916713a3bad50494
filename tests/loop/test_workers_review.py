"""Blind review of issue 16 (lens: concurrency, crashes, nothing lost). A worker serving
two balls at once (``--jobs 2``) has one ball's round refused by the server while the other
ball's round waits, recorded here, for its own push: the refusal drops the refused round's
records only (L9), never the other ball's. Real clones, the real hook behind `git daemon`."""

from __future__ import annotations

import pytest

from leapgit.records import yamlio
from tests.loop import workers_world as ww
from tests.support import GitDaemon, git
from tests.tribunal.jurors import JurorServer


def both_published(daemon: GitDaemon, jurors: JurorServer, name: str) -> ww.World:
    """A two-ball slice whose balls are both thrown to workers, their reds recorded."""
    from tests.scoring.world import commit_files

    base_dir = daemon.base / name
    base_dir.mkdir()
    w = ww.build(base_dir, lambda bare: daemon.url(str(bare.relative_to(daemon.base))),
                 jurors.url, 2)
    base = git("rev-parse", "main", cwd=w.work)
    for ball in ("b1", "b2"):
        red = commit_files(w.work, base, {f"tests/test_{ball}.py": ww.red_test(ball)},
                           f"test: {ball}")
        res = w.leap("red", ww.S, ball, red)
        assert res.code == 0, res
    res = w.leap("throw", ww.S, "--remote", "origin")
    assert res.code == 0 and "published to workers" in res.out, res
    return w


def test_a_refused_round_drops_only_its_own_records_never_another_ball_s(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    from leapgit.errors import RuleViolation
    from leapgit.ledger import layout
    from leapgit.ledger.workspace import open_workspace
    from leapgit.loop.worker import Open, Options, Worker
    from leapgit.records.types import Receipt
    from leapgit.timeutil import now_iso

    w = both_published(daemon, jurors, "drop")
    clone = w.clone("jobs2")
    git("fetch", "-q", "origin", "leap/ledger:leap/ledger", cwd=clone)
    said: list[str] = []
    worker = Worker(open_workspace(clone), Options("origin", "jobs2", jobs=2), said.append)
    assert worker._claim(Open(ww.S, "b2", 1, 1, 0)) == 1  # b2 is this worker's; b1 is not
    valid = layout.receipt_path(ww.S, "b2", 1, 1)
    refused = layout.receipt_path(ww.S, "b1", 1, 1)
    ws = open_workspace(clone)
    with ws.ledger() as ledger:  # b2's round waits for its push; then b1's round is recorded
        ledger.append({valid: yamlio.dumps(Receipt(ww.S, "b2", 1, 1, 0, "tried", now_iso(),
                                                   worker="jobs2").to_dict())}, "b2 round 1")
        ledger.append({refused: yamlio.dumps(Receipt(ww.S, "b1", 1, 1, 0, "tried", now_iso(),
                                                     worker="jobs2").to_dict())},
                      "b1 round 1")
    with pytest.raises(RuleViolation) as no:
        worker._push_round(Open(ww.S, "b1", 1, 1, 0), 1, "leap/ball/pkgs/b1",
                           None)  # type: ignore[arg-type]  # refused before it is read
    assert "no claim on it is live" in " ".join(no.value.lines()), no.value.lines()
    assert refused not in w.ledger_files() and valid not in w.ledger_files()
    with ws.ledger() as ledger:
        view = ledger.require()
        assert not view.exists(refused)  # the refused round is dropped here
        assert view.exists(valid), said  # b2's round, never refused, is still to go up
    from leapgit.ledger.sync import sync

    sync("origin", start=clone)  # b2's own push carries it
    assert valid in w.ledger_files() and refused not in w.ledger_files()


def test_a_claim_the_server_refuses_for_its_lease_stops_the_worker_in_one_line(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """A worker whose own config asks a longer lease than the server grants (its
    workers.claim_seconds edited here, the spine's says 60) is refused every claim, by no
    race: it stops with the server's line, exit 1, where it claimed again every poll, for
    ever, each time saying another worker claimed the ball first."""
    import subprocess

    w = both_published(daemon, jurors, "lease")
    clone = w.clone("long")
    conf = clone / ".leap" / "config.yaml"
    raw = yamlio.loads(conf.read_bytes(), str(conf))
    raw["workers"] = {"claim_seconds": 3600}
    conf.write_bytes(yamlio.dumps(raw))
    log = w.base_dir / "long.log"
    proc = w.popen("worker", "--remote", "origin", "--name", "long", "--poll", "0.2",
                   cwd=clone, log=log)
    try:
        code = proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        code = None
    said = log.read_text()
    assert code == 1, said[-3000:]
    stopped = [ln for ln in said.splitlines() if "leap worker long: stopped: " in ln]
    assert len(stopped) == 1 and "workers.claim_seconds" in stopped[0], said[-3000:]
    assert said.count("claimed it first") == 0, said[-3000:]
    assert not w.ledger_files("/claims/")  # nothing of it landed


def _round(w: ww.World, clone: object, ball: str) -> str:
    """A round of ``ball`` committed on its branch in this clone (not pushed yet)."""
    from pathlib import Path

    root = Path(str(clone))
    tree = w.base_dir / f"tree-{ball}"
    git("worktree", "add", "-q", "-b", f"leap/ball/pkgs/{ball}", str(tree),
        f"refs/leap/remotes/origin/heads/leap/ball/pkgs/{ball}", cwd=root)
    (tree / "pkg" / f"{ball}.py").write_text(f"def {ball}():\n    return {ball!r}\n")
    git("add", f"pkg/{ball}.py", cwd=tree)
    git("-c", "core.hooksPath=/dev/null", "commit", "-q", "-m",  # no receipt by the hook
        f"round 1 of {ball}\n\nLeap-Slice: pkgs\nLeap-Ball: {ball}\nLeap-Episode: 1\n"
        "Leap-Round: 1\nLeap-Outcome: 1", cwd=tree)
    return git("rev-parse", "HEAD", cwd=tree)


def test_a_round_s_receipt_never_reaches_the_remote_before_its_commit(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """--jobs 2: b2's round is recorded here and waits for its push when b1's goes up.
    b1's push carries the whole ledger, b2's receipt too: its commit must go with it (in
    the one atomic push), or the thrower, seeing b2's claim, scores b2's branch as the
    remote has it, without the round (L7 on the wrong candidate)."""
    from types import SimpleNamespace

    from leapgit.ledger import layout
    from leapgit.ledger.workspace import open_workspace
    from leapgit.loop import remote as rm
    from leapgit.loop.worker import Open, Options, Worker
    from leapgit.records.types import Receipt
    from leapgit.timeutil import now_iso

    w = both_published(daemon, jurors, "ahead")
    clone = w.clone("jobs2b")
    git("fetch", "-q", "origin", "leap/ledger:leap/ledger", cwd=clone)
    worker = Worker(open_workspace(clone), Options("origin", "jobs2b", jobs=2),
                    lambda line: None)
    ws = open_workspace(clone)
    rm.fetch_balls(ws, "origin")
    receipts = {}
    for ball in ("b2", "b1"):
        assert worker._claim(Open(ww.S, ball, 1, 1, 0)) == 1
        worker.held[(ww.S, ball)] = 1
        sha = _round(w, clone, ball)
        receipts[ball] = Receipt(ww.S, ball, 1, 1, 1, "built", now_iso(), claim=True,
                                 commit=sha, worker="jobs2b")
        with ws.ledger() as ledger:
            ledger.append({layout.receipt_path(ww.S, ball, 1, 1):
                           yamlio.dumps(receipts[ball].to_dict())}, f"{ball} round 1")
    closed = SimpleNamespace(recorded=SimpleNamespace(receipt=receipts["b1"]))
    worker._push_round(Open(ww.S, "b1", 1, 1, 0), 1, "leap/ball/pkgs/b1",
                       closed)  # type: ignore[arg-type]
    tip = git("rev-parse", "refs/heads/leap/ball/pkgs/b1", cwd=w.bare)
    assert tip == receipts["b1"].commit
    assert layout.receipt_path(ww.S, "b2", 1, 1) in w.ledger_files()  # it went up, and
    there = git("rev-parse", "refs/heads/leap/ball/pkgs/b2", cwd=w.bare)
    assert there == receipts["b2"].commit, "b2's receipt landed without its commit"


def test_the_server_refuses_a_claim_whose_lease_has_run_out_by_its_clock(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """A worker whose clock runs behind the server's asks a lease that has run out by the
    server's clock: taken, it held nothing (its every round refused, the ball free to be
    claimed again at once: a claim, a round refused, a claim ...). The server refuses it,
    naming the clock (L9), and nothing lands."""
    import time

    from leapgit.errors import RuleViolation
    from leapgit.ledger import layout
    from leapgit.ledger.sync import push_records
    from leapgit.records.claims import ClaimRecord
    from leapgit.rules.claims import LEASE_PAST
    from leapgit.timeutil import iso_at, now_iso

    w = both_published(daemon, jurors, "past")
    clone = w.clone("behind")
    git("fetch", "-q", "origin", "leap/ledger:leap/ledger", cwd=clone)
    before = w.remote_ledger()
    rec = ClaimRecord(ww.S, "b1", 1, 1, "take", "behind", now_iso(),
                      claimed_until=iso_at(time.time() - 5))
    with pytest.raises(RuleViolation) as no:
        push_records("origin", {layout.claim_path(ww.S, "b1", 1, 1, "take"):
                                yamlio.dumps(rec.to_dict())}, "claim", start=clone)
    said = " ".join(no.value.lines())
    assert "[L9]" in said and LEASE_PAST in said, said
    assert w.remote_ledger() == before


def test_a_stale_record_of_another_ball_does_not_sink_a_valid_round(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """A round of b1 recorded here that never went up (the worker lost the remote, and
    its claim ran out) rides on the next push of this clone's ledger, b2's round: the
    server refuses the push for b1's record alone. b1's record is dropped and b2's round
    goes up, where b2's round was refused, dropped and its tree reset (L9: nothing valid
    lost)."""
    from types import SimpleNamespace

    from leapgit.ledger import layout
    from leapgit.ledger.workspace import open_workspace
    from leapgit.loop import remote as rm
    from leapgit.loop.worker import Open, Options, Worker
    from leapgit.records.types import Receipt
    from leapgit.timeutil import now_iso

    w = both_published(daemon, jurors, "stale")
    clone = w.clone("stale")
    git("fetch", "-q", "origin", "leap/ledger:leap/ledger", cwd=clone)
    worker = Worker(open_workspace(clone), Options("origin", "stale"), lambda line: None)
    ws = open_workspace(clone)
    rm.fetch_balls(ws, "origin")
    stale = layout.receipt_path(ww.S, "b1", 1, 1)
    with ws.ledger() as ledger:
        ledger.append({stale: yamlio.dumps(Receipt(ww.S, "b1", 1, 1, 0, "cut off",
                                                   now_iso(), worker="stale").to_dict())},
                      "b1 round 1")
    assert worker._claim(Open(ww.S, "b2", 1, 1, 0)) == 1
    worker.held[(ww.S, "b2")] = 1
    sha = _round(w, clone, "b2")
    receipt = Receipt(ww.S, "b2", 1, 1, 1, "built", now_iso(), claim=True, commit=sha,
                      worker="stale")
    valid = layout.receipt_path(ww.S, "b2", 1, 1)
    with ws.ledger() as ledger:
        ledger.append({valid: yamlio.dumps(receipt.to_dict())}, "b2 round 1")
    closed = SimpleNamespace(recorded=SimpleNamespace(receipt=receipt))
    worker._push_round(Open(ww.S, "b2", 1, 1, 0), 1, "leap/ball/pkgs/b2",
                       closed)  # type: ignore[arg-type]
    assert valid in w.ledger_files() and stale not in w.ledger_files()
    assert git("rev-parse", "refs/heads/leap/ball/pkgs/b2", cwd=w.bare) == sha
    with ws.ledger() as ledger:
        assert not ledger.require().exists(stale)
