from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from leapgit.commands.init import init
from leapgit.records import yamlio
from leapgit.tribunal.convene import Convened, Request, convene
from leapgit.tribunal.lenses import TIERS
from tests.support import commit_all, git, make_repo, write_files
from tests.tribunal.jurors import COMMAND_JUROR

BUILDER = "model=builder-model-7,family=buildfam,session=sess-0042"
BASE_FILES = {
    "src/calc.py": "def add(a, b):\n    return a + b\n",
    "src/other.py": "X = 1\n",
    "tests/test_other.py": "def test_x():\n    assert True\n",
    "README.md": "# calc\n",
}
HEAD_FILES = {
    "src/calc.py": "def add(a, b):\n    return a + b\n\n\ndef div(a, b):\n    return a / b\n",
    "tests/test_calc.py": (
        "from src.calc import div\n\n\ndef test_div():\n    assert div(4, 2) == 2\n"),
}


@dataclass
class Repo:
    root: Path
    base: str
    head: str

    def config(self, rungs: list[dict[str, Any]], **tribunal: Any) -> None:
        data = {"version": 1, "spine": "main", "ledger_ref": "refs/heads/leap/ledger",
                "tribunal": {"rungs": rungs, "timeout": 5, **tribunal}}
        (self.root / ".leap" / "config.yaml").write_bytes(yamlio.dumps(data))

    def convene(self, **overrides: Any) -> Convened:
        fields: dict[str, Any] = dict(intent="add integer division", base=self.base,
                                      head=self.head, criteria="div divides; tests pass",
                                      builder=BUILDER, out=self.root.parent / "out")
        fields.update(overrides)
        lines: list[str] = []
        result = convene(Request(**fields), start=self.root, echo=lines.append)
        self.lines = lines
        return result


def rung(rung_id: str, provider: str, url: str = "", **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"id": rung_id, "provider": provider, "family": "jurorfam",
                           "tiers": list(TIERS), "context_tokens": 100000, "cost": 1}
    if provider == "command":
        out["command"] = extra.pop("command")
    else:
        out.update(model=f"{rung_id}-model", endpoint=url)
    out.update(extra)
    return out


def command_rung(tmp: Path, mode: str, rung_id: str = "cli", **extra: Any) -> dict[str, Any]:
    script = tmp / "juror.py"
    script.write_text(COMMAND_JUROR)
    return rung(rung_id, "command", command=[sys.executable, str(script), mode], **extra)


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    root = make_repo(tmp_path / "repo", BASE_FILES)
    base = git("rev-parse", "HEAD", cwd=root)
    write_files(root, HEAD_FILES)
    head = commit_all(root, "add div\n\nCo-Authored-By: Helper Bot <helper@bots.invalid>")
    init(root)
    (root / ".git" / "info" / "exclude").write_text(".leap/\n")  # config stays untracked
    return Repo(root, base, head)
