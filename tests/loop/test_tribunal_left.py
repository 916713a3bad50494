"""T6: verdicts already paid for are never discarded, a kill included (``tribunal.left``).

A walk-away hunt: `leap run` killed (SIGKILL) while its jurors sat. The seats that had
answered were paid for, but a convening without its summary counted for nothing: the next
`leap run` read the slice as under `run.max_usd` and paid a whole new convening, and each
further kill bought another. Real git, a real remote behind `git daemon` with leapgit's
pre-receive, scripted jurors on 127.0.0.1, `leap run` as a real process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

from leapgit.ledger import history
from leapgit.ledger.store import Ledger
from tests.loop.test_review_findings import _price_a_token_a_dollar, duo
from tests.loop.world import events, jurors
from tests.support import git, leap
from tests.templates import Served
from tests.tribunal.jurors import Call, JurorServer, Reply


def _one_slow_seat(call: Call) -> Reply:
    """Seven seats answer at once; the telemetry seat takes 6 s (under the 10 s timeout)."""
    reply = jurors(call)
    return replace(reply, delay=6.0) if call.lens == "telemetry" else reply


def _kill_once_seven_answered(work: Path, env: dict[str, str], server: JurorServer) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "leapgit", "run", "paid", "--json",
                             "--heartbeat", "0", "--jobs", "1"], cwd=work,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, **env})
    try:
        deadline = time.monotonic() + 120
        while len(list((work / ".git/leap-tribunal").glob("*/verdicts/*.yaml"))) < 7 and \
                time.monotonic() < deadline:  # seven verdicts came back and were written
            time.sleep(0.01)
        assert len(server.sent) >= 7, "the jurors never sat"
        os.kill(proc.pid, signal.SIGKILL)  # the telemetry seat still sits
    finally:
        proc.kill()
        proc.wait()


def test_a_run_killed_while_jurors_sit_still_counts_what_they_were_paid(
        isolated: Path, served: Served) -> None:
    """The next run records the verdicts the killed convening left, with their spend, and
    stops on the cap they passed, without sitting a further tribunal; the records go
    through the remote's pre-receive, and the audit holds."""
    with JurorServer("openai", _one_slow_seat) as server:
        p = duo(served.folder("left-paid"), served.daemon, server.url, "paid", ("a", "b"),
                config={"run": {"max_usd": 0.01}})
        _price_a_token_a_dollar(p)  # one convening costs thousands of USD: past the cap
        _kill_once_seven_answered(p.work, p.env, server)
        paid = server.spent()
        seats = len(server.chats())
        again = p.leap("run", "paid", "--json", "--heartbeat", "0", "--jobs", "1")
        assert len(server.chats()) == seats, "a further tribunal sat past the cap"
    table = next(e for e in events(again.out) if e["event"] == "table")
    assert "run.max_usd 0.01 reached" in str(table["stopped"]), again.out[-2000:]
    logs = [str(e["line"]) for e in events(again.out) if e["event"] == "log"]
    assert any("recorded the verdicts a killed convening left" in ln for ln in logs), logs
    with Ledger(p.work / ".git") as ledger:
        recorded = history.spent(ledger.require(), "paid")
    assert recorded.tokens_in >= paid[0] and recorded.tokens_out >= paid[1], (recorded, paid)
    assert recorded.usd is not None and recorded.usd > 0.01, recorded
    subjects = git("log", "--format=%s", "leap/ledger", cwd=p.work)
    assert "left by a killed run, 7 verdict(s) paid for, no decision (T6)" in subjects, subjects
    assert leap("sync", "origin", cwd=p.work).code == 0  # the server's rules take them
    assert "left by a killed run" in git("log", "--format=%s", "leap/ledger", cwd=p.bare)
    audit = leap("audit", cwd=p.work)
    assert audit.code == 0 and "all holds" in audit.out, audit.out[-2000:]


def test_a_verdict_cut_short_by_the_kill_costs_no_other_its_spend(
        isolated: Path, served: Served) -> None:
    """A suite under load: the kill landed while a seat's verdict file was being written
    (created, not yet whole). The folder was left unrecorded for good ("cannot be read"),
    so the next run read the slice as under `run.max_usd` and paid a whole new convening.
    A verdict is written aside and renamed, so a kill leaves it whole or absent; one found
    cut short anyway (an older leapgit, a full disk) is named and left out, the others
    recorded with their spend."""
    with JurorServer("openai", _one_slow_seat) as server:
        p = duo(served.folder("left-cut"), served.daemon, server.url, "paid", ("a", "b"),
                config={"run": {"max_usd": 0.01}})
        _price_a_token_a_dollar(p)
        _kill_once_seven_answered(p.work, p.env, server)
        seats = len(server.chats())
        [cut, *_] = sorted((p.work / ".git/leap-tribunal").glob("*/verdicts/*.yaml"))
        cut.write_bytes(cut.read_bytes()[:40])  # as a kill mid-write left it
        again = p.leap("run", "paid", "--json", "--heartbeat", "0", "--jobs", "1")
        assert len(server.chats()) == seats, "a further tribunal sat past the cap"
    logs = [str(e["line"]) for e in events(again.out) if e["event"] == "log"]
    assert any(cut.name in ln and "left out" in ln for ln in logs), logs
    subjects = git("log", "--format=%s", "leap/ledger", cwd=p.work)
    assert "left by a killed run, 6 verdict(s) paid for, no decision (T6)" in subjects, subjects
    assert leap("sync", "origin", cwd=p.work).code == 0
    audit = leap("audit", cwd=p.work)
    assert audit.code == 0 and "all holds" in audit.out, audit.out[-2000:]
