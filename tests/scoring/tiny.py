"""A tiny real Python project for the red and score tests: a package, a green pytest suite,
and a two-ball slice whose proofs and tests are real pytest runs (`python -m pytest`, the
venv's interpreter), so `leap red` and `leap score` judge what pytest really said."""

from __future__ import annotations

import shlex
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from leapgit.records import yamlio
from tests.scoring.world import commit_files, config
from tests.support import Result, git, leap, make_repo

SLICE = "tiny"
PYTEST = f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider"
FILES = {
    "pkg/__init__.py": "",
    "pkg/calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": ("from pkg.calc import add\n\n\n"
                           "def test_add():\n    assert add(1, 2) == 3\n"),
    "README.md": "# tiny\n",
}
# The contract test of `sub`: it imports what exists and fails inside the test, for the
# missing behaviour (an AttributeError while the test runs): a red for the right reason.
SUB_TEST = "from pkg import calc\n\n\ndef test_sub():\n    assert calc.sub(3, 1) == 2\n"
# A red that fails for the wrong reason: pytest cannot even collect it (exit 2), because a
# file the build would generate is missing in a fresh worktree.
GENERATED_TEST = ("from pkg._version import VERSION\nfrom pkg import calc\n\n\n"
                  "def test_sub():\n    assert calc.sub(3, 1) == 2\n")
SUB_DONE = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
UNREACHABLE = "http://127.0.0.1:9/v1"  # a juror that never answers: the tribunal holds
# A builder that writes `sub` and claims a pass (a claim only: `leap score` decides).
BUILDER = textwrap.dedent("""\
    import os, pathlib
    pathlib.Path("pkg/calc.py").write_text({done!r})
    pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 1\\nevidence: wrote sub\\n")
    """).format(done=SUB_DONE)


def ball(ball_id: str, scope: list[str], test: str, **fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"id": ball_id, "goal": f"{ball_id} works", "spec": f"make {ball_id}",
                           "scope": scope, "proof": f"{PYTEST} {test}",
                           "tests": f"{PYTEST} tests", "rollback": "restore-scope"}
    out.update(fields)
    return {k: v for k, v in out.items() if v is not None}


def draft(**sub: Any) -> dict[str, Any]:
    """The slice: ``sub`` (calc.sub, its test) and ``doc`` (the README, its test);
    ``sub``'s fields overridden (None drops one)."""
    return {"slice": SLICE, "spine": "integrator", "balls": [
        ball("sub", ["pkg/calc.py", "tests/test_sub.py"], "tests/test_sub.py", **sub),
        ball("doc", ["README.md", "tests/test_doc.py"], "tests/test_doc.py"),
    ]}


def make_tiny(root: Path, *, juror_url: str = UNREACHABLE, tests_timeout: float = 60,
              slice_draft: Mapping[str, Any] | None = None,
              files: Mapping[str, str] | None = None) -> Path:
    """``root/repo``: the project, leapgit initialised (the builder above, one scripted
    rung at ``juror_url``), the slice cut on main."""
    repo = make_repo(root / "repo", {**FILES, **(files or {})})
    assert leap("init", cwd=repo).code == 0
    (root / "builder.py").write_text(BUILDER)
    (repo / ".leap" / "config.yaml").write_bytes(
        config(juror_url, f"{shlex.quote(sys.executable)} {root / 'builder.py'}",
               tests_timeout))
    (repo / ".git" / "info" / "exclude").write_text(".leap/\n")
    (root / "slice.yaml").write_bytes(yamlio.dumps(dict(slice_draft or draft())))
    cut = leap("slice", "cut", str(root / "slice.yaml"), cwd=repo)
    assert cut.code == 0, cut
    return repo


def served(root: Path, repo: Path) -> Path:
    """A bare remote with the server hook (``root/origin.git``), main and the ledger pushed
    to it: the server judges what the project pushes."""
    bare = root / "origin.git"
    git("init", "-q", "--bare", "-b", "main", str(bare), cwd=root)
    assert leap("hooks", "install", "--server", cwd=bare).code == 0
    git("remote", "add", "origin", str(bare), cwd=repo)
    git("push", "-q", "-u", "origin", "main", "leap/ledger", cwd=repo)
    return bare


def red_commit(repo: Path, files: Mapping[str, str], message: str = "red") -> str:
    """A commit of ``files`` on main's tip, made with plumbing: no checkout moves."""
    return commit_files(repo, git("rev-parse", "main", cwd=repo), files, message)


def red(repo: Path, ball_id: str, files: Mapping[str, str]) -> tuple[str, Result]:
    sha = red_commit(repo, files, f"red: {ball_id}")
    return sha, leap("red", SLICE, ball_id, sha, cwd=repo)


def write_respec(path: Path, **fields: Any) -> Path:
    """A repaired spec of ``sub``: its draft fields, ``fields`` overridden."""
    data = {k: v for k, v in draft(**fields)["balls"][0].items() if k != "id"}
    path.write_bytes(yamlio.dumps(data))
    return path
