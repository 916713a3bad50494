"""An episode that its score ends (L6, L3), against a served remote with the server hook:

* a claim on the last round that the score holds (0) ends the episode as a hold: `leap
  throw --resume` starts a fresh episode from it, and the server takes that episode;
* a claim the score refuses (-1) takes no further round (the hook and the server refuse it),
  is repaired with `leap ball respec` and thrown again, and the server takes the new episode
  (it judged the old one "in flight" from its receipts);
* a score made by hand that voids a standing pass, or grades a round that is not the last
  recorded one, is refused by the server."""

from __future__ import annotations

import json
import shlex
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from leapgit.ledger import history, layout, query
from leapgit.ledger.store import Ledger
from leapgit.records import yamlio
from leapgit.records.types import Receipt
from leapgit.rules.passes import current_pass
from leapgit.worktrees.handoff import private_dir
from tests.hooks.world import run_git
from tests.scoring.world import TESTS, Project, build_project
from tests.support import git, write_files
from tests.templates import Served
from tests.tribunal.jurors import Call, JurorServer, Reply, finding, verdict

S = "ends"


def unit_test(name: str, body: str, imports: str) -> str:
    return (f"import unittest\n\n{imports}\n\n\nclass T(unittest.TestCase):\n"
            f"    def test_{name}(self):\n" + textwrap.indent(body, "        ") + "\n")


def ball(name: str, after: str | None = None) -> str:
    return (f"  - id: {name}\n    goal: {name} works\n    spec: make {name} work\n"
            + (f"    depends_on: [{after}]\n" if after else "") +
            f"    scope: [calc/{name}.py, tests/test_{name}.py]\n"
            f"    proof: python -m unittest -q tests.test_{name}\n"
            f"    tests: {TESTS}\n    rollback: restore-scope\n")


DRAFT = (f"slice: {S}\nspine: integrator\nballs:\n" + ball("late") + ball("refused")
         + ball("good") + ball("after", "late") + ball("idle") + ball("answered"))
# T7.1: each red test imports what it tests inside the test, so at the red commit it runs and
# fails for the missing behaviour (an import error of the runner would be no red)
IDLE_TEST = unit_test("idle", "from calc.idle import i\nself.assertEqual(i(), 1)", "")
REFUSED_TEST = unit_test("refused", "from calc.refused import h\nself.assertEqual(h(4, 2), 2)",
                         "")
ANSWERED_TEST = unit_test("answered", "from calc.answered import h\n"
                          "self.assertEqual(h(4, 2), 2)", "")
GOOD_TEST = unit_test("good", "from calc.good import g\nself.assertEqual(g(), 2)", "")
LATE_TEST = unit_test("late", "from calc import late\nself.assertEqual(late.X, 4)", "")
# the refused ball's candidate fails its own proof: a -1 of the score's tests step (L7.4),
# which no next round can answer; the answered ball's is refused by a juror's finding (T6)
PLAN = {"refused": {"calc/refused.py": "def h(a, b):\n    return a + b\n",
                    "tests/test_refused.py": REFUSED_TEST},
        "answered": {"calc/answered.py": "def h(a, b):\n    return a / b  # REFUSE-ME\n",
                     "tests/test_answered.py": ANSWERED_TEST},
        "good": {"calc/good.py": "def g():\n    return 2\n", "tests/test_good.py": GOOD_TEST}}


def jurors(call: Call) -> Reply:
    text = json.dumps(call.body.get("messages", []))
    if "HOLD-ME" in text:  # the late ball: no juror answers (HTTP 503), so the tribunal holds
        return Reply("", status=503)
    if "REFUSE-ME" in text and call.lens == "defect":
        return Reply(verdict("defect", "refuse", [finding("major")]))
    if "return a // b" in text:  # the answered ball's second round: the finding is fixed
        seen = {**finding("info", "floor division", "return a // b"), "file": "calc/answered.py"}
        return Reply(verdict(call.lens or "?", "pass", [seen]))
    if "return 2" in text:  # the good ball: a pass that quotes its candidate (T6)
        seen = {**finding("info", "g returns two", "return 2"), "file": "calc/good.py"}
        return Reply(verdict(call.lens or "?", "pass", [seen]))
    return Reply(verdict(call.lens or "?", "pass", [finding("info", "looks fine")]))


@pytest.fixture(scope="module")
def proj(isolated: Path, served: Served) -> Iterator[Project]:
    base = served.folder("ends")
    daemon = served.daemon
    with JurorServer("openai", jurors) as server:
        yield build_project(base, daemon, server.url, DRAFT, None, PLAN)


def remote_has(p: Project, path: str) -> bool:
    listed = git("ls-tree", "-r", "--name-only", "leap/ledger", cwd=p.bare)
    return path in listed.splitlines()


def test_a_hold_on_the_last_round_ends_the_episode_and_it_resumes(proj: Project) -> None:
    p = proj
    res = p.leap("throw", S, "--ball", "late")  # T7.1: no red, no throw
    assert res.code == 1 and f"`leap red {S} late COMMIT`" in res.err, res
    assert p.red("late", S, ("tests/test_late.py", LATE_TEST)).code == 0
    res = p.leap("throw", S, "--ball", "late")
    assert res.code == 0, res
    wt = p.worktree("late", S)
    for n in range(1, 5):  # four rounds through the post-commit hook: 2 and 4 claim a pass
        write_files(wt, {"calc/late.py": f"X = {n}  # HOLD-ME\n"})
        git("add", "-A", cwd=wt)
        git("commit", "-q", "-m", f"late {n}\n\nLeap-Round: {n}\nLeap-Outcome: "
            f"{1 if n in (2, 4) else 0}", cwd=wt)
        if n == 2:  # an early claim: a hold of it does not end the episode (review r7 F2)
            early = p.leap("throw", S, "--ball", "late", "--resume")
            assert early.code == 1, early
            assert f"`leap score {S} late` grades round 2's claim; after a hold the builder " \
                "goes on with round 3" in early.err, early
    # a fifth commit: the hook says to put the branch back, then to score round four's claim,
    # and nothing that would be refused (review r7 F1)
    fourth = git("rev-parse", "HEAD", cwd=wt)
    hooked = run_git("commit", "-q", "--allow-empty", "-m",
                     "late 5\n\nLeap-Round: 5\nLeap-Outcome: 0", cwd=wt)
    fifth = git("rev-parse", "HEAD", cwd=wt)
    # the ball's worktree named, so the hint moves the ball's branch wherever it is typed
    # (blind review: typed in the main checkout, a bare `git reset` moved the spine), and
    # the commit past round four kept under a ref of its own, not dropped to the reflog
    kept = f"refs/leap/kept/{S}/late/{fifth[:12]}"
    git_wt = f"git -C {shlex.quote(str(wt))}"
    reset = (f"{git_wt} switch -q leap/ball/{S}/late && {git_wt} update-ref {kept} "
             f"{fifth[:12]} && {git_wt} reset --keep {fourth[:12]}")
    back = f"`{reset}` keeps the commit past round 4 at {kept} and puts the branch back " \
        "where round 4 left it, then "
    assert back + f"`leap score {S} late` grades round 4's claim" in hooked.stderr, \
        hooked.stderr
    assert "leap round" not in hooked.stderr and "resume in a new episode" not in \
        hooked.stderr, hooked.stderr
    past = p.leap("score", S, "late")  # `leap score` grades only the commit round 4 claims
    assert past.code == 1 and f"is not {fourth[:12]}, the commit of the last receipt (round 4)" \
        in past.err, past
    # from the main checkout, every refusal names the same way back, in the ball's worktree,
    # and none sends to another refusal (blind review: score named "checkpoint and resume",
    # which sends back to score; throw and round named score, which refuses)
    assert back + f"`leap score {S} late` grades round 4's claim" in past.err, past
    assert "resume in a new episode" not in past.err, past
    for refused in (p.leap("throw", S, "--ball", "late", "--resume"),
                    p.leap("round", S, "late", "--outcome", "0", "--evidence", "a fifth")):
        assert refused.code == 1 and back + f"`leap score {S} late` grades round 4's claim" \
            in refused.err, refused
    subprocess.run(reset, shell=True, cwd=p.work, check=True)  # the hint, exactly
    assert git("rev-parse", "HEAD", cwd=wt) == fourth
    assert git("rev-parse", kept, cwd=p.work) == fifth  # nothing lost
    assert git("rev-parse", "main", cwd=p.work) == p.base  # the spine never moved
    # round four claims a pass that nobody scored yet: the way on is `leap score`, and both
    # refusals say so rather than point at each other (final review, telemetry F3)
    early = p.leap("throw", S, "--ball", "late", "--resume")
    assert early.code == 1 and f"`leap score {S} late`" in early.err, early
    assert f"a hold then resumes with `leap throw {S} --ball late --resume`" in early.err, early
    fifth = p.leap("round", S, "late", "--outcome", "0", "--evidence", "a fifth")
    assert fifth.code == 1 and f"`leap score {S} late`" in fifth.err, fifth
    scored = p.leap("score", S, "late")  # no juror answers: a hold (T6), never a pass
    assert scored.code == 3 and "tribunal   hold" in scored.out, scored
    status = json.loads(p.leap("status", S, "--json").out)
    [late] = [b for wave in status["slices"][0]["waves"] for b in wave if b["ball"] == "late"]
    # held by its score, its rounds spent: a hold, with no checkpoint record to name
    # (final review, telemetry F4); the text status says hold, not its last receipt's claim
    assert late["readiness"] == "hold" and late["checkpoint"] is None, late
    text = p.leap("status", S).out.splitlines()
    [line] = [x for x in text if x.strip().startswith("late ")]
    assert line.split()[1] == "hold", line
    assert any("its score held round 4 (0)" in x and f"`leap throw {S} --ball late --resume`"
               in x for x in text), text  # what ended it, and the way on (review r7 F5)
    again = p.leap("throw", S, "--ball", "late")
    assert again.code == 3 and "its last round scored 0" in again.err, again
    assert f"`leap throw {S} --ball late --resume`" in again.err, again  # runnable (r7 F3)
    after = p.leap("throw", S, "--ball", "after")  # its ancestor has no checkpoint to name
    assert after.code == 3, after
    assert "its ancestor late ended at 0 (its last round scored 0)" in after.err, after
    resumed = p.leap("throw", S, "--ball", "late", "--resume", "--run")
    assert resumed.code == 0, resumed
    assert "episode 2" in resumed.out
    # the resumed builder is handed what the held last round tried (there is no checkpoint)
    handed = yamlio.loads(private_dir(wt).joinpath("handoff.yaml").read_bytes(), "handoff")
    assert handed["checkpoint"] is None
    assert handed["previous_receipt"]["round"] == 4
    assert handed["previous_receipt"]["evidence"] == "late 4"
    synced = p.leap("sync")
    assert synced.code == 0, synced
    assert remote_has(p, f"slices/{S}/balls/late/episodes/2/throw.yaml")
    # a score of an earlier round (written while the builder went on: a scoring takes
    # minutes) is history the server takes, and it ends nothing (final review, defect F1)
    with Ledger(p.work / ".git") as ledger:
        view = ledger.require()
        second = query.receipts(view, S, "late", 1)[1]
        first = history.scores(view, S, "late")[0]
        stale = first._replace(score=first.score + 1, rounds=2, commit=second.commit or "",
                        candidate=second.candidate or "", reason="scored late")
        ledger.append({layout.score_path(S, "late", stale.score): yamlio.dumps(
            stale.to_dict())}, "a late score")
    pushed = run_git("push", "--no-verify", "origin", "leap/ledger", cwd=p.work)
    assert pushed.returncode == 0, pushed.stderr
    status = json.loads(p.leap("status", S, "--json").out)
    [late] = [b for wave in status["slices"][0]["waves"] for b in wave if b["ball"] == "late"]
    assert late["readiness"] == "in-flight" and late["throw"]["episode"] == 2, late


def test_a_refuse_by_the_score_is_respecced_and_thrown_again(proj: Project) -> None:
    p = proj
    assert p.red("refused", S, ("tests/test_refused.py", REFUSED_TEST)).code == 0
    res = p.leap("throw", S, "--ball", "refused", "--run")
    assert res.code == 0, res
    scored = p.leap("score", S, "refused")
    assert scored.code == 1 and "L7.4" in scored.out + scored.err, scored
    # the builder's next round cannot undo the scorer's -1: not the hook, not the server
    wt = p.worktree("refused", S)
    write_files(wt, {"calc/refused.py": "def h(a, b):\n    return a // b\n"})
    git("add", "-A", cwd=wt)
    hooked = run_git("commit", "-q", "-m", "again\n\nLeap-Round: 2\nLeap-Outcome: 1", cwd=wt)
    assert "score 1 refused its last round (-1)" in hooked.stderr, hooked.stderr
    assert "the round was not recorded" in hooked.stderr
    refused = forged_push(p, {layout.receipt_path(S, "refused", 1, 2): Receipt(
        S, "refused", 1, 2, 1, "again", "2026-01-01T00:00:00Z", claim=True,
        commit=git("rev-parse", "HEAD", cwd=wt), candidate=git("rev-parse", "HEAD^{tree}",
                                                                cwd=wt)).to_dict()})
    assert "[L6]" in refused and "cannot undo the grade" in refused, refused
    git("reset", "-q", "--hard", "HEAD~1", cwd=wt)
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


def test_a_refuse_on_the_tribunals_findings_goes_back_to_the_builder(proj: Project) -> None:
    """T7.6: a juror's refusal is answered by the builder's next round, not by a respec: the
    hook records that round, and the next score convenes round 2 of the ball's series."""
    p = proj
    assert p.red("answered", S, ("tests/test_answered.py", ANSWERED_TEST)).code == 0
    assert p.leap("throw", S, "--ball", "answered", "--run").code == 0
    scored = p.leap("score", S, "answered")
    assert scored.code == 1 and "T6" in scored.out and "round 1" in scored.out, scored
    wt = p.worktree("answered", S)
    write_files(wt, {"calc/answered.py": "def h(a, b):\n    return a // b\n"})
    git("add", "-A", cwd=wt)
    hooked = run_git("commit", "-q", "-m", "answer\n\nLeap-Round: 2\nLeap-Outcome: 1", cwd=wt)
    assert "recorded round 2 of ends/answered: outcome 1 (a claim)" in hooked.stderr, hooked
    again = p.leap("score", S, "answered")
    assert again.code == 0 and "round 2" in again.out, again
    assert p.leap("sync").code == 0  # the server takes the answered round and its pass
    assert remote_has(p, f"slices/{S}/balls/answered/episodes/1/receipts/2.yaml")


def forged_push(p: Project, records: dict[str, dict[str, object]]) -> str:
    """Append ``records`` to the local ledger by hand and push it past the client hooks:
    the server's refusal (asserted), after which the local ledger is put back."""
    assert p.leap("sync").code == 0
    before = p.tip("leap/ledger")
    with Ledger(p.work / ".git") as ledger:
        ledger.append({path: yamlio.dumps(raw) for path, raw in records.items()},
                      "forged by hand")
    pushed = run_git("push", "--no-verify", "origin", "leap/ledger", cwd=p.work)
    git("update-ref", "refs/heads/leap/ledger", before, cwd=p.work)
    assert pushed.returncode != 0, pushed.stderr
    assert p.remote_tip("refs/heads/leap/ledger") == before
    return pushed.stderr


def test_a_score_by_hand_that_voids_a_pass_or_grades_another_round_is_refused(
        proj: Project) -> None:
    """A score of 0 or -1 ends an episode and outranks an older pass, so the server checks
    it as `leap score` writes it: the last recorded round, a claim, by its commit, and never
    after a pass that stands."""
    p = proj
    assert p.red("good", S, ("tests/test_good.py", GOOD_TEST)).code == 0
    assert p.leap("throw", S, "--ball", "good", "--run").code == 0
    scored = p.leap("score", S, "good")
    assert scored.code == 0, scored
    assert p.leap("sync").code == 0
    with Ledger(p.work / ".git") as ledger:
        passed = current_pass(ledger.require(), S, "good")
    assert passed is not None
    voiding = passed._replace(score=passed.score + 1, outcome=-1, reason="by hand",
                      provenance=None)
    err = forged_push(p, {layout.score_path(S, "good", voiding.score): voiding.to_dict()})
    assert "[L7]" in err and f"score {passed.score} passed the ball and stands" in err, err
    nothing = voiding._replace(rounds=0)  # the schema allows it: a clear refusal, no crash
    err = forged_push(p, {layout.score_path(S, "good", voiding.score): nothing.to_dict()})
    assert "the score grades round 0, but episode 1 of ends/good holds 1 recorded" in err, err
    elsewhere = voiding._replace(rounds=3)
    err = forged_push(p, {layout.score_path(S, "good", voiding.score): elsewhere.to_dict()})
    assert "the score grades round 3, but episode 1 of ends/good holds 1 recorded" in err, err
    with Ledger(p.work / ".git") as ledger:
        assert current_pass(ledger.require(), S, "good") == passed
    # a newer claim of the same tree is a new commit, and a score may grade it: the server
    # tells a newer claim from the graded one by commit, not by tree (final review, defect F2)
    wt = p.worktree("good", S)
    hooked = run_git("commit", "-q", "--allow-empty", "-m",
                     "again\n\nLeap-Round: 2\nLeap-Outcome: 1", cwd=wt)
    assert "recorded round 2" in hooked.stderr, hooked.stderr
    with Ledger(p.work / ".git") as ledger:
        newer = query.receipts(ledger.require(), S, "good", 1)[-1]
        assert (newer.round, newer.claim, newer.candidate) == (2, True, passed.candidate)
        assert newer.commit is not None and newer.commit != passed.commit
        regrade = voiding._replace(rounds=2, commit=newer.commit)
        ledger.append({layout.score_path(S, "good", regrade.score): yamlio.dumps(
            regrade.to_dict())}, "a score of the newer claim")
    pushed = run_git("push", "--no-verify", "origin", "leap/ledger", cwd=p.work)
    assert pushed.returncode == 0, pushed.stderr
    assert p.remote_tip("refs/heads/leap/ledger") == p.tip("leap/ledger")


def test_a_claim_that_made_no_commit_is_scored_from_where_its_branch_stands(
        proj: Project) -> None:
    """A builder that changes nothing claims with no commit, on a branch that starts at the
    red commit (T7.1): `leap score` grades the branch as it stands (here a -1: the red test
    fails), with no L6 refusal and no deadlock (review r9 F1, which undid a binding of such a
    round to a guessed start commit)."""
    p = proj
    assert p.red("idle", S, ("tests/test_idle.py", IDLE_TEST)).code == 0
    thrown = p.leap("throw", S, "--ball", "idle", "--run")  # no plan: the builder writes nothing
    assert thrown.code == 0, thrown
    with Ledger(p.work / ".git") as ledger:
        [claim] = query.receipts(ledger.require(), S, "idle", 1)
    assert (claim.claim, claim.outcome, claim.commit) == (True, 1, None), claim
    scored = p.leap("score", S, "idle")
    assert scored.code == 1 and "[L6]" not in scored.err, scored
    with Ledger(p.work / ".git") as ledger:
        [graded] = history.scores(ledger.require(), S, "idle")
    assert graded.outcome == -1 and graded.rounds == 1, graded
    assert p.leap("sync").code == 0  # the server takes the score
