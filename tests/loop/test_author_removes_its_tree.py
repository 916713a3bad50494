"""A test author (red.command) that removes the throwaway tree it was given holds its ball
(exit 3, T7.1) as any author that made no commit does, naming what it did; nothing is left
behind. Before: `leap run` stopped with exit 2, bad input, on "git rev-parse HEAD cannot
run in /tmp/leap-red-author-.../tree-...: no such folder", with no rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.loop import workers_world as ww
from tests.support import git


@pytest.mark.parametrize("removes", ["shutil.rmtree(os.getcwd())", "os.remove('.git')"])
def test_an_author_that_removes_its_tree_holds_its_ball(tmp_path: Path, removes: str) -> None:
    w = ww.build(tmp_path, str, "http://127.0.0.1:9/v1", 2)
    (tmp_path / "author.py").write_text(f"import os, shutil\n{removes}\n")
    worktrees = git("worktree", "list", "--porcelain", cwd=w.work)
    r = w.leap("run", ww.S, "--max-minutes", "1", timeout=120)
    assert r.code == 3, r
    assert "the test author removed its worktree" in r.out + r.err, r
    assert "[T7.1]" in r.out + r.err and "no such folder" not in r.out + r.err, r
    assert git("worktree", "list", "--porcelain", cwd=w.work) == worktrees
