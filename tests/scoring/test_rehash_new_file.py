"""Issue 18, gaps in the tests (L7.4): `leap score` re-hashes the candidate after each test
command and refuses a change; a test that creates a new file inside the ball's scope (a
file the candidate never held, untracked in the score's worktree) changes the candidate as
much as an edit does. A real project: a real builder process, a real red, real commands."""

from __future__ import annotations

import shlex
import sys
import textwrap
from pathlib import Path

from leapgit.records import yamlio
from tests.scoring.world import commit_files, config
from tests.support import git, leap, make_repo

SLICE = "gen"
PY = shlex.quote(sys.executable)
FILES = {
    "pkg/__init__.py": "",
    "pkg/calc.py": "def add(a, b):\n    return a + b\n",
    "tests/__init__.py": "",
    # the regression suite the ball's `tests` run: green at the base (issue 14 item 3: a
    # `tests` command that needs the red test fails there, a harness error, never a round)
    "tests/test_add.py": "import unittest\n\nfrom pkg import calc\n\n\n"
                         "class T(unittest.TestCase):\n    def test_add(self):\n"
                         "        self.assertEqual(calc.add(1, 2), 3)\n",
    "README.md": "# gen\n",
}
SUB_TEST = textwrap.dedent("""\
    import unittest

    from pkg import calc


    class T(unittest.TestCase):
        def test_sub(self):
            self.assertEqual(calc.sub(3, 1), 2)
    """)
BUILDER = textwrap.dedent("""\
    import os, pathlib
    pathlib.Path("pkg/calc.py").write_text(
        "def add(a, b):\\n    return a + b\\n\\n\\ndef sub(a, b):\\n    return a - b\\n")
    pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 1\\nevidence: wrote sub\\n")
    """)
# The suite passes, and leaves a file behind inside the scope: pkg/generated.py.
# The suite is discovered (`unittest` with no name): green at the base, and it runs the red
# test once there is one (`leap red` refuses tests that never run it, T7).
WRITES = (f"{PY} -c \"import pathlib; pathlib.Path('pkg/generated.py').write_text('X = 1')\""
          f" && {PY} -m unittest -q")


def _project(root: Path, tests: str) -> Path:
    repo = make_repo(root / "repo", FILES)
    assert leap("init", cwd=repo).code == 0
    (root / "builder.py").write_text(BUILDER)
    (repo / ".leap" / "config.yaml").write_bytes(
        config("http://127.0.0.1:9/v1", f"{PY} {root / 'builder.py'}"))
    (repo / ".git" / "info" / "exclude").write_text(".leap/\n")

    def ball(ball_id: str, scope: list[str], test: str) -> dict[str, object]:
        return {"id": ball_id, "goal": f"{ball_id} works", "spec": f"make {ball_id}",
                "scope": scope, "proof": f"{PY} -m unittest -q {test}", "tests": tests,
                "rollback": "restore-scope"}

    draft = {"slice": SLICE, "spine": "integrator", "balls": [
        ball("sub", ["pkg/calc.py", "pkg/generated.py", "tests/test_sub.py"], "tests.test_sub"),
        ball("doc", ["README.md", "tests/test_doc.py"], "tests.test_doc")]}
    (root / "slice.yaml").write_bytes(yamlio.dumps(draft))
    cut = leap("slice", "cut", str(root / "slice.yaml"), cwd=repo)
    assert cut.code == 0, cut
    red = commit_files(repo, git("rev-parse", "main", cwd=repo),
                       {"tests/test_sub.py": SUB_TEST}, "red: sub")
    recorded = leap("red", SLICE, "sub", red, cwd=repo)
    assert recorded.code == 0, recorded
    thrown = leap("throw", SLICE, "--ball", "sub", "--run", cwd=repo)
    assert thrown.code in (0, 3) and "sub: 1 round(s)" in thrown.out, thrown
    return repo


def _score(repo: Path) -> tuple[int, dict[str, object], str]:
    res = leap("score", SLICE, "sub", cwd=repo, timeout=300)
    path = f"slices/{SLICE}/balls/sub/scores/1.yaml"
    shown = git("show", f"leap/ledger:{path}", cwd=repo, check=False)
    return res.code, yamlio.loads(shown.encode(), path) if shown else {}, res.out + res.err


def test_a_test_that_creates_a_file_in_scope_changes_the_candidate(tmp_path: Path) -> None:
    repo = _project(tmp_path, WRITES)
    code, data, out = _score(repo)
    assert code == 1, out
    assert data["outcome"] == -1 and data["rule"] == "L7.4", data
    assert "changed bytes of the candidate: pkg/generated.py" in str(data["reason"]), data


def test_a_file_created_outside_the_scope_is_no_change_of_the_candidate(tmp_path: Path
                                                                         ) -> None:
    """The other direction: a cache file the suite leaves outside the scope is none of the
    candidate's bytes; the tests step passes and scoring goes on to the tribunal."""
    outside = WRITES.replace("pkg/generated.py", "pkg/cache.txt")
    repo = _project(tmp_path, outside)
    _code, data, out = _score(repo)
    steps = {s["step"]: s for s in data["steps"]}  # type: ignore[attr-defined]
    assert steps["tests"]["result"] == "ok", out
    assert "the candidate re-hashed unchanged" in steps["tests"]["detail"], steps
    assert "tribunal" in steps and data.get("rule") != "L7.4", data
