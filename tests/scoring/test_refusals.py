"""Each way a ball is refused, with the rule named, on one project (a served bare remote with
the server hook, a scripted juror server on loopback, a scripted builder process): tests
edited after red, tests that write a source file, a metric tie, a metric regression, a fake
green, a tribunal with one refuse."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from leapgit.records import yamlio
from tests.hooks.world import run_git
from tests.scoring.world import TESTS, Project, build_project
from tests.support import git
from tests.templates import Served
from tests.tribunal.jurors import Call, JurorServer, Reply, finding, verdict

S = "bad"


def unit_test(name: str, body: str, imports: str) -> str:
    """A unittest module whose test imports what it tests: at the red commit it runs and
    fails for the missing behaviour (T7.1: an import error of the runner is no red)."""
    return ("import unittest\n\n\nclass T(unittest.TestCase):\n"
            f"    def test_{name}(self):\n" + textwrap.indent(f"{imports}\n{body}".strip(),
                                                           "        ") + "\n")


METRIC = "python tools/metric.py"
FILES = {
    "tools/metric.py": textwrap.dedent("""\
        import json, pathlib, re, sys
        text = "".join(p.read_text() for p in pathlib.Path("calc").glob("*.py"))
        tie = 5
        cost = int(re.search(r"COST = (\\d+)", text).group(1)) if "COST =" in text else 10
        print(json.dumps({"tie": tie, "cost": cost}))
        """),
}


def ball(name: str, scope: list[str], metric: str = "") -> str:
    return (f"  - id: {name}\n    goal: {name} works\n    spec: make {name} work\n"
            f"    scope: [{', '.join(scope)}]\n"
            f"    proof: python -m unittest -q tests.test_{name}\n"
            f"    tests: {TESTS}\n    rollback: restore-scope\n{metric}")


def metric(field: str, better: str) -> str:
    return (f"    metric:\n      command: {METRIC}\n      fields:\n"
            f"        - {{name: {field}, better: {better}}}\n")


DRAFT = f"slice: {S}\nspine: integrator\nballs:\n" + "".join([
    ball("edited", ["calc/edited.py", "tests/test_edited.py"]),
    ball("mutator", ["calc/mutator.py", "tests/test_mutator.py"]),
    ball("tie", ["calc/tie.py", "tests/test_tie.py"], metric("tie", "higher")),
    ball("regress", ["calc/regress.py", "tests/test_regress.py"], metric("cost", "lower")),
    ball("fakegreen", ["calc/fakegreen.py", "tests/test_fakegreen.py"]),
    ball("refused", ["calc/refused.py", "tests/test_refused.py"]),
])
PLAN = {
    "edited": {"calc/edited.py": "def f():\n    return 0\n",
               "tests/test_edited.py": unit_test("edited", "self.assertTrue(True)", "")},
    "mutator": {"calc/mutator.py": "def g():\n    return 2\n",
                "tests/test_mutator.py": unit_test(
                    "mutator", "with open('calc/mutator.py', 'a') as fh:\n"
                    "    fh.write('# the test was here\\n')\nself.assertEqual(g(), 2)",
                    "from calc.mutator import g")},
    "tie": {"calc/tie.py": "def t():\n    return 1\n",
            "tests/test_tie.py": unit_test("tie", "self.assertEqual(t(), 1)",
                                         "from calc.tie import t")},
    "regress": {"calc/regress.py": "COST = 12\n\n\ndef r():\n    return 1\n",
                "tests/test_regress.py": unit_test("regress", "self.assertEqual(r(), 1)",
                                                 "from calc.regress import r")},
    "fakegreen": {"calc/fakegreen.py": "X = 1\n",
                  "tests/test_fakegreen.py": unit_test("fakegreen", "self.assertTrue(True)",
                                                     "")},
    "refused": {"calc/refused.py": "def h(a, b):\n    return a / b  # REFUSE-ME\n",
                "tests/test_refused.py": unit_test("refused", "self.assertEqual(h(4, 2), 2)",
                                                 "from calc.refused import h")},
}


def jurors(call: Call) -> Reply:
    text = json.dumps(call.body.get("messages", []))
    if "REFUSE-ME" in text and call.lens == "defect":
        return Reply(verdict("defect", "refuse", [finding("major")]))
    return Reply(verdict(call.lens or "?", "pass", [finding("info", "looks fine")]))


@pytest.fixture(scope="module")
def proj(isolated: Path, served: Served) -> Iterator[Project]:
    base = served.folder("refusals")
    daemon = served.daemon
    with JurorServer("openai", jurors) as server:
        p = build_project(base, daemon, server.url, DRAFT, FILES, PLAN)
        red = p.red("edited", S, ("tests/test_edited.py", unit_test(
            "edited", "self.assertEqual(f(), 1)", "from calc.edited import f")))
        assert red.code == 0, red
        for name in ("mutator", "tie", "regress", "refused"):  # fakegreen: none (T7.1)
            red = p.red(name, S, (f"tests/test_{name}.py", PLAN[name][f"tests/test_{name}.py"]))
            assert red.code == 0, red
        thrown = p.leap("throw", S, "--run")
        p.thrown = thrown  # type: ignore[attr-defined]
        yield p


def score(p: Project, ball: str) -> tuple[int, dict[str, Any], str]:
    res = p.leap("score", S, ball)
    path = f"slices/{S}/balls/{ball}/scores/1.yaml"
    shown = git("show", f"leap/ledger:{path}", cwd=p.work) if res.code in (0, 1, 3) else ""
    data = yamlio.loads(shown.encode(), path) if shown else {}
    return res.code, data, res.out + res.err


def test_tests_edited_after_red(proj: Project) -> None:
    out = proj.thrown.out  # type: ignore[attr-defined]
    assert "edited: 1 round(s), last refuse" in out and "T7.1" in out
    branch = f"leap/ball/{S}/edited"
    assert proj.leap("sync").code == 0  # the server judges against the shared ledger
    # issue 14 item 11: the refused round left the branch at its start, so it is pushable;
    # the refused commit is kept as evidence, and the server refuses it on the branch
    evidence = git("for-each-ref", "--format=%(objectname)", "refs/leap/evidence/",
                   cwd=proj.work).split()
    assert len(evidence) == 1, evidence
    assert run_git("push", "--no-verify", "origin", branch, cwd=proj.work).returncode == 0
    pushed = run_git("push", "--no-verify", "origin", f"{evidence[0]}:refs/heads/{branch}",
                     cwd=proj.work)
    assert pushed.returncode != 0
    assert "[T7.1]" in pushed.stderr and "tests/test_edited.py" in pushed.stderr
    res = proj.leap("score", S, "edited")
    assert res.code == 1, res


def test_red_comes_before_the_build(proj: Project) -> None:
    res = proj.red("edited", S, ("tests/test_edited.py", unit_test(
        "edited", "self.assertEqual(f(), 2)", "from calc.edited import f")))
    assert res.code == 1
    assert ("already has 1 round(s) in episode 1: red comes first, before the build, and no "
            "red is redone once a round was built [T7.1]") in res.err
    assert git("ls-tree", "--name-only", "leap/ledger", f"slices/{S}/balls/edited/reds/",
               cwd=proj.work).split() == [f"slices/{S}/balls/edited/reds/1.yaml"]


def test_tests_that_modify_a_source_file(proj: Project) -> None:
    code, data, out = score(proj, "mutator")
    assert code == 1, out
    assert data["outcome"] == -1 and data["rule"] == "L7.4"
    assert "changed bytes of the candidate: calc/mutator.py" in data["reason"]


def test_a_metric_tie_loses_and_is_reverted(proj: Project) -> None:
    code, data, out = score(proj, "tie")
    assert code == 1, out
    assert data["rule"] == "L7.2" and "tie on every field (tie): a tie loses" in data["reason"]
    assert data["metric"]["keep"] is False
    assert not (proj.worktree("tie", S) / "calc" / "tie.py").exists()  # rolled back


def test_a_metric_regression_loses(proj: Project) -> None:
    code, data, out = score(proj, "regress")
    assert code == 1, out
    assert data["rule"] == "L7.2" and "cost regresses: 10 -> 12" in data["reason"]
    tree = proj.worktree("regress", S)
    assert not (tree / "calc" / "regress.py").exists()  # rolled back...
    test = tree / "tests" / "test_regress.py"  # ...to the red commit: its test stays (T7.1)
    assert test.read_text() == PLAN["regress"]["tests/test_regress.py"]


def test_a_ball_without_red_is_not_thrown_and_a_fake_green_red_is_refused(
        proj: Project) -> None:
    """No red, no throw (T7.1): a ball thrown without its failing test could never pass.
    The hinted `leap red` refuses a fake green (a test that passes before the build), and a
    real red lets the throw go on."""
    out = proj.thrown.out + proj.thrown.err  # type: ignore[attr-defined]
    assert f"fakegreen: {S}/fakegreen has no red" in out and \
        f"`leap red {S} fakegreen COMMIT`" in out, out
    res = proj.leap("score", S, "fakegreen")
    assert res.code == 2 and f"`leap red {S} fakegreen COMMIT`" in res.err, res
    fake = proj.red("fakegreen", S, ("tests/test_fakegreen.py", unit_test(
        "fakegreen", "self.assertTrue(True)", "")))
    assert fake.code == 1 and "a red test that passes is refused [T7.1]" in fake.err, fake
    real = proj.red("fakegreen", S, ("tests/test_fakegreen.py", unit_test(
        "fakegreen", "self.assertEqual(X, 2)", "from calc.fakegreen import X")))
    assert real.code == 0, real
    thrown = proj.leap("throw", S, "--ball", "fakegreen")
    assert thrown.code == 0 and "fakegreen" in thrown.out, thrown


def test_a_tribunal_with_one_refuse(proj: Project) -> None:
    code, data, out = score(proj, "refused")
    assert code == 1, out
    assert data["rule"] == "T6" and "refused by defect" in data["reason"]
    assert "provenance" not in data  # L8: no pass record without all five steps


def test_no_refused_ball_is_passed_anywhere(proj: Project) -> None:
    status = json.loads(proj.leap("status", S, "--json").out)
    text = json.dumps(status)
    assert '"passed"' not in text
    merge = proj.leap("merge", S)
    assert merge.code == 3 and "not complete, nothing lands" in merge.err
    audit = proj.leap("audit")
    assert audit.code == 0, audit
