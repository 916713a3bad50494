"""Rolling back a refused ball (L6): only its scope files, only in its own worktree, whatever
the builder left where a scope file was."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.support import leap
from tests.worktrees.conftest import set_config, worktree_of


def test_a_scope_file_turned_into_a_folder_is_rolled_back_and_pruned(
        diamond: Path, builder: Callable[..., str], tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("not the ball's\n")
    set_config(diamond, builder=builder(f"""
        pathlib.Path("src/a.py").unlink()
        pathlib.Path("src/a.py").mkdir()
        pathlib.Path("src/a.py/inner.py").write_text("x\\n")
        os.symlink("{outside}", "src/a.py/link")  # never followed by the rollback
        pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 1\\nevidence: done\\n")
    """))
    r = leap("throw", "dia", "--run", cwd=diamond)
    assert r.code == 1 and "Traceback" not in r.err, r
    assert "scope breach (L4, L9): src/a.py/inner.py" in r.out
    wt = worktree_of(diamond, "A")
    assert (wt / "src/a.py").is_file() and (wt / "src/a.py").read_text() == "A = 1\n"
    assert (outside / "keep.txt").read_text() == "not the ball's\n"
    r = leap("worktree", "prune", cwd=diamond)
    assert r.code == 0 and "dia/A: removed: refused (-1) and rolled back" in r.out, r


def test_prune_reads_a_scope_file_that_became_a_folder(diamond: Path) -> None:
    leap("throw", "dia", "--ball", "A", cwd=diamond)
    wt = worktree_of(diamond, "A")
    r = leap("round", "dia", "A", "--outcome", "-1", "--evidence", "gave up", cwd=wt)
    assert r.code == 1, r
    (wt / "src/a.py").unlink()
    (wt / "src/a.py").mkdir()  # after the rollback: not rolled back any more
    (wt / "src/a.py/inner.py").write_text("x\n")
    r = leap("worktree", "prune", cwd=diamond)
    assert r.code == 0, r
    assert "dia/A: kept: refused (-1) but its scope is not rolled back yet" in r.out
