"""After the merge (L8): a byte change to a merged candidate reopens its ball, and the flow
goes on to the end against the real remote behind `git daemon` (its pre-receive judging):
re-score, then `leap merge` lands the new candidate as the slice's next, numbered merge
record (the ledger stays add-only), and `leap audit` re-derives both merges. A spine commit
outside an integration that changes a merged ball's files only in a clone is reported by
`leap status` and `leap audit`, and `leap merge` lands nothing over it (the server takes a
reopen only for a byte change on the spine it stores)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from leapgit.ledger import layout
from leapgit.records import yamlio
from tests.scoring.test_merge_refusals import two_passed_copy
from tests.scoring.world import Project
from tests.support import git, hinted_leap
from tests.templates import Served

SLICE = "left"


@pytest.fixture(scope="module")
def merged(isolated: Path, served: Served, scripted_url: str) -> Iterator[Project]:
    with two_passed_copy(served, scripted_url, SLICE) as p:
        res = p.leap("merge", SLICE)
        assert res.code == 0, res
        yield p


def ledger_files(p: Project, folder: str) -> list[str]:
    return git("ls-tree", "-r", "--name-only", "leap/ledger", folder, cwd=p.work).splitlines()


def audit_json(p: Project) -> dict[str, object]:
    res = p.leap("audit", "--json")
    data: dict[str, object] = json.loads(res.out)
    return data


def states(data: dict[str, object]) -> tuple[str, dict[str, str]]:
    found = data["slices"][0]  # type: ignore[index]
    return found["state"], {b["ball"]: b["state"] for b in found["balls"]}


def test_a_reopened_ball_is_rescored_and_remerged(merged: Project) -> None:
    p = merged
    first = git("rev-parse", f"leap/ledger:{layout.merge_path(SLICE)}", cwd=p.work)
    wt = p.worktree("u", SLICE)
    (wt / "calc" / "u.py").write_text("def value():\n    return 1  # v2\n")
    git("commit", "-qam", "u: one more byte\n\nLeap-Round: 2\nLeap-Outcome: 1", cwd=wt)
    assert layout.reopen_path(SLICE, "u", 1) in ledger_files(p, f"slices/{SLICE}")
    assert states(audit_json(p)) == ("reopened", {"u": "reopened", "v": "merged"})

    held = p.leap("merge", SLICE)  # not re-scored yet: nothing lands
    assert held.code == 3 and "u (no pass)" in held.err, held
    score = p.leap("score", SLICE, "u")
    assert score.code == 0 and "score 2 of left/u: 1 (pass)" in score.out, score

    before = p.tip("main")
    res = p.leap("merge", SLICE)
    assert res.code == 0, res
    assert "merged left/u" in res.out and "merged left/v" not in res.out
    assert f"slice pass record {layout.merge_path(SLICE, 2)} written" in res.out
    tip = p.tip("main")
    assert tip != before and p.remote_tip("refs/heads/main") == tip  # the server took it
    assert git("show", "main:calc/u.py", cwd=p.work) == "def value():\n    return 1  # v2"
    path = layout.merge_path(SLICE, 2)
    second = yamlio.loads(git("show", f"leap/ledger:{path}", cwd=p.work).encode(), path)
    assert second["merge"] == 2 and second["base"] == before and second["tip"] == tip
    assert [(m["ball"], m["score"]) for m in second["merges"]] == [("u", 2)]
    # add-only: the first merge record is as it was
    assert git("rev-parse", f"leap/ledger:{layout.merge_path(SLICE)}", cwd=p.work) == first

    data = audit_json(p)
    assert data["ok"] is True, data["violations"]
    assert states(data) == ("merged", {"u": "merged", "v": "merged"})
    again = p.leap("merge", SLICE)
    assert again.code == 0, again  # issue 14 item 11: a merged slice is no error
    assert f"already merged: every ball's pass is on main, last at {tip[:12]} " \
        f"({layout.merge_path(SLICE, 2)}); nothing to do" in again.out
    export = p.leap("audit", "--export", "in-toto")
    tips = [s["subject"][0]["digest"].get("gitCommit") for s in map(json.loads,
                                                                     export.out.splitlines())
            if s["predicateType"].endswith("slice-merge/v1")]
    assert tips == [before, tip]


def test_a_local_spine_commit_on_merged_files_is_reported_then_refused(
        merged: Project) -> None:
    """Gap 3: not pushed, so no pre-receive sees it; `leap status` and `leap audit` report
    it (read-only). The spine the server stores still holds the merged candidate, and the
    server takes a reopen only for a byte change there (issue 18 F6, L8): `leap merge`
    records none, lands nothing over the local commit and says to drop it; dropped, the
    slice stands merged."""
    p = merged
    merged_tip = p.tip("main")
    target = p.work / "calc" / "v.py"
    target.write_text(target.read_text() + "# hotfix\n")
    git("commit", "-qam", "a local hotfix", cwd=p.work)
    hotfix = p.tip("main")
    ledger = p.tip("leap/ledger")

    status = p.leap("status", SLICE)
    assert status.code == 0, status
    assert "reopened" in status.out and hotfix[:12] in status.out, status.out
    assert "calc/v.py" in status.out
    data = json.loads(p.leap("status", SLICE, "--json").out)
    balls = {b["ball"]: b for wave in data["slices"][0]["waves"] for b in wave}
    assert balls["v"]["reopened"] == {"commit": hotfix, "paths": ["calc/v.py"],
                                      "recorded": False}
    assert balls["u"].get("reopened") is None

    audit = p.leap("audit")
    assert audit.code == 1
    assert "[L8] reopen-recorded: left/v" in audit.out and hotfix[:12] in audit.out
    assert states(audit_json(p)) == ("reopened", {"u": "merged", "v": "reopened"})
    assert p.tip("leap/ledger") == ledger  # status and audit only read

    # the command status names, as printed; the server would refuse that reopen: the merge
    # records none, and says how to take the commit off the spine
    assert "or says how to take it off the spine when only this clone holds it" in status.out
    [line] = [ln for ln in status.out.splitlines() if "reopened (L8)" in ln]
    assert hinted_leap(line) == [["merge", SLICE]], line
    held = p.leap(*hinted_leap(line)[0])
    assert held.code == 3, held
    assert f"spine commit {hotfix[:12]}, which only this clone holds, changes calc/v.py " \
        "of merged ball left/v" in held.err and "[L8]" in held.err, held
    assert "`git reset --keep origin/main` on main" in held.err, held
    assert layout.reopen_path(SLICE, "v", 1) not in ledger_files(p, f"slices/{SLICE}")
    assert p.tip("leap/ledger") == ledger
    assert p.tip("main") == hotfix and p.remote_tip("refs/heads/main") == merged_tip

    git("reset", "-q", "--keep", "origin/main", cwd=p.work)  # the hint, as given
    assert p.tip("main") == merged_tip
    again = p.leap("merge", SLICE)
    assert again.code == 0 and "already merged" in again.out, again
    data = audit_json(p)
    assert data["ok"] is True, data["violations"]
    assert states(data) == ("merged", {"u": "merged", "v": "merged"})
