"""Stand-in programs for the presets' tests (issue 17): an executable named like the real CLI
(``claude``, ``aider``, ``llm``...) on a PATH folder of the test's own, that checks exactly
the argv, stdin and environment its preset produces, then acts its part: a builder writes a
file and its report, a juror prints a verdict for ``$LEAP_LENS``. A mismatch exits 9 and
says what differed on stderr, so a wrong expansion fails the round or the seat."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

_SCRIPT = '''#!{python}
import json, os, pathlib, sys
spec = json.loads(pathlib.Path({spec!r}).read_text())
env = {{k: os.environ.get(k) for k in spec["env"]}}
stdin = sys.stdin.read()
with open(spec["log"], "a") as fh:
    fh.write(json.dumps({{"argv": sys.argv[1:], "stdin": stdin, "env": env,
                         "cwd": os.getcwd()}}) + "\\n")
expected = [a.replace("@HANDOFF@", os.environ.get("LEAP_HANDOFF", "")).replace(
    "@REPORT@", os.environ.get("LEAP_REPORT", "")) for a in spec["argv"]]
wrong = []
if sys.argv[1:] != expected:
    wrong.append(f"argv {{sys.argv[1:]!r}} != {{expected!r}}")
if not stdin.startswith(spec["stdin_starts"]) or (spec["stdin_starts"] == "" and stdin):
    wrong.append(f"stdin starts {{stdin[:60]!r}}, expected {{spec['stdin_starts']!r}}")
for key, value in spec["env"].items():
    if value is not None and env[key] != value:
        wrong.append(f"env {{key}}={{env[key]!r}}, expected {{value!r}}")
for key in spec.get("env_absent", []):
    if key in os.environ:
        wrong.append(f"env {{key}} is set")
if wrong:
    print("stand-in: " + "; ".join(wrong), file=sys.stderr)
    sys.exit(9)
{act}
'''

BUILDER_ACT = '''pathlib.Path("src/a.py").write_text("A = 2\\n")
pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 1\\nevidence: stand-in built it\\n")
'''

JUROR_ACT = '''lens = os.environ["LEAP_LENS"]
print(json.dumps({"verdict": "pass", "findings": [{"severity": "info", "file": "src/calc.py",
    "claim": "div is plain", "evidence": "return a / b"}], "lens": lens}))
'''

# Claude Code's one JSON result object (--output-format json): the verdict in
# structured_output, as --json-schema gives it, beside the text and the usage
CLAUDE_JUROR_ACT = '''lens = os.environ["LEAP_LENS"]
verdict = {"verdict": "pass", "findings": [{"severity": "info", "file": "src/calc.py",
    "claim": "div is plain", "evidence": "return a / b"}], "lens": lens}
print(json.dumps({"type": "result", "subtype": "success", "is_error": False,
    "result": "", "structured_output": verdict, "session_id": "s-1",
    "usage": {"input_tokens": 4, "cache_creation_input_tokens": 1000,
              "cache_read_input_tokens": 196, "output_tokens": 80},
    "total_cost_usd": 0.01}))
'''


def stand_in(folder: Path, program: str, argv: list[str], *, act: str,
             stdin_starts: str = "", env: dict[str, Any] | None = None,
             env_absent: tuple[str, ...] = ()) -> Path:
    """Write ``folder/program``; returns the log it appends each call to (JSON lines).
    In ``argv``, ``@HANDOFF@`` and ``@REPORT@`` stand for the round's handoff and report."""
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / f"{program}.calls.jsonl"
    spec = folder / f"{program}.spec.json"
    spec.write_text(json.dumps({"argv": argv, "stdin_starts": stdin_starts, "env": env or {},
                                "env_absent": list(env_absent), "log": str(log)}))
    path = folder / program
    path.write_text(_SCRIPT.format(python=sys.executable, spec=str(spec), act=act))
    path.chmod(0o755)
    return log


def calls(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def path_with(folder: Path) -> str:
    return f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"
