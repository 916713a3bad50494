"""T9 across scorings (issue 15): a juror that raises a NEW finding every round stops that
ball with the escalation after two flat-or-rising rounds (exit 3), naming the findings; the
balls that do not depend on it still pass; nothing merges. Round 1 also counts the passing
jurors' info notes as new (8), so the NEW counts run 8, 1, 1, 1: flat twice at round 4.
The stop's hint leads on: a repaired spec, then `leap run` again, lands the slice."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from leapgit.ledger import history
from leapgit.ledger.store import Ledger
from tests.loop.world import S, build, events, jurors
from tests.scoring.world import Project
from tests.support import Result, git
from tests.templates import Served
from tests.tribunal.jurors import JurorServer


@pytest.fixture(scope="module")
def noisy(isolated: Path, served: Served) -> Iterator[tuple[Project, Result]]:
    with JurorServer("openai", jurors) as server:
        p = build(served.folder("run5-t9"), served.daemon, server.url, buggy=False,
                  every_round="b")
        p.env["LEAP_TEST_BEFORE"] = p.remote_tip("refs/heads/main") or ""
        yield p, p.leap("run", S, "--json", "--heartbeat", "0")


def test_new_findings_every_round_stop_the_ball_with_an_escalation(
        noisy: tuple[Project, Result]) -> None:
    p, res = noisy
    assert res.code == 3, (res.out[-3000:], res.err)
    got = events(res.out)
    stop = next(e for e in got if e["event"] == "stop" and e.get("ball") == "b")
    assert stop.get("escalated") is True and "T9 escalation" in str(stop["reason"]), stop
    assert "problem number 4 of many" in str(stop["reason"])  # the findings are named
    table = {row["ball"]: row for row in next(e for e in got if e["event"] == "table")["balls"]}
    assert table["a"]["state"] == "passed" and table["c"]["state"] == "passed", table
    assert table["b"]["state"] == "stopped" and table["b"]["rounds"] == 4, table
    assert table["d"]["state"] != "passed" and table["e"]["state"] != "passed"
    assert p.remote_tip("refs/heads/main") == p.env["LEAP_TEST_BEFORE"]  # nothing merged
    assert not any(e["event"] == "merge" for e in got)
    with Ledger(p.work / ".git") as ledger:
        scores = history.scores(ledger.require(), S, "b")
    assert [s.outcome for s in scores] == [-1, -1, -1, 0] and scores[-1].rule == "T9", scores
    log = git("log", "--format=%s", "leap/ledger", cwd=p.work)
    assert "round 4: hold" in log


def test_the_escalation_hint_leads_on_to_the_spine(noisy: tuple[Project, Result]) -> None:
    p, res = noisy
    stop = next(e for e in events(res.out) if e["event"] == "stop" and e.get("ball") == "b")
    hinted = str(stop["hint"])
    assert f"leap ball respec {S} b FILE" in hinted, hinted
    (p.base_dir / "calm").write_text("the person's decision: the builder adds no noise")
    fixed = p.base_dir / "b.yaml"
    fixed.write_text("goal: b works\nspec: make b work, and nothing else\n"
                     "scope: [calc/b.py, tests/test_b.py]\nproof: python -m unittest -q "
                     "tests.test_b\ntests: python -m unittest -q\nrollback: restore-scope\n"
                     "reason: the reviewers kept finding new noise (T9)\n")
    respec = p.leap("ball", "respec", S, "b", str(fixed))
    assert respec.code == 0, respec
    shown = p.leap("status", S).out  # a blind review: it still named the respec just made
    assert f"respecced to version 2: `leap run {S}` resumes it" in shown, shown
    assert "repair the spec" not in shown, shown
    again = p.leap("run", S, "--heartbeat", "0")
    assert again.code == 0, again.out[-3000:]
    assert "landed, live proof held" in again.out
