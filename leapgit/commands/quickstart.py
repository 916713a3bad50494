"""`leap quickstart`: a throwaway repository and the whole protocol, end to end, with no
network and no model: cut, red, throw to a scripted builder, score with scripted jurors on
127.0.0.1, merge onto the spine of a local bare remote whose server hook judges the push,
audit, and the `git log` that shows it. Each step prints the command a user would type and
what it printed."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from leapgit import git
from leapgit.commands import report
from leapgit.commands.init import init
from leapgit.commands.log import log
from leapgit.commands.quickstart_flow import protocol_steps
from leapgit.commands.quickstart_sample import SAMPLE_FILES, SAMPLE_SLICE
from leapgit.commands.slice import check, cut
from leapgit.commands.status import status
from leapgit.errors import UsageError
from leapgit.ledger.workspace import require_folder
from leapgit.tribunal.worktree import once_a_tree

Echo = Callable[[str], None]


class _EchoStream:
    """Progress lines through the quickstart's echo, indented like every other step."""

    def __init__(self, echo: Echo) -> None:
        self._echo = echo

    def write(self, text: str) -> int:
        for line in text.splitlines():
            self._echo(f"  {line}")
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def build_sample_repo(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    git.run(["init", "-q", "-b", "main", str(root)], root)
    for name, text in SAMPLE_FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git.run(["add", "-A"], root)
    git.run(["-c", "user.name=Demo User", "-c", "user.email=demo@example.invalid",
             "commit", "-q", "-m", "calc: a tiny calculator"], root)


def _step(echo: Echo, title: str, command: str, lines: list[str]) -> None:
    echo("")
    echo(f"== {title}")
    echo(f"$ {command}")
    for line in lines:
        echo(f"  {line}")


@once_a_tree
def quickstart(directory: Path | None, echo: Echo = print) -> Path:
    root = (directory or Path(tempfile.mkdtemp(prefix="leap-quickstart-"))) / "calc"
    hint = "pick another --dir, or leave it out for a temporary folder"
    require_folder(root, field="--dir", hint=hint)
    if root.exists() and any(root.iterdir()):
        raise UsageError(f"{root} already exists and is not empty", hint=hint)
    echo(f"leapgit quickstart: a throwaway repository in {root}")
    echo("(no network, no model: everything runs here, in plain git; the jurors are a "
         "scripted DEMO server on 127.0.0.1, their verdicts canned: this is not a review)")
    build_sample_repo(root)
    os.environ.setdefault("GIT_COMMITTER_NAME", "Demo User")
    os.environ.setdefault("GIT_COMMITTER_EMAIL", "demo@example.invalid")
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
    protocol_steps(root, echo, _step, _EchoStream(echo))
    _step(echo, "the ledger's history", "leap log -n 6", report.log_lines(log(6, start=root)))
    echo("")
    echo(f"Done. The repository is in {root}; try `cd {root} && {_leap()} audit`.")
    return root


def _leap() -> str:
    """`leap` as the shell finds it, when that is this one; else this one by its path (a
    newcomer's hunt: installed into a venv not on PATH, `leap audit` was not found)."""
    here = Path(sys.executable).parent / "leap"
    found = shutil.which("leap")
    if not here.exists() or (found is not None and Path(found).resolve() == here.resolve()):
        return "leap"
    return shlex.quote(str(here))
