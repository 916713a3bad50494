"""Slice drafts for tests: a valid baseline and the repository it is valid against."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

from leapgit.records import yamlio
from tests.support import commit_all, git, make_repo

FILES = {
    "src/a.py": "A = 1\n",
    "src/b.py": "B = 2\n",
    "src/c.py": "C = 3\n",
    "tests/test_a.py": "def test_a():\n    assert True\n",
    "README.md": "# sample\n",
}


def draft_repo(path: Path) -> Path:
    """The sample project plus committed symlinks the hostile drafts aim at."""
    root = make_repo(path, FILES)
    os.symlink("/etc/passwd", root / "passwd_link")
    os.symlink("..", root / "up_link")
    os.symlink("src/a.py", root / "alias_a.py")
    os.symlink("src", root / "src_link")
    os.symlink("lb", root / "la")  # a loop
    os.symlink("la", root / "lb")
    os.symlink(".git", root / "g")  # into git's own files
    commit_all(root, "symlinks")
    # a submodule entry (gitlink) in the tree
    git("update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},vendor/sub", cwd=root)
    git("commit", "-q", "-m", "submodule", cwd=root)
    # untracked: only the work tree has these
    os.symlink("/etc", root / "wt_etc")
    os.symlink("/etc/passwd", root / "wt_passwd")
    os.symlink(".git/config", root / "wt_gitcfg")
    (root / "build" / "out").mkdir(parents=True)
    (root / "build" / "out" / "x.o").write_text("obj")
    return root


def base_draft() -> dict[str, Any]:
    return {
        "slice": "s1",
        "spine": "integrator",
        "balls": [
            {"id": "a", "goal": "g", "spec": "s", "scope": ["src/a.py", "tests/test_a.py"],
             "proof": "true", "tests": "true", "rollback": "restore-scope"},
            {"id": "b", "goal": "g", "spec": "s", "scope": ["src/b.py", "src/new.py"],
             "proof": "true", "tests": "true", "rollback": "restore-scope",
             "depends_on": ["a"]},
        ],
    }


def mutated(**changes: Any) -> dict[str, Any]:
    d = copy.deepcopy(base_draft())
    for key, value in changes.items():
        d[key] = value
    return d


def with_ball(index: int, **changes: Any) -> dict[str, Any]:
    d = base_draft()
    for key, value in changes.items():
        if value is DELETE:
            del d["balls"][index][key]
        else:
            d["balls"][index][key] = value
    return d


DELETE = object()


def write(path: Path, draft: dict[str, Any] | str | bytes) -> Path:
    if isinstance(draft, dict):
        path.write_bytes(yamlio.dumps(draft))
    elif isinstance(draft, str):
        path.write_text(draft, encoding="utf-8")
    else:
        path.write_bytes(draft)
    return path
