"""A slice lands whole, and a red only comes first (L8, T7.1, T9, T8): on a project where
only the first ball passed, the server refuses a slice pass record of the incomplete slice,
and the audit names the balls left out; a red recorded after the
build is refused by the server and its weakened test is still judged against the first red;
the tribunal of a score grades the scored commit, not wherever the branch moved."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from leapgit.ledger import history, layout, leases, query
from leapgit.ledger.workspace import open_workspace
from leapgit.records import yamlio
from leapgit.records.scoring import FileBlob, Merged, MergeRecord, RedRecord, RunEvidence
from leapgit.rules.passes import current_pass
from leapgit.scoring import spine
from leapgit.scoring.source import check_source
from leapgit.tribunal.target import choose
from tests.hooks.world import run_git
from tests.scoring.world import SLICE, Project, build_project, commit_files
from tests.support import git
from tests.templates import Served

OPS = f"refs/heads/leap/ball/{SLICE}/ops"
WEAK = ("import unittest\n\nfrom calc.ops import sub\n\n\nclass T(unittest.TestCase):\n"
        "    def test_sub(self):\n        self.assertTrue(callable(sub))\n")
WRONG = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return 42\n"


@pytest.fixture(scope="module")
def one_passed(isolated: Path, served: Served, scripted_url: str) -> Iterator[Project]:
    """ops passed; fmt and cli were never built. An integrator lease is open."""
    base = served.folder("whole")
    daemon, url = served.daemon, scripted_url
    p = build_project(base, daemon, url)
    assert p.red("ops").code == 0
    assert p.leap("throw", SLICE, "--run").code == 0
    assert p.leap("score", SLICE, "ops").code == 0
    with open_workspace(p.work).ledger() as ledger:
        leases.take_lease(ledger, "main", "integrator", "by hand")
    assert p.leap("sync").code == 0
    yield p


def test_server_refuses_an_incomplete_slice_and_audit_names_it(one_passed: Project) -> None:
    p = one_passed
    ws = open_workspace(p.work)
    cand, old = p.tip(OPS), p.tip("main")
    with ws.ledger() as ledger:
        rec = current_pass(ledger.require(), SLICE, "ops")
        assert rec is not None
        merge = spine.merge_commit(p.work, old, cand, spine.predict(p.work, old, cand).tree,
                                   spine.merge_message(SLICE, "ops", rec.candidate,
                                                       rec.run_id or "", rec.score))
        record = MergeRecord(SLICE, "main", 1, "integrator", old, merge,
                             (Merged("ops", merge, rec.candidate, cand, rec.run_id or "",
                                     rec.score),), rec.run_id or "", rec.candidate,
                             "2026-01-01T00:00:00Z")
        ledger.append({layout.merge_path(SLICE, 1): yamlio.dumps(record.to_dict())},
                      f"merge {SLICE} onto main: 1 ball(s)", [("Leap-Slice", SLICE)])
    git("update-ref", "refs/heads/main", merge, old, cwd=p.work)
    try:
        pushed = run_git("push", "--no-verify", "--atomic", "origin", "main", "leap/ledger",
                         cwd=p.work)
        assert pushed.returncode != 0
        assert "[L8]" in pushed.stderr and "merge.yaml" in pushed.stderr
        assert "calc is not complete: fmt has no full pass" in pushed.stderr, pushed.stderr
        assert p.remote_tip("refs/heads/main") == old
        res = p.leap("audit", "--json")
    finally:
        git("update-ref", "refs/heads/main", old, cwd=p.work)
    assert res.code == 1, res
    report = json.loads(res.out)
    assert any(v["check"] == "merge-record" and "never merge fmt, cli" in v["message"]
               for v in report["violations"]), report["violations"]
    assert {s["slice"]: s["state"] for s in report["slices"]}[SLICE] == "open"


def forge_red(p: Project, number: int, commit: str, path: str) -> RedRecord:
    blob = git("rev-parse", f"{commit}:{path}", cwd=p.work)
    return RedRecord(SLICE, "ops", number, commit, p.base, (FileBlob(path, blob),),
                     RunEvidence("red", "python -m unittest -q tests.test_sub", 1, 0.1,
                                 "ImportError", "red"), "2026-01-01T00:00:00Z")


def test_a_red_after_the_build_is_refused_and_the_first_red_still_holds(
        one_passed: Project) -> None:
    p = one_passed
    red2 = commit_files(p.work, p.base, {"tests/test_sub.py": WEAK}, "red again")
    cand = commit_files(p.work, red2, {"calc/ops.py": WRONG},
                        "wrong sub\n\nLeap-Round: 2\nLeap-Outcome: 1")
    ws = open_workspace(p.work)
    rec = forge_red(p, 2, red2, "tests/test_sub.py")
    before = git("rev-parse", "leap/ledger", cwd=p.work)
    with ws.ledger() as ledger:
        ledger.append({layout.red_path(SLICE, "ops", 2): yamlio.dumps(rec.to_dict())},
                      f"red 2 of {SLICE}/ops", [("Leap-Slice", SLICE), ("Leap-Ball", "ops")])
        view = ledger.require()
        reds = history.reds(view, SLICE, "ops")
        ball = query.load_ball(view, SLICE, "ops")
    try:
        pushed = run_git("push", "--no-verify", "origin", "leap/ledger", OPS,
                         f"{red2}:refs/leap-red", cwd=p.work)
        assert pushed.returncode != 0
        err = pushed.stderr
        assert "[T7.1]" in err and "already has 1 round(s)" in err, err
        assert "does not descend from red 1" in err and "the frozen set only grows" in err, err
        # T9: score judges the candidate against every red, not only the latest
        source = check_source(p.work, p.base, cand, ball, reds[-1], reds[:-1])
        assert source.step.result == "fail" and source.step.rule == "T7.1"
        assert "tests/test_sub.py" in source.step.detail
    finally:
        git("update-ref", "refs/heads/leap/ledger", before, cwd=p.work)


def test_the_score_tribunal_grades_the_scored_commit(one_passed: Project) -> None:
    """T8: a score pins the tribunal to the scored commit and the throw's base; a branch
    that moves while the seats sit annuls nothing and grades nothing else."""
    p = one_passed
    ws = open_workspace(p.work)
    scored = p.tip(OPS)
    with ws.ledger() as ledger:
        target = choose(p.work, ledger.require(), ws.config, p.base, scored, SLICE, "ops")
    moved = commit_files(p.work, scored, {"calc/ops.py": WRONG}, "moved")
    git("update-ref", OPS, moved, cwd=p.work)
    try:
        assert (target.base, target.head) == (p.base, scored)
        assert target.reread() == scored
        assert (target.slice, target.ball) == (SLICE, "ops")
    finally:
        git("update-ref", OPS, scored, cwd=p.work)
