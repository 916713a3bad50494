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


def test_a_declared_rollback_runs_after_the_receipt_without_the_ledger_lock(
        tmp_path: Path) -> None:
    import sys

    from tests.support import make_repo

    repo = make_repo(tmp_path / "repo", {"src/f.py": "X = 1\n", "src/g.py": "G = 1\n"})
    assert leap("init", cwd=repo).code == 0
    probe = tmp_path / "probe.py"  # takes the ledger lock at once, or says it could not
    probe.write_text(
        "import pathlib, subprocess\nfrom filelock import FileLock, Timeout\n"
        f"out = pathlib.Path('{tmp_path}', 'probe.txt')\n"
        "log = subprocess.run(['git', 'log', '-1', '--format=%s', 'leap/ledger'],\n"
        "                     capture_output=True, text=True).stdout.strip()\n"
        "try:\n"
        f"    with FileLock('{repo}/.git/leap-ledger.lock', timeout=0):\n"
        "        out.write_text('free; ledger tip: ' + log)\n"
        "except Timeout:\n"
        "    out.write_text('held')\n")
    (tmp_path / "two.yaml").write_text(
        "slice: two\nspine: integrator\nballs:\n"
        f"  - {{id: b, goal: g, spec: s, scope: [src/f.py], proof: 'true',"
        f" rollback: '{sys.executable} {probe}'}}\n"
        "  - {id: c, goal: g, spec: s, scope: [src/g.py], proof: 'true',"
        " rollback: restore-scope}\n")
    assert leap("slice", "cut", str(tmp_path / "two.yaml"), cwd=repo).code == 0
    assert leap("throw", "two", "--ball", "b", cwd=repo).code == 0
    wt = repo.parent / "repo.leap-worktrees" / "two" / "b"
    r = leap("round", "two", "b", "--outcome", "-1", "--evidence", "wrong", cwd=wt)
    assert r.code == 1, r
    assert (tmp_path / "probe.txt").read_text() == "free; ledger tip: round 1 of two/b: refuse"
