"""The product's promise on a real project (the brief: a slice gets to the spine alone, and
survives being killed halfway): `leap run` on the realistic project of test_real_project (a
src layout, a generated version file, a pytest suite, a dependent ball stacked on the two it
needs) SIGKILLed at nine moments, twice with its builder (as it starts, and between the two
commits of its round), and started again each time, lands the slice. The rounds the kills
cut short are recorded, nothing is recorded twice, no episode has a fifth round, the
generated file is never committed, and `leap audit` holds on a fresh clone of the remote.

Stop 37 drove this by hand: four of six kill points then stopped with "its builder failed
the same way twice in a row", because the scripted builder crashed committing work a killed
round had already folded (`git commit` with nothing to commit). It commits only a change
now, as an agent that finds its work there does; with the old builder this test fails so.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from leapgit.ledger import history, layout, query
from leapgit.ledger.store import Ledger
from tests.loop.kills import Event, is_event, run_until
from tests.loop.real_project import DEPS, VERSION_FILE, S, build, integrations, jurors, paths_ever
from tests.scoring.world import Project
from tests.support import git, leap
from tests.templates import Served
from tests.tribunal.jurors import JurorServer

# the builder stops itself there (``BUILDER_STOPS_AFTER``), and is killed with the run
AT_START = "checkout's builder, started, nothing written yet"
MID_BUILD = "checkout's builder, between the two commits of its round"
STOPS = {AT_START: "checkout:0", MID_BUILD: "checkout:1"}


def _kill_with_its_builder(p: Project, stop: str) -> None:
    """As a machine that goes down: `leap run` and its builder (in a session of its own,
    which a kill of the run alone leaves at work), the builder's whole process group with
    the shell that waits on it, SIGKILLed together where the builder stopped itself."""
    marker = p.base_dir / "stopped-after"
    run = subprocess.Popen([sys.executable, "-m", "leapgit", "run", S, "--heartbeat", "0"],
                           cwd=p.work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env={**os.environ, **p.env, "BUILDER_STOPS_AFTER": stop})
    try:
        deadline = time.monotonic() + 240
        while not marker.exists():  # written whole: the builder renames it into place
            assert run.poll() is None, f"the run ended {run.returncode} before {stop}"
            assert time.monotonic() < deadline, f"the builder never reached {stop}"
            time.sleep(0.05)
    finally:
        run.kill()
        run.wait()
        if marker.exists():  # the builder too, whatever ended the wait
            builder = int(marker.read_text())
            assert os.getpgid(builder) != os.getpgrp()  # its own session, never ours
            os.killpg(os.getpgid(builder), signal.SIGKILL)
            marker.unlink()


# in the order a run reaches them; each restart is killed at the next one it reaches
MOMENTS: list[tuple[str, Callable[[Event], bool] | None]] = [
    ("a red being written", is_event("red", step="author")),
    ("a build", is_event("round", outcome="building")),
    ("a scoring", is_event("score", step="convening")),
    ("jurors sitting", lambda e: e["event"] == "log" and "ball" in e),
    ("the dependent ball's red", is_event("red", ball="checkout", step="author")),
    (AT_START, None),
    (MID_BUILD, None),
    ("the merge and its push", lambda e: e["event"] == "log" and "ball" not in e),
    ("before the live proof", is_event("merge")),
]


def test_killed_at_nine_moments_the_real_project_lands_once(
        isolated: Path, served: Served, tmp_path: Path) -> None:
    with JurorServer("openai", jurors) as server:
        p = build(served.folder("real-kill"), served.daemon, server.url)
        killed = []
        for name, hit in MOMENTS:
            if hit is None:
                _kill_with_its_builder(p, STOPS[name])
                killed.append(name)
                continue
            was_killed, code, said = run_until(p.work, S, hit, env=p.env)
            if not (was_killed or code == 0):
                pytest.fail(f"restarted before {name!r}, the run ended {code} unkilled:\n"
                            f"{said[-12000:]}", pytrace=False)
            if was_killed:
                killed.append(name)
        final = p.leap("run", S, "--heartbeat", "0")
    assert final.code == 0, final.out[-4000:]
    assert "landed, live proof held" in final.out, final.out[-4000:]
    assert killed == [name for name, _ in MOMENTS], killed  # every moment reached, killed
    merged = integrations(p.bare)  # on the remote's spine, one merge a ball
    assert sorted(m.split("/", 1)[1].split()[0] for m in merged) == sorted(DEPS), merged
    with Ledger(p.work / ".git") as ledger:
        view = ledger.require()
        for ball in DEPS:
            for episode in query.episodes(view, S, ball):
                assert len(query.receipts(view, S, ball, episode)) <= 4, (ball, episode)  # L6
            assert len(history.reds(view, S, ball)) == 1, ball  # one red each
            graded = [(s.episode, s.rounds) for s in history.scores(view, S, ball)]
            assert len(graded) == len(set(graded)), (ball, graded)  # no round scored twice
            assert history.scores(view, S, ball)[-1].outcome == 1, ball
        # the rounds the two kills cut short: recorded at 0 with what the builder left
        # (carry.close_killed_round), never built over in silence (a blind review)
        cut = [r for e in query.episodes(view, S, "checkout")
               for r in query.receipts(view, S, "checkout", e) if "(it was killed)" in r.evidence]
        assert [(r.round, r.outcome) for r in cut] == [(1, 0), (2, 0)], cut
        assert cut[1].commit, cut  # the first of its two commits, kept
        assert len(history.merge_records(view, S)) == 1
        assert view.exists(layout.live_path(S, 1))
    # the generated file stayed out of every commit, the killed rounds' ones too
    for repo in (p.bare, p.work):  # every ref: spine, ledger, ball branches, stack bases
        assert VERSION_FILE not in paths_ever(repo, "--all"), repo
    fresh = tmp_path / "fresh"
    git("clone", "-q", str(p.bare), str(fresh), cwd=tmp_path)
    git("fetch", "-q", "origin", "leap/ledger:leap/ledger", cwd=fresh)
    audit = leap("audit", cwd=fresh)
    assert audit.code == 0, audit.out[-3000:]
