"""A three-ball slice with dependencies goes from cut to merged on a real bare remote (served
by `git daemon` on 127.0.0.1, the server hook installed), and `leap audit` re-derives it;
then a byte change reopens a passed ball, the server refuses a spine commit outside an
integration, and a record rewritten behind leapgit's back fails the audit."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from leapgit.ledger import layout
from tests.hooks.world import run_git
from tests.scoring.world import SLICE, Project, build_project
from tests.support import git
from tests.templates import Served


def record(p: Project, path: str) -> dict[str, Any]:
    from leapgit.records import yamlio

    data: dict[str, Any] = yamlio.loads(
        git("show", f"leap/ledger:{path}", cwd=p.work).encode(), path)
    return data


@pytest.fixture(scope="module")
def landed(isolated: Path, served: Served, scripted_url: str) -> Iterator[Project]:
    base = served.folder("e2e")
    daemon, url = served.daemon, scripted_url
    p = build_project(base, daemon, url)
    passing = ("tests/test_cli.py", "import unittest\n\n\nclass T(unittest.TestCase):\n"
               "    def test_nothing(self):\n        pass\n")
    p.steps = {}  # type: ignore[attr-defined]
    # L5: a dependent ball's red is built on its stack base, once its dependency passed
    for name, args in [("red ops", ("red", "ops")), ("throw 1", ()), ("score ops", ()),
                       ("red cli passing", ("red", "cli")),
                       ("red fmt", ("red", "fmt")), ("red cli", ("red", "cli")),
                       ("throw 2", ()), ("score fmt", ()), ("score cli", ()),
                       ("merge", ())]:
        if name == "red cli passing":
            res = p.red("cli", test=passing)
        elif name.startswith("red"):
            res = p.red(args[1])
        elif name.startswith("throw"):
            res = p.leap("throw", SLICE, "--run")
        elif name.startswith("score"):
            res = p.leap("score", SLICE, name.split()[1])
        else:
            res = p.leap("merge", SLICE)
        p.steps[name] = res  # type: ignore[attr-defined]
    yield p


def test_the_slice_lands_on_the_remote_spine(landed: Project) -> None:
    steps = dict(landed.steps)  # type: ignore[attr-defined]
    refused = steps.pop("red cli passing")
    assert refused.code == 1
    assert "a red test that passes is refused [T7.1]" in refused.err
    for name, res in steps.items():
        assert res.code == 0, (name, res)
    assert "the proof fails there" in steps["red ops"].out
    assert "score 1 of calc/ops: 1 (pass)" in steps["score ops"].out
    assert "not thrown: ops: calc/ops already passed" in steps["throw 2"].out
    assert "pushed to origin" in steps["merge"].out
    tip = landed.tip("main")
    assert landed.remote_tip("refs/heads/main") == tip
    log = git("log", "--first-parent", "--format=%s%n%(trailers:key=Leap-Ball,valueonly)",
              f"{landed.base}..main", cwd=landed.work).split()
    assert [w for w in log if w in ("ops", "fmt", "cli")] == ["cli", "fmt", "ops"]
    merges = git("log", "--first-parent", "--format=%(trailers:key=Leap-Candidate,valueonly)",
                 f"{landed.base}..main", cwd=landed.work).split()
    seconds = git("log", "--first-parent", "--format=%P", f"{landed.base}..main",
                  cwd=landed.work).splitlines()
    assert merges == [landed.tip(f"{line.split()[1]}^{{tree}}") for line in seconds]
    data = record(landed, layout.merge_path(SLICE))
    assert data["aggregate"]["outcome"] == "pass" and data["tip"] == tip
    assert [m["ball"] for m in data["merges"]] == ["ops", "fmt", "cli"]
    assert landed.remote_tip("refs/heads/leap/ledger") == landed.tip("leap/ledger")


def test_readiness_and_the_pass_record(landed: Project) -> None:
    res = landed.leap("status", SLICE, "--json")
    assert res.code == 0, res
    path = layout.score_path(SLICE, "ops", 1)
    data = record(landed, path)
    tree = landed.tip("leap/ball/calc/ops^{tree}")
    assert (data["claim"], data["outcome"], data["candidate"]) == (False, 1, tree)
    prov = data["provenance"]
    assert prov["candidate"] == tree and prov["builder"].startswith("model=scripted-builder")
    assert len(prov["reviewers"]) == 8 and {r["family"] for r in prov["reviewers"]} == \
        {"scripted"}
    for linked in [prov["summary"], *prov["verdicts"]]:
        assert record(landed, linked)["tree"] == tree  # L7.5: one hash in every record
    assert json.loads(res.out)


def test_audit_passes_and_its_json_is_stable(landed: Project) -> None:
    res = landed.leap("audit")
    assert res.code == 0, res
    assert "audit: every pass re-derived; all holds" in res.out
    first = landed.leap("audit", "--json")
    second = landed.leap("audit", "--json")
    assert first.code == 0 and first.out == second.out
    data = json.loads(first.out)
    assert list(data) == ["format", "ok", "ledger", "spine", "checks", "slices",
                          "violations", "notes", "evidence"]
    assert data["evidence"] == []  # no round was refused: no refused commit kept (L6)
    assert data["format"] == 1 and data["ok"] is True
    assert [c["check"] for c in data["checks"]][:3] == [
        "ledger-append-only", "ledger-written-by-leapgit", "ledger-history-kept"]
    assert data["slices"] == [{"slice": SLICE, "state": "merged", "balls": [
        {"ball": b["ball"], "state": "merged", "score": 1, "candidate": b["candidate"]}
        for b in data["slices"][0]["balls"]]}]
    # issue 7: unsigned records are named plainly, and fail only when signatures are required
    assert any("are unsigned" in note for note in data["notes"])
    strict = landed.leap("audit", "--require-signatures", "--json")
    assert strict.code == 1
    bad = json.loads(strict.out)["violations"]
    assert bad and {v["check"] for v in bad} == {"signatures"} and bad[0]["rule"] == "S1"
    export = landed.leap("audit", "--export", "in-toto")
    statements = [json.loads(line) for line in export.out.splitlines()]
    assert len(statements) == 4
    assert statements[0]["_type"] == "https://in-toto.io/Statement/v1"
    assert statements[0]["subject"][0]["digest"]["gitTree"] == \
        landed.tip("leap/ball/calc/ops^{tree}")


def test_one_byte_after_the_pass_reopens_the_ball(landed: Project) -> None:
    wt = landed.worktree("fmt")
    target = wt / "calc" / "fmt.py"
    target.write_text(target.read_text() + " ")
    git("commit", "-qam", "fmt: one more byte\n\nLeap-Round: 2\nLeap-Outcome: 1", cwd=wt)
    data = json.loads(landed.leap("audit", "--json").out)
    assert data["ok"] is True
    states = {b["ball"]: b["state"] for b in data["slices"][0]["balls"]}
    assert data["slices"][0]["state"] == "reopened" and states["fmt"] == "reopened"
    reopen = record(landed, layout.reopen_path(SLICE, "fmt", 1))
    assert (reopen["where"], reopen["score"]) == ("ball-branch", 1)
    again = landed.leap("score", SLICE, "fmt")
    assert "score 2 of calc/fmt" in again.out


def test_the_server_refuses_a_spine_commit_outside_an_integration(landed: Project) -> None:
    before = landed.tip("main")
    (landed.work / "calc" / "ops.py").write_text(
        (landed.work / "calc" / "ops.py").read_text() + "#")
    git("commit", "-qam", "a one-byte hotfix", cwd=landed.work)
    pushed = run_git("push", "--no-verify", "origin", "main", cwd=landed.work)
    assert pushed.returncode != 0
    assert "[L8] refs/heads/main" in pushed.stderr and "not an integration merge" in \
        pushed.stderr
    # no integration was tried: a lease refusal beside it would send the pusher to take one
    assert "[L9]" not in pushed.stderr and "1 violation" in pushed.stderr, pushed.stderr
    assert landed.remote_tip("refs/heads/main") == before
    audit = landed.leap("audit")
    assert audit.code == 1
    assert "[L8] spine-traced" in audit.out and "not an integration merge" in audit.out
    # the refusal's hint, followed as printed: the change is kept on a branch of its own
    # (a review: the reset alone dropped it, and any other unpushed commit, to the reflog),
    # it leaves this clone's spine, and the next push and audit hold (the change goes on
    # as a ball of a slice)
    hotfix = landed.tip("main")
    [line] = [ln for ln in pushed.stderr.splitlines() if "[L8] refs/heads/main" in ln]
    hint = line.split("; do: ")[1].split("`")[1]
    kept = f"kept-{hotfix[:12]}"
    assert hint == (f"(git branch {kept} {hotfix} 2>/dev/null || git merge-base --is-ancestor "
                    f"{hotfix} {kept}) && git merge-base --is-ancestor main {hotfix} && "
                    f"git switch main && git reset --keep {before}")
    followed = subprocess.run(["sh", "-c", hint], cwd=landed.work, capture_output=True,
                              text=True)
    assert followed.returncode == 0, followed.stderr
    assert landed.tip("main") == before and landed.tip(f"kept-{hotfix[:12]}") == hotfix
    assert run_git("push", "--no-verify", "origin", "main", cwd=landed.work).returncode == 0
    assert landed.leap("audit").code == 0
    git("branch", "-D", f"kept-{hotfix[:12]}", cwd=landed.work)


def test_a_record_rewritten_behind_leapgits_back_fails_the_audit(landed: Project) -> None:
    from tests.hooks.world import World, forge_ledger_commit

    path = layout.score_path(SLICE, "cli", 1)
    text = git("show", f"leap/ledger:{path}", cwd=landed.work)
    forged = text.replace("outcome: 1", "outcome: 1\n# approved by mallory", 1)
    assert forged != text
    fake = World(landed.base_dir, landed.bare, landed.work, landed.daemon, landed.base)
    sha = forge_ledger_commit(fake, {path: forged.encode() + b"\n"})
    res = landed.leap("audit")
    assert res.code == 1
    assert f"[L8] ledger-append-only: {path}" in res.out and sha[:12] in res.out
    assert "records are never edited" in res.out
