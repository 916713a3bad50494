"""`leap quickstart`: a throwaway repository and the whole flow that exists, end to end,
with no network and no model. Each step prints the command a user would type and what it
printed."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

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


# The quickstart's builder: a real process that edits files in its worktree. The lexer ball
# is built honestly; the docs ball also "helpfully" edits the parser, a breach (L9).
SAMPLE_BUILDER = """\
import os, pathlib
ball = os.environ["LEAP_BALL"]
print(f"builder: {ball}, round {os.environ['LEAP_ROUND']}, handoff {os.environ['LEAP_HANDOFF']}")
if ball == "lexer":
    pathlib.Path("calc/lexer.py").write_text(
        "def tokenize(text):\\n"
        "    out, col = [], 1\\n"
        "    for word in text.split(' '):\\n"
        "        if word:\\n"
        "            out.append((word, col))\\n"
        "        col += len(word) + 1\\n"
        "    return out\\n")
    evidence = "tokenize returns (text, column) pairs"
elif ball == "docs":
    readme = pathlib.Path("README.md")
    readme.write_text(readme.read_text() + "\\n## Errors\\n\\ncolumn 3: unknown token\\n")
    pathlib.Path("calc/parser.py").write_text("# docs builder was here\\n")  # out of scope
    evidence = "README has an Errors section"
else:
    evidence = "nothing to do"
pathlib.Path(os.environ["LEAP_REPORT"]).write_text(f"outcome: 1\\nevidence: {evidence}\\n")
"""


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


def _throw_step(root: Path, echo: Echo) -> None:
    from leapgit.commands import throw

    script = root.parent / "builder.py"
    script.write_text(SAMPLE_BUILDER, encoding="utf-8")
    config = root / ".leap" / "config.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        '  # command: my-agent --non-interactive --task "$LEAP_HANDOFF"',
        f"  command: {sys.executable} {script}"), encoding="utf-8")
    echo("")
    echo("== throw the ready balls (wave 0) to a scripted builder, each in its own worktree")
    echo("   (builder.command in .leap/config.yaml: a Python script that edits files; "
         "the docs builder also edits calc/parser.py, outside its scope)")
    echo("$ leap throw calc-positions --run --jobs 2")
    thrown = throw.throw("calc-positions", start=root)
    for line in report.throw_lines(thrown.result):
        echo(f"  {line}")
    result = throw.drive_builders(thrown, 2, _EchoStream(echo), live=False)  # type: ignore[arg-type]
    for line in report.run_lines(result):
        echo(f"  {line}")


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


DEMO_CHANGE = {
    "calc/lexer.py": (
        "def tokenize(text):\n"
        "    return [(tok, text.index(tok) + 1) for tok in text.split()]\n"
    ),
    "tests/test_lexer.py": (
        "from calc.lexer import tokenize\n\n\n"
        "def test_tokenize():\n"
        "    assert tokenize('1 + 2') == [('1', 1), ('+', 3), ('2', 5)]\n"
    ),
}
DEMO_RUNGS = """\
tribunal:
  timeout: 10
  rungs:
    - id: scripted
      provider: openai
      model: scripted-demo-juror
      endpoint: {url}
      family: scripted
      tiers: [generalist, operator_safety, deep_state, fast_structural]
      context_tokens: 32000
      cost: 0
"""


def _tribunal_demo(root: Path, echo: Echo) -> None:
    """The tribunal's protocol against a scripted juror server on 127.0.0.1 (no model)."""
    from leapgit.tribunal.convene import Request, convene
    from leapgit.tribunal.demo import scripted_juror
    from leapgit.tribunal.report import outcome_lines

    git.run(["switch", "-q", "-c", "demo-tribunal"], root)
    for name, text in DEMO_CHANGE.items():
        (root / name).write_text(text, encoding="utf-8")
    git.run(["add", *DEMO_CHANGE], root)
    git.run(["-c", "user.name=Demo Builder", "-c", "user.email=builder@example.invalid",
             "commit", "-q", "-m", "lexer: tokens carry their column"], root)
    git.run(["switch", "-q", "main"], root)
    config = root / ".leap" / "config.yaml"
    text = config.read_text(encoding="utf-8").split("tribunal:")[0]
    lines: list[str] = ["(a DEMO of the protocol against scripted jurors on 127.0.0.1: "
                        "their verdicts are canned; this is not a review)"]
    with scripted_juror() as url:
        config.write_text(text + DEMO_RUNGS.format(url=url), encoding="utf-8")
        result = convene(Request(
            intent="tokens carry their column", criteria="tokenize returns (text, column) "
            "pairs, columns start at 1", builder="model=demo-builder,family=demo,session=demo-1",
            base="main", head="demo-tribunal", out=root.parent / "tribunal-demo"),
            start=root, echo=lines.append)
    _step(echo, "convene the blind tribunal on a change (protocol demo, scripted jurors)",
          "leap tribunal convene --base main --head demo-tribunal --intent ... --builder ...",
          lines + outcome_lines(result))


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
    _throw_step(root, echo)
    _step(echo, "where every ball stands: a claim, a refuse, and the balls it blocks",
          "leap status", report.status_lines(status(start=root)))
    docs = "leap/ball/calc-positions/docs"
    _step(echo, "the refused round is a commit on the ball's own branch, receipt as trailers",
          f"git log -1 --format='%h %s%n%(trailers)' {docs}",
          git.out(["log", "-1", "--format=%h %s%n%(trailers)", docs], root).splitlines())
    _step(echo, "the ledger's history", "leap log -n 4", report.log_lines(log(4, start=root)))
    _step(echo, "the same, with plain git", "git log --format='%h %s' leap/ledger",
          git.out(["log", "--format=%h %s", "leap/ledger"], root).splitlines())
    _tribunal_demo(root, echo)
    _server_step(echo, root)
    echo("")
    echo(f"Done. The repository is in {root}; try `cd {root} && leap status`.")
    return root
