"""What stops `leap run` before the spine, and that nothing is lost when it does (issue 15):
its time limit (--max-minutes), a second run of the same slice (refused, naming the first),
and its budget (run.max_usd, priced from the rungs' usd_per_mtok_in/out and the jurors'
reported usage). Each stop is a hold (exit 3); the next `leap run` lands the slice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from leapgit.records import yamlio
from tests.loop.world import S, build, events, jurors
from tests.support import hinted_leap
from tests.templates import Served
from tests.tribunal.jurors import JurorServer


def _set(work: Path, edit: dict[str, object], price: bool = False) -> None:
    path = work / ".leap" / "config.yaml"
    cfg = yamlio.loads(path.read_bytes(), str(path))
    cfg.update(edit)
    if price:
        cfg["tribunal"]["rungs"][0].update(usd_per_mtok_in=1.0, usd_per_mtok_out=2.0)
    path.write_bytes(yamlio.dumps(cfg))


def test_time_a_second_run_and_money_stop_the_run_and_lose_nothing(
        isolated: Path, served: Served) -> None:
    with JurorServer("openai", jurors) as server:
        p = build(served.folder("run5-limits"), served.daemon, server.url, buggy=False)
        _set(p.work, {}, price=True)  # every scoring priced from the first: the cap can hold
        timed = p.leap("run", S, "--max-minutes", "0.02", "--json", "--heartbeat", "0")
        assert timed.code == 3, timed.out[-2000:]
        table = next(e for e in events(timed.out) if e["event"] == "table")
        assert "--max-minutes 0.02 reached" in str(table["stopped"]), table
        # a hunt: the time budget's stop named no way on; the run below is that command
        assert hinted_leap(str(table["stopped"])) == [["run", S]], table

        before = server.spent()
        first = subprocess.Popen([sys.executable, "-m", "leapgit", "run", S, "--json",
                                  "--heartbeat", "0"], cwd=p.work, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True)
        assert first.stdout is not None
        started = json.loads(first.stdout.readline())
        assert started["event"] == "start", started
        second = p.leap("run", S)
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        after = server.spent()  # what the killed run's jurors may have said, unrecorded
        assert second.code == 3, second
        assert f"already being run by process {first.pid}" in second.err, second.err

        _set(p.work, {"run": {"max_usd": 0.000001}})
        capped = p.leap("run", S, "--json", "--heartbeat", "0")
        assert capped.code == 3, capped.out[-2000:]
        got = events(capped.out)
        table = next(e for e in got if e["event"] == "table")
        assert "run.max_usd 1e-06 reached" in str(table["stopped"]), table
        usage = table["usage"]
        assert usage["usd"] is not None and usage["usd"] >= 0.000001, usage  # type: ignore[index]
        # a hint hunt: it named no way on, and `leap run` again met the same cap (the
        # slice's spend, every run's): the hint names the cap to raise, and the run
        again = hinted_leap(str(table["stopped"]))
        assert "Raise run.max_usd in .leap/config.yaml above that, or remove it" in \
            str(table["stopped"]) and again == [["run", S]], table

        _set(p.work, {"run": None})  # removed, as the hint says
        landed = p.leap(*again[0], "--json", "--heartbeat", "0")
        assert landed.code == 0, landed.out[-2000:]
        table = next(e for e in events(landed.out) if e["event"] == "table")
        spent_in, spent_out = server.spent()
    assert table["outcome"] == "landed, live proof held"
    # the slice's spend is what the jurors' server reported for every recorded scoring of
    # every run; a scoring killed before its record (kill -9 above) is the only gap: its
    # verdicts that came back are recorded by the next run (T6), a seat still sitting is not
    lost_in, lost_out = after[0] - before[0], after[1] - before[1]
    recorded = table["usage"]
    assert spent_in - lost_in <= recorded["tokens_in"] <= spent_in, (recorded, spent_in)  # type: ignore[index]
    assert spent_out - lost_out <= recorded["tokens_out"] <= spent_out  # type: ignore[index]
