"""`leap red` judges the red's commits as `pre-receive` judges them on the ball branch
(``rules.commits.check_commit`` for a red test): a scope path that is a symlink out of the
repository (L2), a merge commit (L9). Before, only the red's paths were checked (L4): such a
red was recorded, the ball thrown on it, and its builder's first round refused (-1) for
the test author's link, or the branch refused by the server, the builder blamed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from leapgit.ledger import history
from leapgit.ledger.store import Ledger
from tests.scoring.tiny import SLICE, SUB_TEST, make_tiny
from tests.support import IDENTITY, git, leap


def _reds(repo: Path) -> int:
    with Ledger(repo / ".git") as ledger:
        view = ledger.require()
        return len(history.reds(view, SLICE, "sub")) if history.has(
            view, SLICE, "sub", "reds") else 0


def _commit(repo: Path, parents: list[str], entries: list[tuple[str, str, bytes]],
            message: str = "red: sub") -> str:
    """A commit on ``parents[0]``'s tree with ``entries`` (mode, path, bytes), by plumbing."""
    index = repo / ".git" / "leap-test.index"
    env = {**os.environ, **IDENTITY, "GIT_INDEX_FILE": str(index)}

    def run(*args: str, data: bytes | None = None) -> str:
        return subprocess.run(["git", *args], cwd=repo, env=env, check=True, input=data,
                              capture_output=True).stdout.decode().strip()

    run("read-tree", parents[0])
    for mode, path, data in entries:
        blob = run("hash-object", "-w", "--stdin", data=data)
        run("update-index", "--add", "--cacheinfo", f"{mode},{blob},{path}")
    tree = run("write-tree")
    index.unlink(missing_ok=True)
    return run("commit-tree", tree, *(a for p in parents for a in ("-p", p)), "-m", message)


def test_a_red_whose_test_is_a_symlink_out_of_the_repository_is_refused(
        tmp_path: Path) -> None:
    repo = make_tiny(tmp_path)
    outside = tmp_path / "outside_test.py"
    outside.write_text(SUB_TEST)  # a red test that fails for the right reason, elsewhere
    base = git("rev-parse", "main", cwd=repo)
    sha = _commit(repo, [base], [("120000", "tests/test_sub.py", str(outside).encode())])
    r = leap("red", SLICE, "sub", sha, cwd=repo)
    assert r.code == 1, r
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("leap: "), r
    assert "tests/test_sub.py" in lines[0] and "[L2]" in lines[0], r
    assert "outside the repository" in lines[0], r
    assert _reds(repo) == 0


def test_a_red_made_of_a_merge_is_refused(tmp_path: Path) -> None:
    repo = make_tiny(tmp_path)
    base = git("rev-parse", "main", cwd=repo)
    side = _commit(repo, [base], [("100644", "tests/test_sub.py", SUB_TEST.encode())],
                   "side")
    merged = _commit(repo, [base, side],
                     [("100644", "tests/test_sub.py", SUB_TEST.encode())])
    r = leap("red", SLICE, "sub", merged, cwd=repo)
    assert r.code == 1, r
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and "merge commit" in lines[0] and "[L9]" in lines[0], r
    assert _reds(repo) == 0
