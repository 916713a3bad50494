"""Issue 14 item 11: the source check (L7.1) reads the consumers of a touched file in a src
layout too: `src/pkg/mod.py` is imported as `pkg.mod` (and `from pkg import mod`), never as
`src.pkg.mod`. A real src-layout project, the real check."""

from __future__ import annotations

from pathlib import Path

from leapgit.git import blob_at
from leapgit.ledger import query
from leapgit.ledger.store import Ledger
from leapgit.records.scoring import FileBlob, RedRecord, RunEvidence
from leapgit.scoring.source import check_source, consumers
from tests.scoring.world import commit_files
from tests.support import git, leap, make_repo

FILES = {
    "pyproject.toml": "[project]\nname = \"pkg\"\nversion = \"0\"\n",
    "src/pkg/__init__.py": "",
    "src/pkg/mod.py": "def f():\n    return 1\n",
    "src/pkg/cli.py": "from pkg import mod\n\nprint(mod.f())\n",
    "src/pkg/api.py": "import pkg.mod\n",
    "src/pkg/deep.py": "from pkg.mod import f\n",
    "src/pkg/more.py": "from pkg import (\n    cli,\n)\nfrom pkg import api, mod as m\n",
    "src/pkg/modx.py": "import pkg.modx_helper\n",  # a longer name is no consumer
    "src/pkg/other.py": "from pkg import modx\n",
    "tests/test_mod.py": "from pkg.mod import f\n\n\ndef test_f():\n    assert f() == 2\n",
}
DRAFT = """\
slice: s1
spine: integrator
balls:
  - {id: A, goal: f is two, spec: make f return two, scope: [src/pkg/mod.py, tests/test_mod.py],
     proof: "true", tests: "true", rollback: restore-scope}
  - {id: B, goal: b, spec: b, scope: [src/pkg/other.py], proof: "true", tests: "true",
     rollback: restore-scope}
"""


def test_consumers_of_a_src_layout_module_are_found(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    head = git("rev-parse", "HEAD", cwd=repo)
    assert consumers(repo, head, ["src/pkg/mod.py"]) == [
        "src/pkg/api.py", "src/pkg/cli.py", "src/pkg/deep.py", "src/pkg/more.py",
        "tests/test_mod.py"]


def test_the_source_check_records_the_src_layout_consumers(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {k: v for k, v in FILES.items()
                                         if k != "tests/test_mod.py"})
    assert leap("init", cwd=repo).code == 0
    (tmp_path / "d.yaml").write_text(DRAFT)
    assert leap("slice", "cut", str(tmp_path / "d.yaml"), cwd=repo).code == 0
    base = git("rev-parse", "HEAD", cwd=repo)
    red_commit = commit_files(repo, base, {"tests/test_mod.py": FILES["tests/test_mod.py"]},
                              "red: A")
    frozen = FileBlob("tests/test_mod.py", blob_at(repo, red_commit, "tests/test_mod.py"))
    red = RedRecord("s1", "A", 1, red_commit, base, (frozen,),
                    RunEvidence("red", "true", 1), "2024-01-01T00:00:00Z")
    with Ledger(repo / ".git") as ledger:
        ball = query.load_ball(ledger.require(), "s1", "A")
    built = commit_files(repo, red_commit, {"src/pkg/mod.py": "def f():\n    return 2\n"},
                         "f is two")
    found = check_source(repo, base, built, ball, red)
    assert found.step.result == "ok", found.step
    assert [c.path for c in found.consumers] == [
        "src/pkg/api.py", "src/pkg/cli.py", "src/pkg/deep.py", "src/pkg/more.py"]
    assert "4 consumer(s) read" in found.step.detail
