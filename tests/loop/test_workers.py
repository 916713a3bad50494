"""Builders on many machines (issue 16): `leap run --remote` publishes, `leap worker`s on
other clones claim and build, the server's pre-receive holds the claims (L9). Real clones,
the real hook behind `git daemon` on 127.0.0.1, scripted jurors on loopback. Three workers
land an 8-ball slice here; the claims, the workers killed or cut off, and a ball resumed
from another machine have modules of their own (one module runs on one xdist worker)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from leapgit.records import yamlio
from tests.loop import workers_world as ww
from tests.loop.workers_world import wait
from tests.support import GitDaemon, git, leap
from tests.tribunal.jurors import JurorServer

DEPS = {"b7": ["b1"], "b8": ["b7"]}


# -- three workers, an 8-ball slice -------------------------------------------------------

@pytest.fixture(scope="module")
def landed(daemon: GitDaemon, jurors: JurorServer) -> Iterator[tuple[ww.World, int, list[int]]]:
    w = ww.world(daemon, jurors, "eight", 8, DEPS)
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
    got = ww.receipts(w)
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
    ww.fsck(w.bare)
