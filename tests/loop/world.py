"""A five-ball slice in three waves for `leap run`, on a real project with the server hook
behind `git daemon`: a scripted test author (a real process that commits each ball's red),
a scripted builder (a real process that writes the ball's files, and the fixed files once
its handoff carries the tribunal's findings) and scripted jurors on 127.0.0.1.

    a, b        wave 0
    c <- a      wave 1 (c's red and code call a's API: it needs a's code at its base)
    d <- a, b   wave 1
    e <- c, d   wave 2
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

from leapgit.records import yamlio
from tests.scoring.world import Project, ball_yaml, build_project
from tests.tribunal.jurors import Call, Reply, verdict

S = "five"
DEPS = {"a": (), "b": (), "c": ("a",), "d": ("a", "b"), "e": ("c", "d")}
# c's scope holds a test file to be created for a finding (T7.6), which its proof runs too
FINDING_TEST = "tests/test_c_finding.py"
C_PROOF = "python -m unittest discover -q -s tests -t . -p 'test_c*.py'"


def _ball(b: str, deps: tuple[str, ...]) -> str:
    text = ball_yaml(b, [f"calc/{b}.py", f"tests/test_{b}.py"]
                     + ([FINDING_TEST] if b == "c" else []), f"test_{b}", deps)
    return text.replace("proof: python -m unittest -q tests.test_c\n",
                        f'proof: "{C_PROOF}"\n') if b == "c" else text


DRAFT = (f"slice: {S}\nspine: integrator\nlive_proof: python -m calc.e\nballs:\n"
         + "".join(_ball(b, deps) for b, deps in DEPS.items()))

# each ball's function returns its value; a dependent ball's builds on its dependencies'
CODE = {
    "a": "def fa():\n    return 1\n",
    "b": "def fb():\n    return 2\n",
    "c": "from calc.a import fa\n\n\ndef fc():\n    return fa() + 2\n",
    "d": "from calc.a import fa\nfrom calc.b import fb\n\n\ndef fd():\n    return fa() + fb()\n",
    "e": ("from calc.c import fc\nfrom calc.d import fd\n\n\ndef fe():\n    return fc() + fd()"
          "\n\n\nif __name__ == '__main__':\n    assert fe() == 6\n    print('live: fe() is 6')\n"),
}
EXPECT = {"a": 1, "b": 2, "c": 3, "d": 3, "e": 6}
# c's first candidate is off by one; the juror's finding names it, the builder fixes it
BUGGY_C = "from calc.a import fa\n\n\ndef fc():\n    return fa() + 2  # BUG-C: adds two\n"


# the test author's test for the juror's finding on c: it fails while the bug is there
FINDING_RED = ("import inspect\nimport unittest\n\n\nclass T(unittest.TestCase):\n"
               "    def test_no_bug_marker(self):\n        import calc.c\n"
               "        self.assertNotIn('BUG' + '-C', inspect.getsource(calc.c))\n")


def red_test(ball: str) -> str:
    return (f"import unittest\n\n\nclass T(unittest.TestCase):\n    def test_{ball}(self):\n"
            f"        from calc.{ball} import f{ball}\n"
            f"        self.assertEqual(f{ball}(), {EXPECT[ball]})\n")


AUTHOR = textwrap.dedent("""\
    import json, os, pathlib, subprocess, sys
    here = pathlib.Path(sys.argv[0]).parent
    ball = os.environ["LEAP_BALL"]
    with open(here / "authored.log", "a") as log:
        log.write(ball + "\\n")
    reds = json.loads((here / "reds.json").read_text())
    if os.environ.get("LEAP_FINDINGS"):  # T7.6: a test for each finding it can check
        if ball + "+finding" not in reds:
            sys.exit(0)  # nothing it can test: no commit
        path, text = reds[ball + "+finding"]
    else:
        path, text = reds[ball]
    p = pathlib.Path(path); p.parent.mkdir(parents=True, exist_ok=True); p.write_text(text)
    ident = ["-c", "user.name=Test Author", "-c", "user.email=author@example.invalid"]
    subprocess.run(["git", "add", path], check=True)
    subprocess.run(["git", *ident, "commit", "-q", "--no-verify", "-m", "red: " + ball],
                   check=True)
    """)

BUILDER = textwrap.dedent("""\
    import json, os, pathlib, shutil, sys
    here = pathlib.Path(sys.argv[0]).parent
    ball = os.environ["LEAP_BALL"]
    plan = json.loads((here / "plan.json").read_text())
    key = ball + "+fixed" if os.environ.get("LEAP_FINDINGS") and ball + "+fixed" in plan else ball
    for path, text in plan[key].items():
        if ball + "+rounds" in plan and not (here / "calm").exists():  # a candidate a round
            text += "# ROUND-" + os.environ["LEAP_ROUND"] + "\\n"
        p = pathlib.Path(path); p.parent.mkdir(parents=True, exist_ok=True); p.write_text(text)
    kept = here / "handoffs"; kept.mkdir(exist_ok=True)
    shutil.copy(os.environ["LEAP_HANDOFF"], kept / "{}-{}-{}.yaml".format(
        ball, os.environ["LEAP_EPISODE"], os.environ["LEAP_ROUND"]))
    said = "outcome: 1\\nevidence: built " + key + "\\n"
    pathlib.Path(os.environ["LEAP_REPORT"]).write_text(said)
    """)


def plan(buggy: bool = True, every_round: str | None = None) -> dict[str, dict[str, str]]:
    out = {b: {f"calc/{b}.py": CODE[b]} for b in DEPS}
    if every_round:
        out[every_round + "+rounds"] = {}
    if buggy:
        out["c"] = {"calc/c.py": BUGGY_C}
        out["c+fixed"] = {"calc/c.py": CODE["c"]}
    return out


def jurors(call: Call) -> Reply:
    """A pass quotes the candidate (T6: no bare pass); the defect lens refuses c's buggy
    candidate with a finding that quotes it."""
    text = json.dumps(call.body.get("messages", []))
    rounds = re.findall(r"ROUND-(\d)", text)
    if rounds and call.lens == "defect":  # a NEW finding every round: T9 stops the ball
        n = rounds[0]
        return Reply(verdict("defect", "refuse", [{
            "severity": "major", "file": "calc/b.py", "claim": f"problem number {n} of many",
            "evidence": f"ROUND-{n}"}]))
    if "BUG-C" in text and call.lens == "defect":
        return Reply(verdict("defect", "refuse", [{
            "severity": "major", "file": "calc/c.py", "claim": "fc adds two, not what the "
            "goal asks", "evidence": "BUG-C: adds two"}]))
    return Reply(verdict(call.lens or "?", "pass", [{
        "severity": "info", "file": "calc", "claim": "the function returns its value",
        "evidence": "return"}]))


def build(base_dir: Path, daemon: object, juror_url: str, buggy: bool = True,
          every_round: str | None = None) -> Project:
    p = build_project(base_dir, daemon, juror_url, DRAFT, None,  # type: ignore[arg-type]
                      plan(buggy, every_round))
    (base_dir / "builder.py").write_text(BUILDER)
    scripted_author(p, {**{b: [f"tests/test_{b}.py", red_test(b)] for b in DEPS},
                        "c+finding": [FINDING_TEST, FINDING_RED]})
    return p


def scripted_author(p: Project, reds: dict[str, list[str]]) -> None:
    """The world's test author (``AUTHOR``), writing ``reds`` (ball -> [path, text]), as
    the project's `red.command`, in a role of its own."""
    import sys

    (p.base_dir / "author.py").write_text(AUTHOR)
    (p.base_dir / "reds.json").write_text(json.dumps(reds))
    cfg_path = p.work / ".leap" / "config.yaml"
    cfg = yamlio.loads(cfg_path.read_bytes(), str(cfg_path))
    cfg["red"] = {"command": f"{sys.executable} {p.base_dir / 'author.py'}",
                  "identity": "model=scripted-author,family=demo,session=author-1"}
    cfg_path.write_bytes(yamlio.dumps(cfg))


def events(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]
