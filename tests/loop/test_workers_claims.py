"""Issue 16, L9: the server holds the claims: a round from a worker without the claim is
refused, and of two workers racing for a ball one claim wins, every time."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from leapgit.ledger import layout
from leapgit.records import yamlio
from tests.loop import workers_world as ww
from tests.loop.workers_world import wait
from tests.support import GitDaemon, git
from tests.tribunal.jurors import JurorServer


def test_a_round_from_a_worker_without_the_claim_is_refused(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    from leapgit.ledger.sync import push_records
    from leapgit.records.claims import ClaimRecord
    from leapgit.records.types import Receipt
    from leapgit.timeutil import iso_at, now_iso

    w = ww.published(daemon, jurors, "refused")
    holder, other = w.clone("holder"), w.clone("other")
    git("fetch", "-q", "origin", "leap/ledger:leap/ledger", cwd=other)
    (w.base_dir / "hang-b1").write_text("")
    proc = w.popen("worker", "--remote", "origin", "--name", "holder", "--poll", "0.2",
                   "--once", cwd=holder)
    deadline = time.monotonic() + 60
    while not any(p.endswith("take.yaml") for p in ww.claim_files(w)):
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
    assert [r["worker"] for r in ww.receipts(w)["b1"]] == ["holder"]


def test_two_workers_racing_for_a_ball_one_claim_wins_each_time(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    from leapgit.ledger.sync import push_records
    from leapgit.records.claims import ClaimRecord
    from leapgit.timeutil import iso_at, now_iso

    w = ww.published(daemon, jurors, "race")
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
    takes = [p for p in ww.claim_files(w) if p.endswith("take.yaml")]
    assert len(takes) == 50  # one take per race: the loser's never landed


def test_a_worker_whose_builder_cannot_start_takes_no_claim(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """A blind review: a worker with no builder command claimed a ball, stopped on the
    error, and said "done: 1 ball(s) built". It is refused before any claim, as `leap throw
    --run` is, and the ball stays free for a worker that can build it."""
    w = ww.published(daemon, jurors, "no-builder")
    clone = w.clone("empty-handed")
    cfg = clone / ".leap" / "config.yaml"
    data = yamlio.loads(cfg.read_bytes(), str(cfg))
    data["builder"] = {"timeout": 60}
    cfg.write_bytes(yamlio.dumps(data))
    res = w.leap("worker", "--remote", "origin", "--name", "empty-handed", "--once", cwd=clone)
    assert res.code == 2, res
    assert res.err == ("leap: .leap/config.yaml: builder.command: no builder command; no claim "
                       "was taken [L3]; set builder.command, e.g. a script\n"), res.err
    assert "built" not in res.out and ww.claim_files(w) == []
    other = w.clone("able")
    built = w.leap("worker", "--remote", "origin", "--name", "able", "--once", cwd=other)
    assert built.code == 0 and "done: 1 ball(s) built" in built.out, built


def test_a_worker_with_nothing_yet_to_build_says_it_waits_once(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """A walk-away hunt: a worker started before the thrower published anything printed
    nothing for a minute: a silent worker looked stuck. It says once that it waits, and
    for what; a worker with nothing left to build still ends at once."""
    import signal

    w = ww.world(daemon, jurors, "idle-worker", 2)
    clone = w.clone("idle")
    worker = w.popen("worker", "--remote", "origin", "--name", "idle", "--poll", "0.2",
                     cwd=clone)
    log = w.base_dir / "idle.log"
    deadline = time.monotonic() + 60
    while "waiting:" not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1)  # five looks more: said once
    worker.send_signal(signal.SIGINT)
    assert wait(worker, log, 60) == 130, log.read_text()
    said = log.read_text()
    assert said.count("waiting: no ball on origin is free to build yet") == 1, said
    assert "`leap run SLICE --remote origin` publishes them" in said, said
