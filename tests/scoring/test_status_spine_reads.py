"""Blind review (c7353ee): `leap status` keeps its answer while the ledger's and the spine's
tips stand, so what it reads of the spine must depend on nothing else: not on a merge a
`git fetch` brings without moving a branch (an answer computed without it is not kept),
nor on this clone's `diff.renames` or grafts (the spine is read as git stores it, L8)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.scoring.test_merge_refusals import two_passed_copy
from tests.scoring.world import Project
from tests.support import git
from tests.templates import Served

SLICE = "left"


def fresh(p: Project) -> str:
    """What a computation prints now: the kept answers removed first."""
    for kept in (p.work / ".git" / "leap-cache").glob("status-*"):
        shutil.rmtree(kept)
    r = p.leap("status", SLICE)
    assert r.code == 0, r
    return r.out


def test_a_merge_a_fetch_brings_without_moving_a_branch_is_looked_after(
        isolated: Path, served: Served, scripted_url: str) -> None:
    with two_passed_copy(served, scripted_url, SLICE) as p:
        assert p.leap("merge", SLICE).code == 0
        merged = p.tip("main")
        # the ledger records the merge; this clone's spine never took it, and a local
        # commit changes a merged file: the merge commit itself is not here
        git("checkout", "-q", "-B", "main", p.tip("main^1^1"), cwd=p.work)
        (p.work / "calc" / "v.py").write_text("# hotfix\n")
        git("add", "-A", cwd=p.work)
        git("commit", "-qm", "a local hotfix", cwd=p.work)
        hotfix = p.tip("main")
        git("update-ref", "-d", "refs/remotes/origin/main", cwd=p.work)
        git("reflog", "expire", "--expire=now", "--all", cwd=p.work)
        git("gc", "-q", "--prune=now", cwd=p.work)
        assert git("cat-file", "-t", merged, cwd=p.work, check=False) != "commit"
        first = p.leap("status", SLICE)
        assert first.code == 0 and hotfix[:12] not in first.out, first

        git("fetch", "-q", "origin", cwd=p.work)  # the merge commit comes; main stays
        assert p.tip("main") == hotfix
        again = p.leap("status", SLICE)
        assert "reopened" in again.out and hotfix[:12] in again.out, again
        assert again.out == fresh(p)


def test_a_merged_file_renamed_on_the_spine_reopens_its_ball_whatever_diff_renames_says(
        isolated: Path, served: Served, scripted_url: str) -> None:
    with two_passed_copy(served, scripted_url, SLICE) as p:
        assert p.leap("merge", SLICE).code == 0
        git("mv", "calc/v.py", "calc/w.py", cwd=p.work)
        git("commit", "-qm", "a local rename of a merged file", cwd=p.work)
        moved = p.tip("main")
        said = []
        for renames in ("true", "false"):
            git("config", "diff.renames", renames, cwd=p.work)
            r = p.leap("status", SLICE)
            assert "reopened" in r.out and f"spine commit {moved[:12]}" in r.out, r
            said.append(r.out)
        assert said[0] == said[1] == fresh(p)


def test_a_graft_of_this_clone_never_changes_which_spine_commit_is_named(
        isolated: Path, served: Served, scripted_url: str) -> None:
    with two_passed_copy(served, scripted_url, SLICE) as p:
        assert p.leap("merge", SLICE).code == 0
        merged = p.tip("main")
        (p.work / "calc" / "v.py").write_text("# hotfix\n")
        git("commit", "-qam", "a local hotfix", cwd=p.work)
        hotfix = p.tip("main")
        first = p.leap("status", SLICE)
        assert f"spine commit {hotfix[:12]}" in first.out, first
        # a graft hands the hotfix another parent: one with the hotfix's own tree
        other = git("commit-tree", f"{hotfix}^{{tree}}", "-p", merged, "-m", "other",
                    cwd=p.work)
        (p.work / ".git" / "info").mkdir(exist_ok=True)
        (p.work / ".git" / "info" / "grafts").write_text(f"{hotfix} {other}\n")
        again = p.leap("status", SLICE)
        assert again.out == first.out == fresh(p)
