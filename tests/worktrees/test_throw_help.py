"""Issue 14 item 11: `leap throw --help` names the builder interface (what the builder gets:
its environment, the handoff file, its working folder; how it reports its receipt) and the
exit codes, and says what is true: a real builder run records what it got, and the help
names every LEAP_ variable of it."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from tests.support import leap
from tests.worktrees.conftest import set_config

Builder = Callable[..., str]

DUMP = """
import json
seen = {k: v for k, v in os.environ.items() if k.startswith("LEAP_")}
pathlib.Path(os.environ["DUMP"]).write_text(json.dumps({"env": seen, "cwd": os.getcwd(),
    "git": sorted(k for k in os.environ if k in ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE")),
    "stdin": os.path.realpath("/proc/self/fd/0")}))
pathlib.Path("src/a.py").write_text("A = 2\\n")
pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 1\\nevidence: wrote it\\n")
"""


def test_throw_help_names_the_builder_interface_it_really_has(
    diamond: Path, builder: Builder, tmp_path: Path
) -> None:
    dump = tmp_path / "dump.json"
    set_config(diamond, builder=builder(DUMP))
    run = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond,
               env={"DUMP": str(dump), "GIT_INDEX_FILE": "/nonexistent/index"})
    assert run.code == 0, run
    got = json.loads(dump.read_text())
    help_text = leap("throw", "--help", cwd=diamond)
    assert help_text.code == 0, help_text
    text = " ".join(help_text.out.split())  # click wraps; read it as one line
    # the names leap gives the builder: not those it merely inherits (CI exports its own
    # LEAP_REQUIRE_WEBSERVER to every process the suite starts)
    given = {k for k, v in got["env"].items() if os.environ.get(k) != v}
    assert {"LEAP_WORKTREE", "LEAP_HANDOFF", "LEAP_REPORT"} <= given, given
    for name in given:
        assert name in text, (name, text)
    assert Path(got["cwd"]) == Path(got["env"]["LEAP_WORKTREE"])  # cwd: the ball's worktree
    assert "cwd: the ball's worktree" in text
    assert got["git"] == [] and "git's location variables (GIT_DIR, GIT_INDEX_FILE" in text
    assert got["stdin"] == "/dev/null" and "stdin /dev/null" in text
    handoff = Path(got["env"]["LEAP_HANDOFF"]).read_text()
    for field in ("goal:", "spec:", "scope:", "proof:", "previous_receipt:", "report:"):
        assert field in handoff
    assert "writes YAML to $LEAP_REPORT: `outcome: -1|0|1` and `evidence: TEXT`" in text
    assert "Leap-Outcome and Leap-Evidence trailers" in text
    assert "exit 0 without a report is a claim of 1" in text
    exits = text.split("Exit codes:", 1)[1]
    for code in ("0 ", "1 ", "2 ", "3 ", "130 "):
        assert f" {code}" in exits, (code, exits)
