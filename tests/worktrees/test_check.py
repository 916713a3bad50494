"""`leap ball check` (L2): a wrong map is -1 naming file, expected and actual; a missing
dependency is 0; symlinks that leave the worktree are refused."""

from __future__ import annotations

import os
from pathlib import Path

from leapgit.records.types import BallRecord
from tests.reds import red_of
from tests.scoring.world import commit_files
from tests.support import commit_all, git, leap, make_repo, write_files
from tests.worktrees.conftest import DIAMOND_REDS, mark_passed, worktree_of


def _blob(repo: Path, rev_path: str) -> str:
    return git("rev-parse", rev_path, cwd=repo)


def test_clean_map_is_ok(diamond: Path) -> None:
    leap("throw", "dia", cwd=diamond)
    r = leap("ball", "check", "dia", "A", cwd=worktree_of(diamond, "A"))
    assert r.code == 0 and "map ok" in r.out, r


def test_stale_map_names_file_expected_and_actual(diamond: Path) -> None:
    # A, with no dependency, is thrown from the spine's tip (a dependent ball builds on its
    # stack base, the slice's base with its dependencies' candidates: issue 14, L5)
    stamped = _blob(diamond, "HEAD:src/a.py")
    write_files(diamond, {"src/a.py": "A = 'changed after the cut'\n"})
    commit_all(diamond, "someone edits a.py on the spine")
    actual = _blob(diamond, "HEAD:src/a.py")
    # A's red stands behind the moved spine: the throw holds, and A's red is written again
    # where the throw starts, as it says (T7.1: a branch always starts at its red)
    held = leap("throw", "dia", "--ball", "A", cwd=diamond)
    assert held.code == 3 and "(the spine moved, or its dependencies passed again)" in \
        held.err, held
    red_of(diamond, "dia", "A", DIAMOND_REDS["A"])
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    r = leap("ball", "check", "dia", "A", cwd=diamond)
    assert r.code == 1, r
    assert (f"leap: src/a.py: stale map: expected {stamped} (stamped at the cut), "
            f"actual {actual} at the throw base src/a.py [L2]") in r.err


def test_file_changed_in_the_worktree_and_absent_must_stay_absent(diamond: Path) -> None:
    leap("throw", "dia", cwd=diamond)
    mark_passed(diamond, "A")
    leap("throw", "dia", "--ball", "B", cwd=diamond)
    wt = worktree_of(diamond, "B")
    (wt / "src/b_new.py").write_text("too early\n")
    r = leap("ball", "check", "dia", "B", cwd=wt)
    assert r.code == 1
    assert "src/b_new.py: changed outside any round: expected absent, actual " in r.err


def test_symlink_escape_is_refused(diamond: Path, tmp_path: Path) -> None:
    leap("throw", "dia", cwd=diamond)
    wt = worktree_of(diamond, "A")
    outside = tmp_path / "secret.txt"
    outside.write_text("secret\n")
    (wt / "src/a.py").unlink()
    os.symlink(outside, wt / "src/a.py")
    r = leap("ball", "check", "dia", "A", cwd=diamond)
    assert r.code == 1
    assert "src/a.py: 'src/a.py' leads outside the repository through a symlink" in r.err


def test_missing_tool_and_missing_file_are_holds(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"x.py": "x\n", "y.py": "y\n"})
    leap("init", cwd=repo)
    (tmp_path / "s.yaml").write_text(
        "slice: s\nspine: integrator\nballs:\n"
        "  - {id: x, goal: g, spec: s, scope: [x.py, tests/x.sh], rollback: restore-scope,\n"
        "     proof: 'no-such-tool-leap --check tests/needed.py',\n"
        "     tests: 'test ! -e tests/x.sh || sh tests/x.sh'}\n"
        "  - {id: y, goal: g, spec: s, scope: [y.py], proof: 'true', tests: 'true',\n"
        "     rollback: restore-scope}\n")
    assert leap("slice", "cut", str(tmp_path / "s.yaml"), cwd=repo).code == 0
    # T7.1: the red was recorded where the tool was installed (it ran, and failed)
    tool = tmp_path / "bin" / "no-such-tool-leap"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\nexit 1\n")
    tool.chmod(0o755)
    red = commit_files(repo, git("rev-parse", "HEAD", cwd=repo), {"tests/x.sh": "exit 1\n"},
                       "red: x")
    path = f"{tool.parent}{os.pathsep}{os.environ['PATH']}"
    assert leap("red", "s", "x", red, cwd=repo, env={"PATH": path}).code == 0
    assert leap("throw", "s", cwd=repo).code == 0
    r = leap("ball", "check", "s", "x", cwd=repo)
    assert r.code == 3, r
    assert "no-such-tool-leap: the proof needs this tool, which is not installed [L2]" in r.err
    assert "tests/needed.py: the proof needs this file, which does not exist" in r.err


def test_check_outcome_kinds_directly(diamond: Path) -> None:
    from leapgit.ledger import query
    from leapgit.ledger.store import Ledger
    from leapgit.worktrees.check import check_ball

    leap("throw", "dia", cwd=diamond)
    with Ledger(diamond / ".git") as ledger:
        view = ledger.require()
        ball: BallRecord = query.load_ball(view, "dia", "A")
        thrown = query.throw(view, "dia", "A", 1)
    assert thrown is not None
    wt = worktree_of(diamond, "A")
    assert check_ball(diamond / ".git", wt, ball, thrown).outcome == 1
    (wt / "src/a.py").write_text("edited\n")
    result = check_ball(diamond / ".git", wt, ball, thrown)
    assert result.outcome == -1 and "src/a.py" in result.evidence()


def test_the_base_of_a_red_on_a_missing_spine_is_refused_as_the_throw_refuses_it(
        diamond: Path) -> None:
    """`leap ball base` names the spine's tip for a ball not thrown yet; with no spine
    branch here it says so, as `leap throw` does, rather than name the slice's base (where a
    red would stand behind the throw's start: blind review)."""
    git("branch", "-m", "main", "elsewhere", cwd=diamond)
    based = leap("ball", "base", "dia", "A", cwd=diamond)
    thrown = leap("throw", "dia", "--ball", "A", cwd=diamond)
    for r in (based, thrown):
        assert r.code == 2 and "spine branch 'main' does not exist" in r.err, r
