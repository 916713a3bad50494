"""`leap audit` on a ledger of 200 merged balls in the shape leapgit writes it (the
benchmark's repository, ``tests.benchmarks.bench_audit.build``: real commits, real ledger
records, real integration merges on the spine). The audit reads the history in one pass;
these tests prove the pass still finds each way a history can lie, deep in the middle of
it, names it once, and finds nothing on the honest history."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from leapgit.ledger import layout
from leapgit.records import yamlio
from tests.benchmarks.bench_audit import LEDGER_REF, NOW, build
from tests.support import git, leap

BALLS = 200


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("scale") / "repo", BALLS)


@pytest.fixture
def repo(built: Path, tmp_path: Path) -> Path:
    """A copy of the 200-ball repository this test may tamper with."""
    return Path(shutil.copytree(built, tmp_path / "repo", symlinks=True))


def audit(repo: Path) -> tuple[int, dict[str, Any]]:
    res = leap("audit", "--json", cwd=repo)
    assert res.code in (0, 1), res
    return res.code, json.loads(res.out)


def checked(report: dict[str, Any]) -> dict[str, int]:
    return {c["check"]: c["checked"] for c in report["checks"]}


def found(report: dict[str, Any]) -> list[tuple[str, str | None, str | None]]:
    return sorted((v["check"], v["path"], v["commit"]) for v in report["violations"])


def ledger_commit(repo: Path, files: dict[str, bytes], message: str) -> str:
    """A ledger commit made with git's plumbing, behind leapgit's back: ``files`` written
    over the tip's tree (an existing path is edited)."""
    tip = git("rev-parse", LEDGER_REF, cwd=repo)
    index = {"GIT_INDEX_FILE": str(repo / ".git" / "tamper-index")}
    git("read-tree", tip, cwd=repo, env=index)
    for path, data in files.items():
        blob = git("hash-object", "-w", "--stdin", cwd=repo, input=data)
        git("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", cwd=repo,
            env=index)
    tree = git("write-tree", cwd=repo, env=index)
    commit = git("commit-tree", tree, "-p", tip, "-m", message, cwd=repo)
    git("update-ref", LEDGER_REF, commit, tip, cwd=repo)
    return commit


def test_the_honest_history_holds_and_every_record_is_checked(repo: Path) -> None:
    code, report = audit(repo)
    assert code == 0 and report["ok"], report["violations"][:5]
    commits = int(git("rev-list", "--count", LEDGER_REF, cwd=repo))
    assert report["ledger"]["commits"] == commits
    assert report["ledger"]["records"] == 1 + 87 * BALLS // 10  # the root, 87 a slice
    n = checked(report)
    assert n["pass-provenance"] == n["pass-candidate"] == n["red-unchanged"] == BALLS
    assert n["no-fifth-round"] == 2 * BALLS  # every receipt, and every pass's rounds
    assert n["merge-record"] == BALLS // 10
    assert n["spine-traced"] == n["reopen-recorded"] == BALLS
    assert n["ledger-append-only"] == n["signatures"] == commits
    assert {s["state"] for s in report["slices"]} == {"merged"}


def test_a_record_edited_in_the_middle_of_the_history_is_named(repo: Path) -> None:
    path = layout.score_path("s7", "b3", 1)
    data = git("show", f"{LEDGER_REF}:{path}", cwd=repo).encode() + b"\n# edited\n"
    edit = ledger_commit(repo, {path: data}, "edit a score")
    code, report = audit(repo)
    assert code == 1
    assert found(report) == [("ledger-append-only", path, edit)]


def test_a_fifth_round_is_named_in_the_report(repo: Path) -> None:
    """L6: a receipt of round 5 written behind leapgit's back is a violation the report
    names; it must not stop the audit (it did: reading the receipt to count the rounds
    raised, and `leap audit` printed one error line and no report)."""
    path = layout.receipt_path("s11", "b4", 1, 5)
    record = {"kind": "receipt", "format": 1, "slice": "s11", "ball": "b4", "episode": 1,
              "round": 5, "outcome": 1, "claim": True, "evidence": "built",
              "recorded_at": NOW}
    fifth = ledger_commit(repo, {path: yamlio.dumps(record)},
                          f"round 5 of s11/b4\n\nLeap-Record: {path}\n")
    code, report = audit(repo)
    assert code == 1
    rounds = [v for v in report["violations"] if v["check"] == "no-fifth-round"]
    assert [(v["path"], v["commit"]) for v in rounds if v["path"] == path] == [(path, fifth)]
    assert all(v["subject"].startswith("slices/s11/balls/b4") or
               v["subject"].startswith("s11/b4") for v in report["violations"]), \
        report["violations"]


def test_a_hotfix_on_the_spine_over_a_merged_ball_is_named(repo: Path) -> None:
    """L8: a spine commit that is no integration merge is untraced, and changing a merged
    ball's file reopens that ball (three slices before the tip, so the walk of the spine
    must reach it)."""
    src = "src/g0/s3/b1.py"
    main = git("rev-parse", "refs/heads/main", cwd=repo)
    tree = git("rev-parse", "main^{tree}", cwd=repo)
    index = {"GIT_INDEX_FILE": str(repo / ".git" / "tamper-index")}
    git("read-tree", tree, cwd=repo, env=index)
    blob = git("hash-object", "-w", "--stdin", cwd=repo, input=b"VALUE = -1\n")
    git("update-index", "--cacheinfo", f"100644,{blob},{src}", cwd=repo, env=index)
    hotfix = git("commit-tree", git("write-tree", cwd=repo, env=index), "-p", main, "-m",
                 "hotfix", cwd=repo)
    git("update-ref", "refs/heads/main", hotfix, main, cwd=repo)
    code, report = audit(repo)
    assert code == 1
    assert [(v["check"], v["commit"]) for v in report["violations"]] == [
        ("reopen-recorded", hotfix), ("spine-traced", hotfix)]
    state = {s["slice"]: {b["ball"]: b["state"] for b in s["balls"]}
             for s in report["slices"]}
    assert state["s3"]["b1"] == "reopened" and state["s3"]["b0"] == "merged"


def test_a_merge_that_does_not_carry_its_candidate_is_named_by_the_integration_rule(
        repo: Path) -> None:
    """L8 (``rules.spine.check_integration``, the server's rule): a re-merge of s12/b5 whose
    bytes of the ball's file are not the passed candidate's, recorded as the slice's second
    pass record, is named: its pass landed already (a pass lands once; merged again it would
    put old bytes back over later slices); so is its aggregate review, which graded the
    first merge's tree."""
    from leapgit.ledger.store import Ledger
    from leapgit.records.scoring import Merged, MergeRecord

    src, first = "src/g0/s12/b5.py", layout.merge_path("s12")
    merged = yamlio.loads(git("show", f"{LEDGER_REF}:{first}", cwd=repo).encode(), first)
    record = MergeRecord.from_dict(merged)
    ball = next(m for m in record.merges if m.ball == "b5")
    main = git("rev-parse", "refs/heads/main", cwd=repo)
    index = {"GIT_INDEX_FILE": str(repo / ".git" / "tamper-index")}
    git("read-tree", "main^{tree}", cwd=repo, env=index)
    blob = git("hash-object", "-w", "--stdin", cwd=repo, input=b"VALUE = 999\n")
    git("update-index", "--cacheinfo", f"100644,{blob},{src}", cwd=repo, env=index)
    message = git("log", "-1", "--format=%B", ball.commit, cwd=repo)
    forged = git("commit-tree", git("write-tree", cwd=repo, env=index), "-p", main, "-p",
                 ball.candidate_commit, "-m", message, cwd=repo)
    git("update-ref", "refs/heads/main", forged, main, cwd=repo)
    again = MergeRecord("s12", "main", record.lease, record.holder, main, forged,
                        (Merged("b5", forged, ball.candidate, ball.candidate_commit,
                                ball.run_id, ball.score),),
                        record.aggregate_run, record.aggregate_tree, NOW, number=2)
    with Ledger(repo / ".git") as ledger:
        ledger.append({layout.merge_path("s12", 2): yamlio.dumps(again.to_dict())},
                      "merge s12 onto main: 1 ball(s)", [("Leap-Slice", "s12")])
    code, report = audit(repo)
    assert code == 1
    bad = [(v["check"], v["subject"], v["commit"]) for v in report["violations"]]
    assert bad == [("merge-record", "s12", forged), ("merge-record", "s12/b5", forged)], bad
    named = next(v for v in report["violations"] if v["subject"] == "s12/b5")
    assert named["path"] == layout.merge_path("s12", 2) and \
        f"score {ball.score} of s12/b5 is merged already" in named["message"], named


def test_a_pass_whose_candidate_edits_a_frozen_test_is_named(repo: Path) -> None:
    """T7.1: a second pass of s5/b2 on a commit that edits the red commit's test file (the
    candidate, one commit further) is named by red-unchanged with the file and both blobs."""

    from leapgit.ledger.store import Ledger
    from leapgit.records.scoring import ScoreRecord

    first = layout.score_path("s5", "b2", 1)
    passed = ScoreRecord.from_dict(yamlio.loads(
        git("show", f"{LEDGER_REF}:{first}", cwd=repo).encode(), first))
    test = "tests/g0/s5/test_b2.py"
    red_blob = git("rev-parse", f"{passed.commit}:{test}", cwd=repo)
    index = {"GIT_INDEX_FILE": str(repo / ".git" / "tamper-index")}
    git("read-tree", passed.commit, cwd=repo, env=index)
    blob = git("hash-object", "-w", "--stdin", cwd=repo, input=b"def test_b2():\n    pass\n")
    git("update-index", "--cacheinfo", f"100644,{blob},{test}", cwd=repo, env=index)
    weakened = git("commit-tree", git("write-tree", cwd=repo, env=index), "-p",
                   passed.commit, "-m", "round 2\n\nLeap-Round: 2\nLeap-Outcome: 1", cwd=repo)
    tree = git("rev-parse", f"{weakened}^{{tree}}", cwd=repo)
    again = passed._replace(score=2, commit=weakened, candidate=tree)
    with Ledger(repo / ".git") as ledger:
        ledger.append({layout.score_path("s5", "b2", 2): yamlio.dumps(again.to_dict())},
                      "score 2 of s5/b2: pass", [("Leap-Slice", "s5"), ("Leap-Ball", "b2")])
    code, report = audit(repo)
    assert code == 1
    red = [v for v in report["violations"] if v["check"] == "red-unchanged"]
    assert [(v["subject"], v["path"], v["commit"]) for v in red] == [
        ("s5/b2 score 2", test, weakened)], red
    assert blob[:12] in red[0]["message"] and red_blob[:12] in red[0]["message"]


def test_the_audit_process_leaves_at_once_with_its_whole_report_and_exit_code(
        repo: Path) -> None:
    """`leap audit` as a process skips the interpreter's teardown (``launch.main``): its report
    is still whole on stdout, and its exit code still says whether all holds."""
    held = leap("audit", "--json", cwd=repo, subprocess=True)
    assert held.code == 0, held
    assert json.loads(held.out)["ok"] is True
    path = layout.score_path("s7", "b3", 1)
    data = git("show", f"{LEDGER_REF}:{path}", cwd=repo).encode() + b"\n# edited\n"
    ledger_commit(repo, {path: data}, "edit a score")
    failed = leap("audit", cwd=repo, subprocess=True)
    assert failed.code == 1, failed
    assert failed.out.rstrip().endswith("violation(s)"), failed.out[-500:]


def test_what_the_audit_read_is_kept_for_a_caller_that_leaves_and_freed_for_any_other(
        repo: Path) -> None:
    """``keep`` (the `leap audit` process, ``launch.main``): what the audit read stays alive
    there, and the report is the same; an in-process caller keeps nothing and gets the
    collector back as it was."""
    import gc

    from leapgit.commands.audit import audit as run

    kept: list[object] = []
    held = run(repo, keep=kept)
    assert held.ok and held.records > 0 and kept, (held.ok, held.records, kept)
    again = run(repo)
    assert again.to_json() == held.to_json()
    assert gc.isenabled()
    assert leap("audit", cwd=repo).code == 0
    assert gc.isenabled()  # an in-process `leap audit` left the collector on
