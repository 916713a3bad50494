"""The aggregate review refuses the merged result (L8, T7.6). Before, `leap run` stopped
with no way on: every run again paid for the same review of the same bytes, a respec of a
passed ball was refused, and the findings went nowhere. Now the findings go back to the
builders of the balls whose files they name: each gets a score of -1 on the claim its pass
graded (the server takes it only for an aggregate run that refused and blames that ball,
``rules.aggregate``), its test author and its builder's next round answer them, and the
slice merges again. Real repositories, the real hook behind `git daemon`, jurors on
127.0.0.1 speaking the OpenAI wire format."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

from leapgit.ledger import history
from leapgit.ledger.store import Ledger
from leapgit.rules import aggregate
from leapgit.rules.passes import grade_problems
from tests.loop.test_review_findings import duo, passed_not_merged
from tests.loop.world import CODE, events, jurors
from tests.support import git, hinted_leap
from tests.templates import Served
from tests.tribunal.jurors import Call, JurorServer, Reply, verdict

BUGGY_B = CODE["b"] + "# BUG-AGG: fb disagrees with fa once merged\n"
# b built with the bug, and without it once the findings reach its builder (T7.6)
FIXED_B = {"a": {"calc/a.py": CODE["a"]}, "b": {"calc/b.py": BUGGY_B},
           "b+fixed": {"calc/b.py": CODE["b"]}}


def merged(call: Call) -> bool:
    return "the merged balls of slice" in json.dumps(call.body.get("messages", []))


def refuse_merged_bug(call: Call) -> Reply:
    """The balls pass alone; the merged result's review refuses b's bug, with a finding on
    b's file that quotes it."""
    if merged(call) and call.lens == "defect" and "BUG-AGG" in json.dumps(call.body):
        return Reply(verdict("defect", "refuse", [{
            "severity": "major", "file": "calc/b.py", "claim": "fb disagrees with fa once "
            "merged", "evidence": "BUG-AGG: fb disagrees"}]))
    return jurors(call)


def test_an_aggregate_refusal_goes_back_to_the_builder_and_the_slice_lands(
        isolated: Path, served: Served) -> None:
    plan = FIXED_B
    with JurorServer("openai", refuse_merged_bug) as server:
        p = duo(served.folder("agg-back"), served.daemon, server.url, "agg", ("a", "b"), plan)
        res = p.leap("run", "agg", "--json", "--heartbeat", "0")
        aggregate_calls = sum(1 for c in server.chats() if merged(c))
    got = events(res.out)
    assert res.code == 0, res.out[-3000:]
    back = next(e for e in got if e["event"] == "findings" and e.get("step") == "aggregate")
    assert back["balls"] == ["b"], back
    assert any(e["event"] == "merge" and e.get("step") == "merged" for e in got)
    tip = p.remote_tip("refs/heads/main")
    assert "BUG-AGG" not in git("show", f"{tip}:calc/b.py", cwd=p.work)  # the fixed bytes
    assert aggregate_calls == 16, aggregate_calls  # two reviews: refused, then passed
    with Ledger(p.work / ".git") as ledger:
        view = ledger.require()
        scores = history.scores(view, "agg", "b")
        blamed = next(s for s in scores if s.rule == "L8")
        assert blamed.outcome == -1 and blamed.run_id, blamed
        assert history.scores(view, "agg", "a")[-1].outcome == 1  # a's pass stands
        # what run.max_usd caps counts the refused review too
        refused = aggregate.summary(view, blamed.run_id or "", "agg")
        assert refused is not None and refused.usage is not None and refused.usage.tokens_in
        landed = aggregate.summary(view, history.merge_records(view, "agg")[-1].aggregate_run,
                                   "agg")
        assert landed is not None and landed.usage is not None
        balls = sum(history.ball_spent(view, "agg", b).tokens_in for b in "ab")
        assert history.spent(view, "agg").tokens_in == \
            balls + refused.usage.tokens_in + landed.usage.tokens_in
        # the server's rule: an aggregate score needs a refusing run that blames the ball
        forged = blamed._replace(ball="a", score=99)
        assert any("blames no finding on agg/a" in why for why in grade_problems(view, forged))
    from leapgit.ledger import layout

    stored = git("show", f"refs/heads/leap/ledger:{layout.score_path('agg', 'b', blamed.score)}",
                 cwd=p.bare)  # the server took it
    assert "aggregate review of the merged result refused it" in stored
    audit = p.leap("audit")
    assert audit.code == 0, audit.out[-3000:]


def test_leap_merge_by_hand_names_the_run_that_answers_the_findings(
        isolated: Path, served: Served) -> None:
    plan = FIXED_B
    with JurorServer("openai", refuse_merged_bug) as server:
        p = duo(served.folder("agg-hand"), served.daemon, server.url, "hand", ("a", "b"), plan)
        passed_not_merged(p, "hand")
        refused = p.leap("merge", "hand")
        assert refused.code == 1, refused
        assert "its findings go back to the builder of b (T7.6)" in refused.err, refused.err
        assert "`leap run hand` answers them" in refused.err, refused.err
        ran = p.leap("run", "hand", "--heartbeat", "0")  # the hint, exactly
    assert ran.code == 0 and "landed" in ran.out, ran.out[-3000:]


def test_merged_tests_that_fail_show_their_output_and_the_abandon_hint_leads_on(
        isolated: Path, served: Served) -> None:
    """b's red test passes alone but fails once a's file is there: the merged tests fail.
    The stop shows what the tests printed, and names the abandon and the new cut, which
    free the balls' files for a slice cut again (here, with b's test repaired)."""
    from leapgit.records import yamlio
    from tests.loop.world import red_test

    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("agg-tests"), served.daemon, server.url, "mt", ("a", "b"))
        reds = json.loads((p.base_dir / "reds.json").read_text())
        reds["b"][1] = red_test("b") + (
            "\n\nclass Alone(unittest.TestCase):\n    def test_alone(self):\n"
            "        import os\n        self.assertFalse(os.path.exists('calc/a.py'))\n")
        (p.base_dir / "reds.json").write_text(json.dumps(reds))
        failed = p.leap("run", "mt", "--heartbeat", "0")
        assert failed.code == 1, failed.out[-2000:]
        said = failed.out + failed.err
        assert "the merged result fails" in said and "test_alone" in said, said[-3000:]
        hint = ("the balls pass alone but not together: `leap slice abandon mt --reason 'its "
                "merged tests fail'`, then cut the work again (`leap slice cut FILE`)")
        assert hint in said and "or re-score" not in said, said[-3000:]
        line = next(ln for ln in said.splitlines() if "the balls pass alone" in ln)
        abandon, cut = hinted_leap(line)  # both parts, as printed
        gone = p.leap(*abandon)
        assert gone.code == 0, gone
        again = p.leap("run", "mt", "--heartbeat", "0")  # the throw's own refusal (L3)
        assert again.code == 1 and "slice mt was abandoned at" in again.err and \
            "[L3]" in again.err and "cut a new slice for the work (`leap slice cut FILE`)" \
            in again.err, again
        reds["b"][1] = red_test("b")
        (p.base_dir / "reds.json").write_text(json.dumps(reds))
        draft = yamlio.loads((p.base_dir / "slice0.yaml").read_bytes(), "slice0.yaml")
        draft["slice"] = "mt2"
        (p.base_dir / "again.yaml").write_bytes(yamlio.dumps(draft))
        assert cut == ["slice", "cut", "FILE"], hint
        assert p.leap(*cut[:-1], str(p.base_dir / "again.yaml")).code == 0  # FILE: the draft
        landed = p.leap("run", "mt2", "--heartbeat", "0")
    assert landed.code == 0 and "landed" in landed.out, landed.out[-3000:]


def test_an_aggregate_review_without_a_verdict_holds_and_its_hint_leads_on(
        isolated: Path, served: Served) -> None:
    """T6: the merged result's jurors are out of reach: a hold, nothing lands, and the hint
    names the probe and the run again (in a run the merge goes on by the run, which proves
    the slice live too), which lands once they answer."""
    down = {"on": True}

    def script(call: Call) -> Reply:
        if merged(call) and down["on"]:
            return Reply("down", status=503)
        return jurors(call)

    with JurorServer("openai", script) as server:
        p = duo(served.folder("agg-hold"), served.daemon, server.url, "hold", ("a", "b"))
        held = p.leap("run", "hold", "--heartbeat", "0")
        said = held.out + held.err
        assert held.code == 3 and "the aggregate blind review did not pass" in said, said
        assert "`leap tribunal rungs --probe` shows which answer), then `leap run hold` " \
            "seats the review again" in said, said[-3000:]
        down["on"] = False
        probed = p.leap("tribunal", "rungs", "--probe")
        assert probed.code == 0, probed
        landed = p.leap("run", "hold", "--heartbeat", "0")  # the hint, exactly
    assert landed.code == 0 and "landed" in landed.out, landed.out[-3000:]


def test_the_same_merged_bytes_are_not_reviewed_again(isolated: Path, served: Served) -> None:
    """A blind review: b's builder answered the findings with the same bytes, and each merge
    paid for the review of the same merged tree again. Its refusal stands for those bytes:
    one review, and the ball's rounds run out (a hold that names its resume)."""
    plan = {"a": {"calc/a.py": CODE["a"]}, "b": {"calc/b.py": BUGGY_B}}
    with JurorServer("openai", refuse_merged_bug) as server:
        p = duo(served.folder("agg-same"), served.daemon, server.url, "same", ("a", "b"), plan)
        res = p.leap("run", "same", "--heartbeat", "0")
        reviews = sum(1 for c in server.chats() if merged(c))
    assert reviews == 8, reviews  # one convening of the eight lenses
    assert res.code == 3, res.out[-3000:]
    assert "not reviewed again" in res.out, res.out[-3000:]
    assert "--resume-holds" in res.out, res.out[-3000:]


def test_a_finding_on_the_whole_change_or_a_file_named_loosely_goes_to_the_builders(
        isolated: Path, served: Served) -> None:
    """A blind review: a finding whose evidence quotes the review's contract (no file), and
    one naming `/calc/b.py`, were read as no ball's file, and the slice stopped for good.
    The first is every ball's, the second b's; the builders answer, and the slice lands."""
    calls = {"n": 0}

    def script(call: Call) -> Reply:
        if merged(call) and call.lens == "defect" and calls["n"] == 0:
            calls["n"] += 1
            return Reply(verdict("defect", "refuse", [
                {"severity": "minor", "file": "", "claim": "the whole change reads oddly",
                 "evidence": "the merged balls of slice"},
                {"severity": "major", "file": "/calc/b.py", "claim": "fb is suspicious",
                 "evidence": "def fb"}]))
        return jurors(call)

    plan = {b: {f"calc/{b}.py": CODE[b]} for b in "ab"}
    plan.update({f"{b}+fixed": {f"calc/{b}.py": CODE[b] + "# answered\n"} for b in "ab"})
    with JurorServer("openai", script) as server:
        p = duo(served.folder("agg-loose"), served.daemon, server.url, "loose", ("a", "b"),
                plan)
        res = p.leap("run", "loose", "--json", "--heartbeat", "0")
    got = events(res.out)
    assert res.code == 0, res.out[-3000:]
    back = next(e for e in got if e["event"] == "findings" and e.get("step") == "aggregate")
    assert back["balls"] == ["a", "b"], back


def test_a_refusal_whose_findings_no_builder_can_answer_names_its_summary_and_the_abandon(
        isolated: Path, served: Served) -> None:
    """Its only finding quotes what the envelope never held (T9: unsupported): no ball is
    blamed; the stop names the review's summary, which a person reads, and the abandon."""
    def script(call: Call) -> Reply:
        if merged(call) and call.lens == "defect":
            return Reply(verdict("defect", "refuse", [{
                "severity": "major", "file": "calc/b.py", "claim": "a made-up line",
                "evidence": "this text is in no file"}]))
        return jurors(call)

    with JurorServer("openai", script) as server:
        p = duo(served.folder("agg-none"), served.daemon, server.url, "none", ("a", "b"))
        res = p.leap("run", "none", "--heartbeat", "0")
    assert res.code == 1, res.out[-3000:]
    shown = re.search(r"`(git show [^`]+)`", res.out)
    assert shown is not None and "names no finding a builder can answer" in res.out, \
        res.out[-3000:]
    summary = subprocess.run(shlex.split(shown.group(1)), cwd=p.work, capture_output=True,
                             text=True, check=True).stdout  # the hint, exactly
    assert "this text is in no file" in summary
    gone = p.leap("slice", "abandon", "none", "--reason", "its review blames no builder")
    assert gone.code == 0, gone


def test_a_refusal_on_a_file_no_ball_holds_leads_on_to_a_slice_cut_with_it_in_a_scope(
        isolated: Path, served: Served) -> None:
    """The merged result's review names a file no ball's scope holds (a check the project's
    test mapping puts in the envelope): no builder may change it, so the hint is the
    abandon and a new cut with the file in a scope. Both run as printed (FILE: the draft
    again, the file added to b's scope), and that slice lands."""
    from leapgit.records import yamlio

    calls = {"n": 0}

    def script(call: Call) -> Reply:
        if merged(call) and call.lens == "defect" and calls["n"] == 0:
            calls["n"] += 1
            return Reply(verdict("defect", "refuse", [{
                "severity": "major", "file": "checks/b_checks.py", "claim": "the check of "
                "fb no longer holds once merged", "evidence": "CHECK-B: fb"}]))
        return jurors(call)

    with JurorServer("openai", script) as server:
        p = duo(served.folder("agg-unowned"), served.daemon, server.url, "un", ("a", "b"),
                files={"checks/b_checks.py": "# CHECK-B: fb agrees with fa\n"})
        cfg_path = p.work / ".leap" / "config.yaml"
        cfg = yamlio.loads(cfg_path.read_bytes(), str(cfg_path))
        cfg["tribunal"]["tests"] = [{"source": "calc/*.py", "tests": ["checks/{stem}_checks.py"]}]
        cfg_path.write_bytes(yamlio.dumps(cfg))
        refused = p.leap("run", "un", "--heartbeat", "0")
        said = refused.out + refused.err
        assert refused.code == 1, said[-3000:]
        assert "checks/b_checks.py, which no ball's scope holds" in said, said[-3000:]
        line = next(ln for ln in said.splitlines() if "no builder may change those files" in ln)
        abandon, cut = hinted_leap(line)
        assert abandon[:3] == ["slice", "abandon", "un"] and cut == ["slice", "cut", "FILE"], \
            line
        assert p.leap(*abandon).code == 0  # as printed
        draft = yamlio.loads((p.base_dir / "slice0.yaml").read_bytes(), "slice0.yaml")
        draft["slice"] = "un2"
        for ball in draft["balls"]:
            if ball["id"] == "b":
                ball["scope"] = [*ball["scope"], "checks/b_checks.py"]
        (p.base_dir / "again.yaml").write_bytes(yamlio.dumps(draft))
        assert p.leap(*cut[:-1], str(p.base_dir / "again.yaml")).code == 0  # FILE: the draft
        landed = p.leap("run", "un2", "--heartbeat", "0")
    assert landed.code == 0 and "landed" in landed.out, landed.out[-3000:]


def test_a_finding_on_a_file_no_ball_holds_is_blamed_on_none(isolated: Path) -> None:
    from types import SimpleNamespace
    from typing import cast

    from leapgit.records.tribunal_run import FindingRecord
    from leapgit.records.types import BallRecord
    from leapgit.rules.aggregate import blame

    ball = cast(BallRecord, SimpleNamespace(ball="a", paths=("calc/a.py",)))
    found = blame([ball], [FindingRecord("f", "defect", "major", "setup.cfg", "c", "e", True),
                           FindingRecord("g", "defect", "major", "(contract)", "c", "e",
                                         True)])
    assert found.unowned == ("setup.cfg",) and [f.fingerprint for f in found.balls["a"]] \
        == ["g"], found


def test_a_refusal_of_a_last_rounds_claim_says_so_and_names_the_resume(
        isolated: Path, served: Served) -> None:
    """A blind review: b passed on its last round, the aggregate refused it, and the stop
    said "its last round held"."""
    plan = FIXED_B
    with JurorServer("openai", refuse_merged_bug) as server:
        p = duo(served.folder("agg-last"), served.daemon, server.url, "last", ("a", "b"), plan,
                config={"round_limit": 1})
        res = p.leap("run", "last", "--heartbeat", "0")
        assert res.code == 3, res.out[-3000:]
        assert "the aggregate review refused round 1's claim, its last round" in res.out, \
            res.out[-3000:]
        assert "`leap run last --resume-holds` resumes it once in a new episode" in res.out
        resumed = p.leap("run", "last", "--resume-holds", "--heartbeat", "0")  # the hint
    assert resumed.code == 0 and "landed" in resumed.out, resumed.out[-3000:]


def test_a_round_limit_set_only_in_this_clone_is_bad_input_before_anything_is_recorded(
        isolated: Path, served: Served) -> None:
    """A walk-away hunt: `round_limit: 1` in this clone's config only, while the server
    judged rounds by the spine's (the defaults: 4). An aggregate refusal of a last round
    led to `--resume-holds`, whose new episode the server refused for good ("episode 1 is
    still in flight"). `leap run` now says so first, and its hint leads on."""
    from leapgit.records import yamlio

    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("agg-cap"), served.daemon, server.url, "cap", ("a", "b"))
        cfg_path = p.work / ".leap" / "config.yaml"
        cfg = yamlio.loads(cfg_path.read_bytes(), str(cfg_path))
        cfg_path.write_bytes(yamlio.dumps({**cfg, "round_limit": 1}))
        before = git("rev-parse", "leap/ledger", cwd=p.work)
        refused = p.leap("run", "cap", "--heartbeat", "0")
        assert refused.code == 2, refused
        assert "round_limit is 1 here, but the server judges rounds by the spine's config, " \
            "which gives 4 [L6]" in refused.err, refused.err
        assert "set `round_limit: 4` in .leap/config.yaml" in refused.err
        thrown = p.leap("throw", "cap", "--ball", "a")  # by hand, the same
        assert thrown.code == 2 and "round_limit is 1 here" in thrown.err, thrown
        assert git("rev-parse", "leap/ledger", cwd=p.work) == before  # nothing recorded
        cfg_path.write_bytes(yamlio.dumps({**cfg, "round_limit": 4}))  # the hint
        landed = p.leap("run", "cap", "--heartbeat", "0")
    assert landed.code == 0 and "landed" in landed.out, landed.out[-3000:]
