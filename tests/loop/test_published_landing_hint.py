"""L9, a kill soak: `leap run S --remote origin` of the shop (tests/loop/real_project.py),
every ball built by a worker, SIGKILLed as its merge landed, before its live proof. `leap
status` then said "`leap run shop-checkout` proves it live"; followed exactly, that plain
run was refused (exit 2: the slice is published to workers, a run of it goes with
`--remote origin`). The landing line names the run with the slice's shared remote, as the
ball lines do, and followed exactly it proves the slice live."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.loop.kills import is_event, run_until
from tests.loop.real_project import S, build, jurors
from tests.loop.workers_world import wait
from tests.support import IDENTITY, git, hinted_leap
from tests.templates import Served
from tests.tribunal.jurors import JurorServer


def test_a_published_slice_killed_before_its_live_proof_is_proved_by_the_run_status_names(
        isolated: Path, served: Served) -> None:
    with JurorServer("openai", jurors) as server:
        p = build(served.folder("published-landing-hint"), served.daemon, server.url,
                  shared=True)
        clone = p.base_dir / "north"
        git("clone", "-q", p.daemon.url(str(p.bare.relative_to(p.daemon.base))),
            str(clone), cwd=p.base_dir)
        log = p.base_dir / "north.log"
        worker = subprocess.Popen(
            [sys.executable, "-m", "leapgit", "worker", "--remote", "origin", "--name",
             "north", "--poll", "0.2"], cwd=clone, stdout=open(log, "ab"),  # noqa: SIM115
            stderr=subprocess.STDOUT, env={**os.environ, **IDENTITY, **p.env})
        try:
            killed, _code, said = run_until(p.work, S, is_event("merge"), env=p.env,
                                            args=("--remote", "origin", "--poll", "0.2"))
        finally:
            wait(worker, log, 120)  # its served slice is built: it ends by itself
        assert killed, said[-3000:]
        shown = p.leap("status", S)
        assert "landed, live proof not run yet" in shown.out, shown.out
        runs = [h for h in hinted_leap(shown.out) if h[0] == "run"]
        assert runs == [["run", S, "--remote", "origin"]], shown.out
        proved = p.leap(*runs[0], "--heartbeat", "0")  # exactly as printed
    assert proved.code == 0, proved.out[-3000:] + proved.err[-2000:]
    assert "landed, live proof held" in proved.out, proved.out[-3000:]
