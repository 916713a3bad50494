"""The loop on shallow clones: the checkout a CI runner makes (`git clone --depth 1`) holds
one commit of `main` and no ledger. `leap run --remote` on one such clone and two `leap
worker`s on others land the shop, as on whole clones (tests/loop/test_workers_real_project.py).
Before: the orchestrator's score walked the ball's commits past the clone's cut, to a
parent that is not there (an internal error, MissingCommitError)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from leapgit.records import yamlio
from tests.loop.real_project import DEPS, S, build, events, integrations, jurors
from tests.loop.test_workers_real_project import popen
from tests.loop.workers_world import wait
from tests.scoring.world import Project
from tests.support import git, leap
from tests.templates import Served
from tests.tribunal.jurors import JurorServer

WORKERS = ("north", "south")


@pytest.fixture(scope="module")
def landed(isolated: Path, served: Served) -> Iterator[tuple[Project, int, list[int]]]:
    with JurorServer("openai", jurors) as server:
        p = build(served.folder("workers-shallow"), served.daemon, server.url, shared=True)
        clones = []
        for name in ("orchestrator", *WORKERS):
            clone = p.base_dir / name
            git("clone", "-q", "--depth", "1",
                str(p.daemon.url(str(p.bare.relative_to(p.daemon.base)))), str(clone),
                cwd=p.base_dir)
            assert (clone / ".git" / "shallow").exists()
            assert leap("hooks", "install", cwd=clone).code == 0
            clones.append(clone)
        orchestrator, *clones = clones
        assert leap("sync", "origin", cwd=orchestrator).code == 0  # the ledger, whole
        orch = popen(p, ["run", S, "--remote", "origin", "--json", "--poll", "0.2",
                         "--heartbeat", "0"], orchestrator, p.base_dir / "run.log")
        workers = [popen(p, ["worker", "--remote", "origin", "--name", c.name, "--poll",
                             "0.2"], c, p.base_dir / f"{c.name}.log") for c in clones]
        code = wait(orch, p.base_dir / "run.log", 300)
        codes = [wait(w, p.base_dir / f"{c.name}.log", 60)
                 for w, c in zip(workers, clones, strict=True)]
        yield p, code, codes


def test_the_shop_lands_from_shallow_clones(
        landed: tuple[Project, int, list[int]]) -> None:
    p, code, codes = landed
    out = (p.base_dir / "run.log").read_text()
    assert code == 0, out[-4000:]
    assert codes == [0, 0], [(p.base_dir / f"{n}.log").read_text()[-3000:] for n in WORKERS]
    end = events(out)[-1]
    assert end["event"] == "end" and end["outcome"] == "landed, live proof held", end
    assert {m.split("/", 1)[1].split()[0] for m in integrations(p.bare)} == set(DEPS)
    files = git("ls-tree", "-r", "--name-only", "refs/heads/leap/ledger", cwd=p.bare)
    workers = {yamlio.loads(git("show", f"refs/heads/leap/ledger:{f}", cwd=p.bare).encode(),
                            f)["worker"] for f in files.splitlines() if "/receipts/" in f}
    assert workers and workers <= set(WORKERS), workers  # every round built on a shallow one


def test_a_workers_shallow_clone_shows_status_and_holds_the_audit_until_unshallowed(
        landed: tuple[Project, int, list[int]]) -> None:
    p, _, _ = landed
    clone = p.base_dir / WORKERS[0]
    git("pull", "-q", "--ff-only", cwd=clone)  # the landed spine, still shallow
    assert leap("sync", "origin", cwd=clone).code == 0
    status = leap("status", cwd=clone)
    assert status.code == 0, status
    audit = leap("audit", cwd=clone)
    assert audit.code == 3, audit
    fetch = audit.err.split("`")[1]
    assert fetch == "git fetch --unshallow origin", audit.err
    git(*fetch.split()[1:], cwd=clone)
    again = leap("audit", cwd=clone)
    assert again.code == 0, again
    assert "all holds" in again.out
