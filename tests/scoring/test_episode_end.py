"""An episode that its score ends (L6, L3), against a served remote with the server hook:

* a claim on the last round that the score holds (0) ends the episode as a hold: `leap
  throw --resume` starts a fresh episode from it, and the server takes that episode;
* a claim the score refuses (-1) is repaired with `leap ball respec` and thrown again, and
  the server takes the new episode (it judged the old one "in flight" from its receipts)."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.scoring.world import TESTS, Project, build_project
from tests.support import GitDaemon, git, write_files
from tests.tribunal.jurors import Call, JurorServer, Reply, finding, verdict

S = "ends"


def unit_test(name: str, body: str, imports: str) -> str:
    return (f"import unittest\n\n{imports}\n\n\nclass T(unittest.TestCase):\n"
            f"    def test_{name}(self):\n" + textwrap.indent(body, "        ") + "\n")


def ball(name: str) -> str:
    return (f"  - id: {name}\n    goal: {name} works\n    spec: make {name} work\n"
            f"    scope: [calc/{name}.py, tests/test_{name}.py]\n"
            f"    proof: python -m unittest -q tests.test_{name}\n"
            f"    tests: {TESTS}\n    rollback: restore-scope\n")


DRAFT = f"slice: {S}\nspine: integrator\nballs:\n" + ball("late") + ball("refused")
REFUSED_TEST = unit_test("refused", "self.assertEqual(h(4, 2), 2)",
                         "from calc.refused import h")
PLAN = {"refused": {"calc/refused.py": "def h(a, b):\n    return a / b  # REFUSE-ME\n",
                    "tests/test_refused.py": REFUSED_TEST}}


def jurors(call: Call) -> Reply:
    text = json.dumps(call.body.get("messages", []))
    if "REFUSE-ME" in text and call.lens == "defect":
        return Reply(verdict("defect", "refuse", [finding("major")]))
    return Reply(verdict(call.lens or "?", "pass", [finding("info", "looks fine")]))


@pytest.fixture(scope="module")
def proj(isolated: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    base = tmp_path_factory.mktemp("ends")
    with GitDaemon(base) as daemon, JurorServer("openai", jurors) as server:
        yield build_project(base, daemon, server.url, DRAFT, None, PLAN)


def remote_has(p: Project, path: str) -> bool:
    listed = git("ls-tree", "-r", "--name-only", "leap/ledger", cwd=p.bare)
    return path in listed.splitlines()


def test_a_hold_on_the_last_round_ends_the_episode_and_it_resumes(proj: Project) -> None:
    p = proj
    res = p.leap("throw", S, "--ball", "late")
    assert res.code == 0, res
    wt = p.worktree("late", S)
    for n in range(1, 5):  # four rounds through the post-commit hook, the last one a claim
        write_files(wt, {"calc/late.py": f"X = {n}\n"})
        git("add", "-A", cwd=wt)
        git("commit", "-q", "-m", f"late {n}\n\nLeap-Round: {n}\nLeap-Outcome: "
            f"{1 if n == 4 else 0}", cwd=wt)
    scored = p.leap("score", S, "late")  # no red test recorded: a hold (T7.1), never a pass
    assert scored.code == 3, scored
    status = json.loads(p.leap("status", S, "--json").out)
    [late] = [b for wave in status["slices"][0]["waves"] for b in wave if b["ball"] == "late"]
    assert late["readiness"] == "checkpoint", late  # held: its rounds are spent
    resumed = p.leap("throw", S, "--ball", "late", "--resume")
    assert resumed.code == 0, resumed
    assert "episode 2" in resumed.out
    synced = p.leap("sync")
    assert synced.code == 0, synced
    assert remote_has(p, f"slices/{S}/balls/late/episodes/2/throw.yaml")


def test_a_refuse_by_the_score_is_respecced_and_thrown_again(proj: Project) -> None:
    p = proj
    assert p.red("refused", S, ("tests/test_refused.py", REFUSED_TEST)).code == 0
    res = p.leap("throw", S, "--ball", "refused", "--run")
    assert res.code == 0, res
    scored = p.leap("score", S, "refused")
    assert scored.code == 1 and "T6" in scored.out + scored.err, scored
    repair = p.base_dir / "repair.yaml"
    repair.write_text("goal: refused works\nspec: make refused work, dividing safely\n"
                      "scope: [calc/refused.py, tests/test_refused.py]\n"
                      "proof: python -m unittest -q tests.test_refused\n"
                      f"tests: {TESTS}\nrollback: restore-scope\nreason: divide safely\n")
    respec = p.leap("ball", "respec", S, "refused", str(repair))
    assert respec.code == 0, respec
    again = p.leap("throw", S, "--ball", "refused")
    assert again.code == 0 and "episode 2" in again.out, again
    synced = p.leap("sync")
    assert synced.code == 0, synced
    assert remote_has(p, f"slices/{S}/balls/refused/episodes/2/throw.yaml")
