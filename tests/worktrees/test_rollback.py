"""Rolling back a refused ball (L6): only its scope files, only in its own worktree, whatever
the builder left where a scope file was."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.reds import red_of, shell_red
from tests.scoring.world import commit_files
from tests.support import git, leap, make_repo
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
        f"  - {{id: b, goal: g, spec: s, scope: [src/f.py, tests/b.sh], proof: sh tests/b.sh,"
        f" tests: 'test ! -e tests/b.sh || sh tests/b.sh', rollback: '{sys.executable} {probe}'}}\n"
        "  - {id: c, goal: g, spec: s, scope: [src/g.py], proof: 'true', tests: 'true',"
        " rollback: restore-scope}\n")
    assert leap("slice", "cut", str(tmp_path / "two.yaml"), cwd=repo).code == 0
    red_of(repo, "two", "b", shell_red("b", "src/f.py", "X = 2"))  # T7.1: red first
    assert leap("throw", "two", "--ball", "b", cwd=repo).code == 0
    wt = repo.parent / "repo.leap-worktrees" / "two" / "b"
    r = leap("round", "two", "b", "--outcome", "-1", "--evidence", "wrong", cwd=wt)
    assert r.code == 1, r
    assert (tmp_path / "probe.txt").read_text() == "free; ledger tip: round 1 of two/b: refuse"


RED_DRAFT = """\
slice: redfirst
spine: integrator
balls:
  - {id: A, goal: a is two, spec: make A two, scope: [src/a.py, tests/test_a.py],
     proof: "python -c 'import sys; sys.path[:0] = [\\"src\\"]; import a; assert a.A == 2'",
     tests: "test ! -e tests/test_a.py ||
       PYTHONPATH=src:tests python -c 'import test_a as t; t.test_a()'",
     rollback: restore-scope}
  - {id: B, goal: b, spec: change b, scope: [src/b.py], proof: "true", tests: "true",
     rollback: restore-scope}
"""
RED_TEST = "from a import A\n\n\ndef test_a():\n    assert A == 2\n"


@pytest.mark.parametrize("builder_does", ["says -1", "weakens the red test"])
def test_a_refused_round_rolls_the_scope_back_to_the_red_commit_not_the_base(
        tmp_path: Path, builder: Callable[..., str], builder_does: str) -> None:
    """L6, T7.1: closing a -1 round restores the ball's scope to its red commit: the frozen
    failing test (absent at the base) stays, byte for byte; the builder's change is undone.
    A rollback to the base would delete the test."""
    repo = make_repo(tmp_path / "repo", {"src/a.py": "A = 1\n", "src/b.py": "B = 1\n",
                                           "README.md": "# demo\n"})
    assert leap("init", cwd=repo).code == 0
    (tmp_path / "red.yaml").write_text(RED_DRAFT)
    assert leap("slice", "cut", str(tmp_path / "red.yaml"), cwd=repo).code == 0
    base = git("rev-parse", "HEAD", cwd=repo)
    red = commit_files(repo, base, {"tests/test_a.py": RED_TEST}, "red: A")
    recorded = leap("red", "redfirst", "A", red, cwd=repo)
    assert recorded.code == 0, recorded
    weaken = 'pathlib.Path("tests/test_a.py").write_text("def test_a():\\n    pass\\n")\n' \
        if builder_does == "weakens the red test" else ""
    said = "1" if weaken else "-1"
    set_config(repo, builder=builder(
        'pathlib.Path("src/a.py").write_text("A = 3\\n")\n' + weaken +
        f'pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: {said}\\n'
        'evidence: tried\\n")\n'))
    r = leap("throw", "redfirst", "--ball", "A", "--run", cwd=repo)
    assert r.code == 1 and "Traceback" not in r.err, r
    wt = repo.parent / "repo.leap-worktrees" / "redfirst" / "A"
    if weaken:  # a breach (T7.1): the refused commit left the branch, back at red (issue 14)
        assert git("rev-parse", "HEAD", cwd=wt) == red
        assert git("rev-parse", "refs/leap/evidence/redfirst/A/1-1^", cwd=repo) == red
    else:  # the builder's own -1 stays on the branch, which started at red
        assert git("rev-parse", "HEAD~1", cwd=wt) == red
    assert (wt / "tests/test_a.py").read_text() == RED_TEST  # the red bytes, not the base's
    assert (wt / "src/a.py").read_text() == "A = 1\n"  # the builder's change undone
    assert "rolled back (restore-scope)" in r.out, r
