"""`leap quickstart`: a throwaway repository and the whole flow that exists, end to end,
with no network and no model. Each step prints the command a user would type and what it
printed."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable

from leapgit import git, report
from leapgit.commands.init import init
from leapgit.commands.log import log
from leapgit.commands.slice import check, cut
from leapgit.commands.status import status

Echo = Callable[[str], None]

SAMPLE_FILES = {
    "README.md": "# calc\n\nA tiny calculator, the quickstart's sample project.\n",
    "calc/__init__.py": "",
    "calc/lexer.py": (
        "def tokenize(text):\n"
        "    return text.split()\n"
    ),
    "calc/parser.py": (
        "from calc.lexer import tokenize\n\n\n"
        "def parse(text):\n"
        "    return [int(t) if t.isdigit() else t for t in tokenize(text)]\n"
    ),
    "tests/test_lexer.py": (
        "from calc.lexer import tokenize\n\n\n"
        "def test_tokenize():\n"
        "    assert tokenize('1 + 2') == ['1', '+', '2']\n"
    ),
}

SAMPLE_SLICE = """\
slice: calc-positions
spine: integrator
description: tokens carry their column, and the parser reports errors with it
balls:
  - id: lexer
    goal: every token carries its column
    spec: |
      tokenize(text) returns (text, column) pairs; columns start at 1.
    scope:
      - calc/lexer.py
      - tests/test_lexer.py
    proof: python -m pytest -q tests/test_lexer.py
    rollback: restore-scope
  - id: parser
    goal: a bad token is reported with its column
    spec: |
      parse(text) raises ValueError("column N: ...") on a token that is neither a number
      nor an operator.
    scope:
      - calc/parser.py
      - {path: tests/test_parser.py}
    proof: python -m pytest -q tests/test_parser.py
    rollback: restore-scope
    depends_on: [lexer]
  - id: docs
    goal: the README shows an error message with a column
    spec: Add a short "Errors" section to README.md.
    scope: [README.md]
    proof: grep -q "column" README.md
    rollback: restore-scope
"""


def build_sample_repo(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    git.run(["init", "-q", "-b", "main", str(root)], root)
    for name, text in SAMPLE_FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git.run(["add", "-A"], root)
    git.run(["-c", "user.name=Quickstart", "-c", "user.email=quickstart@example.invalid",
             "commit", "-q", "-m", "calc: a tiny calculator"], root)


def _step(echo: Echo, title: str, command: str, lines: list[str]) -> None:
    echo("")
    echo(f"== {title}")
    echo(f"$ {command}")
    for line in lines:
        echo(f"  {line}")


def _server_step(echo: Echo, root: Path) -> None:
    """A local bare remote with the server hook, and one push it refuses."""
    from leapgit.hookimpl.install import install

    remote = root.parent / "calc-remote.git"
    git.run(["init", "-q", "--bare", "-b", "main", str(remote)], root.parent)
    install(remote, server=True)
    git.run(["push", "-q", str(remote), "main", "leap/ledger"], root)
    (root / "README.md").write_text("# calc\n\nEdited straight on the spine.\n", "utf-8")
    git.run(["-c", "user.name=Quickstart", "-c", "user.email=quickstart@example.invalid",
             "commit", "-q", "-am", "a hotfix straight on main"], root)
    proc = git.run(["push", "--no-verify", str(remote), "main"], root, check=False)
    lines = [ln for ln in proc.stderr.decode(errors="replace").splitlines()
             if ln.startswith("remote: leap")]
    _step(echo, "the server's pre-receive refuses a commit that skipped the spine's rules",
          "git push --no-verify ../calc-remote.git main", [ln.rstrip() for ln in lines])


def quickstart(directory: Path | None, echo: Echo = print) -> Path:
    root = (directory or Path(tempfile.mkdtemp(prefix="leap-quickstart-"))) / "calc"
    if root.exists() and any(root.iterdir()):
        from leapgit.errors import UsageError

        raise UsageError(f"{root} already exists and is not empty",
                         hint="pick another --dir, or leave it out for a temporary folder")
    echo(f"leapgit quickstart: a throwaway repository in {root}")
    echo("(no network, no model: everything runs here, in plain git)")
    build_sample_repo(root)
    os.environ.setdefault("GIT_COMMITTER_NAME", "Quickstart")
    os.environ.setdefault("GIT_COMMITTER_EMAIL", "quickstart@example.invalid")
    _step(echo, "start leapgit in the repository", "leap init", report.init_lines(init(root)))
    draft = root / ".leap" / "slices" / "calc-positions.yaml"
    draft.parent.mkdir(parents=True, exist_ok=True)
    draft.write_text(SAMPLE_SLICE, encoding="utf-8")
    _step(echo, "validate the slice draft (writes nothing)",
          "leap slice check .leap/slices/calc-positions.yaml",
          report.check_lines(check(draft, start=root)))
    _step(echo, "cut it: stamp every scope file's blob id and record the slice",
          "leap slice cut .leap/slices/calc-positions.yaml",
          report.cut_lines(cut(draft, start=root)))
    _step(echo, "the balls, in dependency waves", "leap status",
          report.status_lines(status(start=root)))
    _step(echo, "the ledger's history", "leap log", report.log_lines(log(start=root)))
    _step(echo, "the same, with plain git", "git log --format='%h %s' leap/ledger",
          git.out(["log", "--format=%h %s", "leap/ledger"], root).splitlines())
    _server_step(echo, root)
    echo("")
    echo(f"Done. The repository is in {root}; try `cd {root} && leap status`.")
    return root
