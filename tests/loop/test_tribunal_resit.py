"""T9 measures convergence by NEW findings per round of the loop (a builder's new candidate,
its envelope, all jurors). A walk-away hunt: one seat out of reach (HTTP 500: T6, a hold)
made `leap run` sit the tribunal again on the same claim, and each re-sit counted as a round:
the seven answering seats' notes were NEW once, then 0, and one new finding in each of two
real rounds read "flat or rising two rounds in a row" (0, 1, 1). The ball stopped on a T9
escalation after two builder rounds, where the same jurors with no outage give the builder
all four.

A convening of the tree the last one held on is that round sat again
(``tribunal.provenance.next_round``). Real git, a real remote behind `git daemon`, scripted
jurors on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

from leapgit.ledger import layout
from leapgit.ledger.store import Ledger
from leapgit.records.tribunal_run import SummaryRecord
from tests.loop.test_review_findings import duo
from tests.loop.world import BUGGY_C, CODE, events, jurors
from tests.templates import Served
from tests.tribunal.jurors import Call, JurorServer, Reply, verdict


def _script(outage: bool) -> Callable[[Call], Reply]:
    """c's defect seat: HTTP 500 twice with an outage; then a major finding on the buggy
    candidate, and one further minor finding on every later one."""
    state = {"down": 2 if outage else 0}
    lock = threading.Lock()

    def answer(call: Call) -> Reply:
        text = json.dumps(call.body.get("messages", []))
        if call.lens == "defect" and "def fc(" in text:
            with lock:
                if state["down"]:
                    state["down"] -= 1
                    return Reply(raw=b'{"error": {"message": "upstream overloaded"}}',
                                 status=500)
            if "BUG-C" in text:
                return Reply(verdict("defect", "refuse", [{
                    "severity": "major", "file": "calc/c.py", "claim": "fc carries a bug "
                    "marker", "evidence": "BUG-C: adds two"}]))
            return Reply(verdict("defect", "refuse", [{
                "severity": "minor", "file": "calc/c.py", "claim": "the 2 in fc is a magic "
                "number", "evidence": "return fa() + 2"}]))
        return jurors(call)
    return answer


def _run(served: Served, name: str, outage: bool) -> tuple[list[dict[str, object]],
                                                            list[tuple[int, str]]]:
    """The run's events (after the outage's hold, the hinted `leap run S` again), and c's
    convenings in the order they sat: (round, outcome)."""
    plan = {"a": {"calc/a.py": CODE["a"]}, "c": {"calc/c.py": BUGGY_C},
            "c+fixed": {"calc/c.py": CODE["c"]}}
    with JurorServer("openai", _script(outage)) as server:
        p = duo(served.folder(name), served.daemon, server.url, name, ("a", "c"), plan)
        res = p.leap("run", name, "--json", "--heartbeat", "0")
        if outage:
            assert res.code == 3, res.out[-2000:]  # the T6 hold: the rung is back now
            stop = next(e for e in events(res.out) if e["event"] == "stop")
            assert f"`leap run {name}`" in str(stop["hint"]), stop
            res = p.leap("run", name, "--json", "--heartbeat", "0")
    folder = f"{layout.ball_dir(name, 'c')}/tribunal"
    with Ledger(p.work / ".git") as ledger:
        view = ledger.require()
        found = [view.record(f"{folder}/{run}/summary.yaml", SummaryRecord)
                 for run in view.list(folder)]
    sat = sorted((s.recorded_at, s.round, s.outcome) for s in found if s is not None)
    return events(res.out), [(r, o) for _, r, o in sat]


def test_a_resit_for_an_unreachable_seat_is_no_round_of_t9(isolated: Path,
                                                            served: Served) -> None:
    calm, calm_sat = _run(served, "calm", outage=False)
    got, sat = _run(served, "resit", outage=True)
    stops = [next(e for e in said if e["event"] == "stop" and e.get("ball") == "c")
             for said in (calm, got)]
    # c's builder never answers the minor finding: with or without the outage the episode
    # ends at 0 after its four rounds, and no escalation stops it early
    for stop in stops:
        assert "episode 1 ended at 0" in str(stop["reason"]), stop
        assert not stop.get("escalated") and "T9" not in str(stop["reason"]), stop
    # the two holds and the refuse after them are one round: the buggy candidate's
    assert sat[:3] == [(1, "hold"), (1, "hold"), (1, "refuse")], sat
    assert [r for r, _ in sat[3:]] == [r for r, _ in calm_sat[1:]], (sat, calm_sat)
