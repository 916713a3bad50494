"""`leap run` alone lands a three-ball change on a small realistic project (issue 14's
end-to-end test, driven by issue 15's loop): a src-layout package whose git-ignored version
module only `worktrees.setup` makes, a pytest suite, a dependent ball whose red test calls
its dependencies' new API (L5 stacked bases), a builder that commits by itself (L6 folds),
scripted jurors on 127.0.0.1 and the server hook behind `git daemon`. After the setup no git
command is run by hand; the test only reads what `leap run` left."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from leapgit.ledger import history, layout
from leapgit.ledger.store import Ledger
from leapgit.records.live import LiveProofRecord
from tests.loop.real_project import (
    DEPS,
    REDS,
    VERSION_FILE,
    S,
    branches,
    build,
    events,
    integrations,
    jurors,
    paths_ever,
)
from tests.scoring.world import Project
from tests.support import Result, git, leap
from tests.templates import Served
from tests.tribunal.jurors import JurorServer


@pytest.fixture(scope="module")
def ran(isolated: Path, served: Served) -> Iterator[tuple[Project, Result]]:
    with JurorServer("openai", jurors) as server:
        p = build(served.folder("real-project"), served.daemon, server.url)
        # the default --jobs 2: two test authors, builders and scorings at once, whose
        # throwaway worktrees git makes one at a time (tests/tribunal/test_worktree_race.py)
        res = p.leap("run", S, "--json", "--heartbeat", "0")
        yield p, res


def test_leap_run_lands_the_slice(ran: tuple[Project, Result]) -> None:
    p, res = ran
    assert res.code == 0, (res.out[-4000:], res.err[-3000:])
    got = events(res.out)
    end = got[-1]
    assert end["event"] == "end" and end["outcome"] == "landed, live proof held", end
    merged = integrations(p.bare)  # on the remote's spine, not only the clone's
    assert len(merged) == 3, merged
    assert {m.split("/", 1)[1].split()[0] for m in merged} == set(DEPS), merged
    # every red was written by the test author, once each
    authored = (p.base_dir / "authored.log").read_text().split()
    assert sorted(authored) == sorted(DEPS), authored


def test_checkout_was_built_on_its_dependencies_code(ran: tuple[Project, Result]) -> None:
    p, res = ran
    order = [e for e in events(res.out) if e["event"] in ("throw", "score")]
    passed = {e["ball"]: i for i, e in enumerate(order)
              if e["event"] == "score" and e.get("outcome") == "pass"}
    thrown = next(i for i, e in enumerate(order)
                  if e["event"] == "throw" and e["ball"] == "checkout")
    assert passed["prices"] < thrown and passed["tax"] < thrown, order  # L5 waves
    status = json.loads(p.leap("status", "--json").out)
    balls = {b["ball"]: b for wave in status["slices"][0]["waves"] for b in wave}
    stack = balls["checkout"]["throw"]["stack"]  # L5: thrown on its dependencies' candidates
    assert sorted(s["ball"] for s in stack) == ["prices", "tax"], stack
    base = balls["checkout"]["throw"]["base"]
    assert git("log", "-1", "--format=%s", base, cwd=p.bare).startswith(
        f"leap: stack base of {S} on prices, tax")  # the stack base reached the remote
    # the landed spine runs the dependent's code on its dependencies' new API
    with Ledger(p.work / ".git") as ledger:
        view = ledger.require()
        live = view.record(layout.live_path(S, 1), LiveProofRecord)
        merged = history.merge_records(view, S)[-1]
    assert live is not None and live.outcome == 1 and live.tip == merged.tip
    assert merged.tip == p.remote_tip("refs/heads/main")
    assert "live 1.4.0 60.0" in live.output_tail, live.output_tail


def test_every_worktree_had_the_generated_file(ran: tuple[Project, Result]) -> None:
    p, _ = ran
    seen = [json.loads(line) for line in (p.base_dir / "built.log").read_text().splitlines()]
    assert sorted(s["ball"] for s in seen) == sorted(DEPS), seen  # one round each
    assert all(s["version_file"] for s in seen), seen  # worktrees.setup ran first
    for ball in DEPS:
        assert (p.worktree(ball, S) / VERSION_FILE).is_file(), ball


def test_the_generated_file_is_never_committed(ran: tuple[Project, Result]) -> None:
    p, _ = ran
    balls = branches(p.work, "refs/heads/leap/ball")
    assert sorted(balls) == [f"refs/heads/leap/ball/{S}/{b}" for b in sorted(DEPS)], balls
    for repo in (p.bare, p.work):  # every ref: spine, ledger, ball branches, stack bases
        found = paths_ever(repo, "--all")
        assert VERSION_FILE not in found, repo
    for ball, tip in balls.items():
        files = set(git("ls-tree", "-r", "--name-only", tip, cwd=p.work).splitlines())
        assert VERSION_FILE not in files and "src/shop/__init__.py" in files, ball
    spine = git("ls-tree", "-r", "--name-only", "main", cwd=p.bare).splitlines()
    assert VERSION_FILE not in spine
    assert {"src/shop/checkout.py", "src/shop/tax.py", *(r[0] for r in REDS.values())} \
        <= set(spine), spine


def test_the_builders_commits_were_folded_into_rounds(ran: tuple[Project, Result]) -> None:
    p, _ = ran
    # L6: every non-merge commit a ball brought to the spine is its red or one round
    # commit with the receipt trailers; the builder's own trailer-less commits are gone
    rows = [line.split("\t") for line in git(
        "log", "--no-merges", "--format=%s%x09R%(trailers:key=Leap-Round,valueonly,separator=)",
        "main", cwd=p.bare).splitlines()]
    assert not [r for r in rows if ": step " in r[0]], rows
    rounds = sorted(r[0] for r in rows if r[1] != "R")
    assert rounds == [f"leap: round 1 of {S}/{b} (pass)" for b in sorted(DEPS)], rows
    log = p.work / ".git" / "leap" / "logs" / S / "checkout" / "episode-1-round-1.log"
    assert "folded 2 commit(s) the builder made" in log.read_text()


def test_status_and_log_show_the_passes(ran: tuple[Project, Result]) -> None:
    p, _ = ran
    status = p.leap("status", "--json")
    assert status.code == 0, status
    balls = {b["ball"]: b for wave in json.loads(status.out)["slices"][0]["waves"]
             for b in wave}
    assert sorted(balls) == sorted(DEPS)
    for ball, shown in balls.items():
        assert shown["readiness"] == "passed", (ball, shown)
        assert shown["last_score"]["outcome"] == 1, (ball, shown)
        assert shown["spent"]["tokens_in"] > 0, (ball, shown)  # the jurors' reported usage
    plain = p.leap("status", S)
    assert plain.code == 0, plain
    for ball in DEPS:
        assert re.search(rf"^ +{ball} +passed +round 1/4", plain.out, re.M), plain.out
    assert plain.out.count("score 1: pass") == 3, plain.out
    log = p.leap("log", "--slice", S)
    assert log.code == 0, log
    for ball in DEPS:
        assert f"score 1 of {S}/{ball}: pass" in log.out, log.out
    assert f"merge {S} onto main: 3 ball(s)" in log.out
    assert f"live proof of {S} at " in log.out and ": held" in log.out


def test_the_audit_holds_on_a_fresh_clone(ran: tuple[Project, Result], tmp_path: Path) -> None:
    p, _ = ran
    clone = tmp_path / "clone"
    git("clone", "-q", str(p.bare), str(clone), cwd=tmp_path)
    git("fetch", "-q", "origin", "refs/heads/leap/ledger:refs/heads/leap/ledger", cwd=clone)
    audited = leap("audit", cwd=clone)
    assert audited.code == 0, audited


@pytest.fixture(scope="module")
def unset(isolated: Path, served: Served) -> tuple[Project, Result]:
    """The same project with no `worktrees.setup`: `import shop` fails in every fresh
    worktree (its `_version.py` is never made)."""
    with JurorServer("openai", jurors) as server:
        p = build(served.folder("real-project-nosetup"), served.daemon, server.url,
                  setup=None)
        return p, p.leap("run", S, "--json", "--heartbeat", "0")


def test_without_the_setup_nothing_lands(unset: tuple[Project, Result]) -> None:
    p, res = unset
    assert res.code == 1, res
    assert integrations(p.bare) == [] and p.remote_tip("refs/heads/main") == p.base
    stops = {str(e["ball"]): e for e in events(res.out) if e["event"] == "stop"}
    assert sorted(stops) == ["prices", "tax"], stops  # checkout waits on them
    for stop in stops.values():  # T9: a harness that cannot run is no red
        assert "are not green at its base" in str(stop["reason"]), stop
    assert not (p.base_dir / "built.log").exists()  # no builder ran, no round was spent


def test_without_the_setup_the_run_shows_why(unset: tuple[Project, Result]) -> None:
    _, res = unset
    assert "No module named 'shop._version'" in res.out + res.err, res.out[-3000:]
