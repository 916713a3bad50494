"""A candidate's whole history is judged, not only its tip (L6, L8): on one project where
every ball of the slice has passed, a candidate commit of the passed tree that carries
round commits no receipt records is refused by `leap score`, by the server's integration
check and by `leap audit`; a merge that brings only part of the candidate is refused by
the server and named by the audit."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from leapgit.ledger import layout, leases
from leapgit.ledger.workspace import open_workspace
from leapgit.records import yamlio
from leapgit.records.scoring import Merged, MergeRecord
from leapgit.rules.passes import current_pass
from leapgit.scoring import spine
from tests.hooks.world import run_git
from tests.scoring.world import SLICE, Project, build_project, commit_files
from tests.support import git
from tests.templates import Served

OPS = f"refs/heads/leap/ball/{SLICE}/ops"


@pytest.fixture(scope="module")
def passed(isolated: Path, served: Served, scripted_url: str) -> Iterator[Project]:
    """Every ball of the slice passed; an integrator lease is open on the remote."""
    base = served.folder("history")
    daemon, url = served.daemon, scripted_url
    p = build_project(base, daemon, url)
    assert p.red("ops").code == 0
    assert p.leap("throw", SLICE, "--run").code == 0
    assert p.leap("score", SLICE, "ops").code == 0
    for ball in ("fmt", "cli"):
        assert p.red(ball).code == 0
    assert p.leap("throw", SLICE, "--run").code == 0
    for ball in ("fmt", "cli"):
        res = p.leap("score", SLICE, ball)
        assert res.code == 0, res
    with open_workspace(p.work).ledger() as ledger:
        leases.take_lease(ledger, "main", "integrator", "by hand")
    assert p.leap("sync").code == 0
    yield p


def unrecorded_rounds(p: Project, n: int = 6) -> str:
    """``n`` round commits on the ops candidate that no receipt records, ending on the
    passed candidate's very tree (the same bytes, another history)."""
    tip = p.tip(OPS)
    body = git("show", f"{tip}:calc/ops.py", cwd=p.work) + "\n"
    for i in range(n):
        text = body + (f"# step {i}\n" if i < n - 1 else "")
        tip = commit_files(p.work, tip, {"calc/ops.py": text},
                           f"round {i + 2}\n\nLeap-Round: {i + 2}\nLeap-Outcome: 1")
    assert p.tip(f"{tip}^{{tree}}") == p.tip(f"{OPS}^{{tree}}")
    return tip


def push_merge(p: Project, candidate: str, tree: str | None = None
               ) -> tuple[str, str]:
    """An integration merge of ops made by hand and pushed past the client hooks; the
    merge's tree is the real merge's unless given. Returns (merge commit, push stderr)."""
    passed = p.tip(f"{candidate}^{{tree}}")
    old = p.tip("main")
    merged = tree or spine.predict(p.work, old, candidate).tree
    msg = spine.merge_message(SLICE, "ops", passed, "run", 1)
    merge = spine.merge_commit(p.work, old, candidate, merged, msg)
    pushed = run_git("push", "--no-verify", "origin", f"{merge}:refs/heads/main", cwd=p.work)
    assert pushed.returncode != 0, pushed.stderr
    assert p.remote_tip("refs/heads/main") == old
    return merge, pushed.stderr


def test_score_refuses_a_candidate_with_unrecorded_rounds(passed: Project) -> None:
    p, scored = passed, passed.tip(OPS)
    git("update-ref", OPS, unrecorded_rounds(p), cwd=p.work)
    try:
        res = p.leap("score", SLICE, "ops")
    finally:
        git("update-ref", OPS, scored, cwd=p.work)
    assert res.code == 1, res
    assert "[L6]" in res.err and "commit of the last receipt (round 1)" in res.err


def test_server_refuses_an_integration_of_a_candidate_with_a_fifth_round(passed: Project
                                                                          ) -> None:
    _, err = push_merge(passed, unrecorded_rounds(passed))
    assert "[L6]" in err and "round 4 cannot create round 5" in err


def test_server_refuses_an_integration_that_leaves_part_of_the_candidate_out(
        passed: Project) -> None:
    p = passed
    cand = p.tip(OPS)
    test = git("show", f"{cand}:tests/test_sub.py", cwd=p.work)
    half = commit_files(p.work, p.tip("main"), {"tests/test_sub.py": test}, "half")
    _, err = push_merge(p, cand, p.tip(f"{half}^{{tree}}"))
    assert "[L8]" in err and "calc/ops.py" in err and "do not carry the change" in err


def test_audit_names_unrecorded_rounds_and_a_partial_candidate(passed: Project) -> None:
    p = passed
    ws = open_workspace(p.work)
    extra = unrecorded_rounds(p)
    cand = p.tip(OPS)
    test = git("show", f"{cand}:tests/test_sub.py", cwd=p.work)
    half = commit_files(p.work, p.tip("main"), {"tests/test_sub.py": test}, "half")
    with ws.ledger() as ledger:
        view = ledger.require()
        rec = current_pass(view, SLICE, "ops")
        assert rec is not None
        forged = rec._replace(score=2, commit=extra)  # the same tree, from another history
        merge = spine.merge_commit(p.work, p.tip("main"), cand, p.tip(f"{half}^{{tree}}"),
                                   spine.merge_message(SLICE, "ops", rec.candidate, "r", 1))
        record = MergeRecord(SLICE, "main", 1, "integrator", p.tip("main"), merge,
                             (Merged("ops", merge, rec.candidate, cand, rec.run_id or "", 1),),
                             "none", rec.candidate, "2026-01-01T00:00:00Z")
        ledger.append({layout.score_path(SLICE, "ops", 2): yamlio.dumps(forged.to_dict()),
                       layout.merge_path(SLICE, 1): yamlio.dumps(record.to_dict())},
                      "forged by hand", [("Leap-Slice", SLICE)])
    res = p.leap("audit", "--json")
    assert res.code == 1, res
    found = json.loads(res.out)["violations"]
    rounds = [v for v in found if v["check"] == "no-fifth-round"]
    assert rounds and rounds[0]["subject"] == f"{SLICE}/ops score 2", found
    assert any("commit of its last receipt" in v["message"] for v in rounds)
    assert any("no fifth round" in v["message"] for v in rounds)
    assert any(v["check"] == "merge-record" and "calc/ops.py" in v["message"] and
               v["subject"] == f"{SLICE}/ops" for v in found), found
    assert any(v["check"] == "merge-record" and "never merge fmt, cli" in v["message"]
               for v in found), found
    state = {s["slice"]: s["state"] for s in json.loads(res.out)["slices"]}
    assert state[SLICE] == "open"
