"""The loop on the clones CI runners make: shallow ones (`git clone --depth 1`: one commit of
`main`, no ledger) and partial ones (`git clone --filter=blob:none`: every commit, no file
contents until git fetches them). `leap run --remote` on one such clone and two `leap
worker`s on others land the shop, as on whole clones (tests/loop/test_workers_real_project.py).

Before: on a shallow clone the orchestrator's score walked a ball's commits past the cut, to
a parent that is not there (an internal error, MissingCommitError); on a partial one every
command stopped at the first ledger record it read (an internal error, KeyError): dulwich
fetches nothing by itself."""

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
KINDS = {"shallow": ["--depth", "1"], "partial": ["--filter=blob:none"]}
Landed = tuple[Project, str, int, list[int]]


@pytest.fixture(scope="module", params=sorted(KINDS))
def landed(request: pytest.FixtureRequest, isolated: Path, served: Served) -> Iterator[Landed]:
    kind: str = request.param
    with JurorServer("openai", jurors) as server:
        p = build(served.folder(f"workers-{kind}"), served.daemon, server.url, shared=True)
        # what a hosting service allows, so a partial clone can fetch a file when it needs it
        git("config", "uploadpack.allowFilter", "true", cwd=p.bare)
        git("config", "uploadpack.allowAnySHA1InWant", "true", cwd=p.bare)
        clones = []
        for name in ("orchestrator", *WORKERS):
            clone = p.base_dir / name
            git("clone", "-q", *KINDS[kind],
                str(p.daemon.url(str(p.bare.relative_to(p.daemon.base)))), str(clone),
                cwd=p.base_dir)
            thin = (clone / ".git" / "shallow").exists() if kind == "shallow" else \
                git("config", "remote.origin.promisor", cwd=clone) == "true"
            assert thin, kind
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
        yield p, kind, code, codes


def test_the_shop_lands_from_thin_clones(landed: Landed) -> None:
    p, _, code, codes = landed
    out = (p.base_dir / "run.log").read_text()
    assert code == 0, out[-4000:]
    assert codes == [0, 0], [(p.base_dir / f"{n}.log").read_text()[-3000:] for n in WORKERS]
    end = events(out)[-1]
    assert end["event"] == "end" and end["outcome"] == "landed, live proof held", end
    assert {m.split("/", 1)[1].split()[0] for m in integrations(p.bare)} == set(DEPS)
    files = git("ls-tree", "-r", "--name-only", "refs/heads/leap/ledger", cwd=p.bare)
    workers = {yamlio.loads(git("show", f"refs/heads/leap/ledger:{f}", cwd=p.bare).encode(),
                            f)["worker"] for f in files.splitlines() if "/receipts/" in f}
    assert workers and workers <= set(WORKERS), workers  # every round built on a thin one


def test_a_workers_thin_clone_shows_status_and_audits_once_whole_enough(
        landed: Landed) -> None:
    """Status works on either. The audit judges a partial clone's whole history (git
    fetches what it reads); a shallow one's is cut, so it holds until the fetch it names."""
    p, kind, _, _ = landed
    clone = p.base_dir / WORKERS[0]
    git("pull", "-q", "--ff-only", cwd=clone)  # the landed spine
    assert leap("sync", "origin", cwd=clone).code == 0
    status = leap("status", cwd=clone)
    assert status.code == 0, status
    assert "landed" in status.out, status.out
    audit = leap("audit", cwd=clone)
    if kind == "shallow":
        assert audit.code == 3, audit
        fetch = audit.err.split("`")[1]
        assert fetch == "git fetch --unshallow origin", audit.err
        git(*fetch.split()[1:], cwd=clone)
        audit = leap("audit", cwd=clone)
    assert audit.code == 0, audit
    assert "all holds" in audit.out
