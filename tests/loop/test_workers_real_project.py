"""Issue 16 on a small realistic project: the src-layout shop of tests/loop/real_project.py
(a git-ignored version module only `worktrees.setup` makes, a pytest suite, a builder that
commits by itself, a ball that depends on two others) lands through `leap run --remote`
with two `leap worker`s on clones of their own. Real clones, the server hook behind
`git daemon`, scripted jurors on 127.0.0.1; after the setup no git command is run by hand."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from leapgit.records import yamlio
from tests.loop.kills import is_event, run_until
from tests.loop.real_project import (
    DEPS,
    VERSION_FILE,
    S,
    build,
    events,
    integrations,
    jurors,
    paths_ever,
)
from tests.loop.workers_world import wait
from tests.scoring.world import Project
from tests.support import IDENTITY, git, leap
from tests.templates import Served
from tests.tribunal.jurors import JurorServer

WORKERS = ("north", "south")


def popen(p: Project, args: list[str], cwd: Path, log: Path) -> subprocess.Popen[bytes]:
    out = open(log, "ab")  # noqa: SIM115 -- the child writes it
    return subprocess.Popen([sys.executable, "-m", "leapgit", *args], cwd=cwd, stdout=out,
                            stderr=subprocess.STDOUT, env={**os.environ, **IDENTITY, **p.env})


@pytest.fixture(scope="module")
def landed(isolated: Path, served: Served) -> Iterator[tuple[Project, int, list[int]]]:
    with JurorServer("openai", jurors) as server:
        p = build(served.folder("workers-real-project"), served.daemon, server.url,
                  shared=True)
        clones = []
        for name in WORKERS:
            clone = p.base_dir / name
            git("clone", "-q", str(p.daemon.url(str(p.bare.relative_to(p.daemon.base)))),
                str(clone), cwd=p.base_dir)
            assert leap("hooks", "install", cwd=clone).code == 0
            clones.append(clone)
        orch = popen(p, ["run", S, "--remote", "origin", "--json", "--poll", "0.2",
                         "--heartbeat", "0"], p.work, p.base_dir / "run.log")
        workers = [popen(p, ["worker", "--remote", "origin", "--name", c.name, "--poll",
                             "0.2"], c, p.base_dir / f"{c.name}.log") for c in clones]
        code = wait(orch, p.base_dir / "run.log", 300)
        codes = [wait(w, p.base_dir / f"{c.name}.log", 60)
                 for w, c in zip(workers, clones, strict=True)]
        yield p, code, codes


def test_the_shop_lands_built_by_the_workers(landed: tuple[Project, int, list[int]]) -> None:
    p, code, codes = landed
    out = (p.base_dir / "run.log").read_text()
    assert code == 0, out[-4000:]
    assert codes == [0, 0], [(p.base_dir / f"{n}.log").read_text()[-2000:] for n in WORKERS]
    end = events(out)[-1]
    assert end["event"] == "end" and end["outcome"] == "landed, live proof held", end
    merged = integrations(p.bare)
    assert {m.split("/", 1)[1].split()[0] for m in merged} == set(DEPS), merged
    # every round was built by a worker, named in its receipt; none here
    files = git("ls-tree", "-r", "--name-only", "refs/heads/leap/ledger", cwd=p.bare)
    receipts = [yamlio.loads(git("show", f"refs/heads/leap/ledger:{f}", cwd=p.bare).encode(),
                             f) for f in files.splitlines() if "/receipts/" in f]
    assert sorted(str(r["ball"]) for r in receipts) == sorted(DEPS), receipts
    assert {r["worker"] for r in receipts} <= set(WORKERS), receipts
    assert not any(p.worktree(b, S).exists() for b in DEPS)  # the thrower never built


def test_each_worker_s_worktree_had_the_generated_file_and_none_was_committed(
        landed: tuple[Project, int, list[int]]) -> None:
    p, _, _ = landed
    seen = [json.loads(line) for line in (p.base_dir / "built.log").read_text().splitlines()]
    assert sorted(s["ball"] for s in seen) == sorted(DEPS), seen
    assert all(s["version_file"] for s in seen), seen  # worktrees.setup ran on the worker
    assert VERSION_FILE not in paths_ever(p.bare, "--all")
    # the builder's own commits were folded into one round commit each (L6)
    subjects = git("log", "--no-merges", "--format=%s", "main", cwd=p.bare).splitlines()
    assert not [s for s in subjects if ": step " in s], subjects
    assert sorted(s for s in subjects if s.startswith("leap: round")) == \
        [f"leap: round 1 of {S}/{b} (pass)" for b in sorted(DEPS)], subjects


def test_the_audit_holds_on_a_fresh_clone(landed: tuple[Project, int, list[int]],
                                          tmp_path: Path) -> None:
    p, _, _ = landed
    clone = tmp_path / "clone"
    git("clone", "-q", str(p.bare), str(clone), cwd=tmp_path)
    git("fetch", "-q", "origin", "refs/heads/leap/ledger:refs/heads/leap/ledger", cwd=clone)
    audited = leap("audit", cwd=clone)
    assert audited.code == 0, audited


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill-9"])
def test_a_slice_thrown_here_then_run_with_a_remote_is_scored_here_and_lands(
        isolated: Path, served: Served, sig: int) -> None:
    """A chaos hunt: `leap run S` (what `leap status` names) stopped as it scored, then
    `leap run S --remote origin` with a worker (as the README's shared remote says): it
    waited forever for the rounds' commits to reach the remote ("has not reached origin
    yet"), which no worker would ever push: those episodes were thrown here, never
    published. A round of an episode thrown here is scored from this clone's branch; the
    balls still to throw go to the worker, and the slice lands."""
    with JurorServer("openai", jurors) as server:
        p = build(served.folder(f"here-then-remote-{sig}"), served.daemon, server.url,
                  shared=True)
        killed, _code, said = run_until(p.work, S, is_event("score", step="convening"),
                                        sig=sig, env=p.env)
        assert killed, said[-3000:]
        clone = p.base_dir / "north"
        git("clone", "-q", str(p.daemon.url(str(p.bare.relative_to(p.daemon.base)))),
            str(clone), cwd=p.base_dir)
        log = p.base_dir / "north.log"
        worker = popen(p, ["worker", "--remote", "origin", "--name", "north", "--poll", "0.2"],
                       clone, log)
        try:
            res = p.leap("run", S, "--remote", "origin", "--poll", "0.2", "--heartbeat", "0")
        finally:
            code = wait(worker, log, 60)
    assert res.code == 0 and "landed" in res.out, res.out[-3000:]
    assert "has not reached origin yet" not in res.out, res.out[-3000:]
    assert code == 0, log.read_text()[-2000:]
