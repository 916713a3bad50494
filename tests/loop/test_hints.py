"""Every stop of `leap run` that names a next command leads on (the brief: a hint is a
promise). Each test runs exactly the command the stop names and shows the slice lands:

* no red and no test author: `leap red SLICE BALL COMMIT`, then `leap run SLICE`;
* an episode that ended at 0 (a checkpoint): `leap run SLICE --resume-holds`;
* a round refused (-1, a scope breach): `leap ball respec SLICE BALL FILE`, then `leap run`.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from leapgit.ledger import query
from leapgit.ledger.store import Ledger
from leapgit.records import yamlio
from leapgit.records.schema import validate
from leapgit.records.types import BallRecord
from tests.loop.test_review_findings import duo
from tests.loop.world import events, jurors, red_test
from tests.scoring.world import Project
from tests.support import git, hinted_leap
from tests.templates import Served
from tests.tribunal.jurors import Call, JurorServer, Reply, verdict

# the world's builder, but a's rounds hold while `hold` exists and b's write outside its
# scope while `breach` exists (a -1 the builder cannot answer: L4, L6)
MOODY = textwrap.dedent("""\
    import os, pathlib, runpy, sys
    here = pathlib.Path(sys.argv[0]).parent
    ball = os.environ["LEAP_BALL"]
    if ball == "a" and (here / "hold").exists():
        pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 0\\nevidence: stuck\\n")
        sys.exit(0)
    if ball == "b" and (here / "breach").exists():
        pathlib.Path("outside.txt").write_text("not b's file")
    sys.argv[0] = str(here / "builder.py")
    runpy.run_path(str(here / "builder.py"), run_name="__main__")
    """)


def _stops(out: str) -> dict[str, dict[str, object]]:
    return {str(e["ball"]): e for e in events(out) if e["event"] == "stop" and "ball" in e}


def _hinted(hint: object) -> list[str]:
    return re.findall(r"`(leap [^`]*)`", str(hint))


def _respec(p: Project, slice_id: str, ball: str, reason: str) -> int:
    """`leap ball respec SLICE BALL FILE` with the ball's spec as the world cuts it."""
    spec = p.base_dir / f"{ball}.yaml"
    spec.write_text(f"goal: {ball} works\nspec: make {ball} work, inside calc/{ball}.py "
                    f"only\nscope: [calc/{ball}.py, tests/test_{ball}.py]\nproof: python -m "
                    f"unittest -q tests.test_{ball}\ntests: python -m unittest -q\n"
                    f"rollback: restore-scope\nreason: {reason}\n")
    return p.leap("ball", "respec", slice_id, ball, str(spec)).code


def test_no_red_and_no_author_names_leap_red_which_leads_on(isolated: Path,
                                                            served: Served) -> None:
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("hint-red"), served.daemon, server.url, "hred", ("a", "b"),
                red={"command": None})
        res = p.leap("run", "hred", "--json", "--heartbeat", "0")
        assert res.code == 3, res.out[-2000:]
        stops = _stops(res.out)
        assert set(stops) == {"a", "b"}, stops
        for ball, stop in stops.items():
            assert _hinted(stop["hint"]) == [f"leap red hred {ball} COMMIT",
                                             "leap run hred"], stop
            assert p.red(ball, "hred", (f"tests/test_{ball}.py", red_test(ball))).code == 0
        landed = p.leap("run", "hred", "--heartbeat", "0")
    assert landed.code == 0 and "landed" in landed.out, landed.out[-2000:]


@pytest.mark.parametrize("wrong", ["passes", "outside", "runs-none"])
def test_a_red_the_test_author_got_wrong_names_leap_run_not_a_placeholder_commit(
        isolated: Path, served: Served, wrong: str) -> None:
    """Stop 36 found: inside `leap run`, a red the test author wrote wrong (here: a test
    that passes) stopped with `leap red S B COMMIT` again: a placeholder for a commit the
    run's author makes, not the user. The stop names what to mend (red.command, or the
    proof with `leap ball respec`) and `leap run S`, which asks the author again."""
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder(f"hint-{wrong}-red"), served.daemon, server.url, "hpr",
                ("a", "b"))
        good = (p.base_dir / "reds.json").read_text()
        bad = json.loads(good)
        if wrong == "passes":
            bad["a"][1] = ("import unittest\n\n\nclass T(unittest.TestCase):\n"
                           "    def test_a(self):\n        pass\n")
        elif wrong == "runs-none":  # a test module that cannot be imported: no test runs
            bad["a"][1] = "import calc.no_such_module_here\n"
        else:  # a test file outside the ball's scope (L4)
            bad["a"][0] = "tests/test_elsewhere.py"
        (p.base_dir / "reds.json").write_text(json.dumps(bad))
        res = p.leap("run", "hpr", "--json", "--heartbeat", "0")
        assert res.code == 1, res.out[-2000:]
        stop = _stops(res.out)["a"]
        said = {"passes": "passes at", "outside": "outside the ball's scope",
                "runs-none": "stopped before any test ran"}[wrong]
        assert said in str(stop["reason"]), stop
        assert "COMMIT" not in str(stop["hint"]) and "red.command" in str(stop["hint"]), stop
        assert _hinted(stop["hint"])[-1] == "leap run hpr", stop
        if wrong != "outside":
            assert _hinted(stop["hint"]) == ["leap ball respec hpr a FILE", "leap run hpr"]
        (p.base_dir / "reds.json").write_text(good)  # the author mended
        landed = p.leap("run", "hpr", "--heartbeat", "0")
    assert landed.code == 0 and "landed" in landed.out, landed.out[-2000:]


@pytest.mark.parametrize("failing", ["no-commit", "exits", "times-out", "crashes"])
def test_a_test_author_that_fails_stops_with_a_hint_that_leads_on_once_it_is_fixed(
        isolated: Path, served: Served, failing: str) -> None:
    """The test author made no commit, exited non-zero, timed out or crashed (SIGSEGV):
    the stop (a hold, T7.1) says to fix red.command and names `leap run S`; with
    red.command fixed, that command, as printed, asks the author again and lands the
    slice."""
    command, red = {"no-commit": ("true", {}), "exits": ("false", {}),
                    "times-out": ("sleep 30", {"timeout": 1}),
                    "crashes": ("kill -SEGV $$", {})}[failing]
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder(f"hint-author-{failing}"), served.daemon, server.url, "hau",
                ("a", "b"), red={"command": command,
                                 "identity": "model=m,family=f,session=au", **red})
        res = p.leap("run", "hau", "--json", "--heartbeat", "0")
        assert res.code == 3, res.out[-2000:]
        said = {"no-commit": "made no commit", "exits": "exited 1",
                "times-out": "timed out after 1 s", "crashes": "exited -11 (SIGSEGV)"}[failing]
        stops = _stops(res.out)
        assert set(stops) == {"a", "b"}, stops
        for stop in stops.values():
            assert said in str(stop["reason"]) and "[T7.1]" in str(stop["reason"]), stop
            assert stop["rule"] == "T7.1", stop  # in its own field, as every stop's
            assert "red.command" in str(stop["hint"]), stop
        [again] = hinted_leap(str(stops["a"]["hint"]))
        assert again == ["run", "hau"], stops
        cfg_path = p.work / ".leap" / "config.yaml"  # the author mended
        cfg = yamlio.loads(cfg_path.read_bytes(), str(cfg_path))
        cfg["red"] = {"command": f"{sys.executable} {p.base_dir / 'author.py'}",
                      "identity": "model=m,family=f,session=au"}
        cfg_path.write_bytes(yamlio.dumps(cfg))
        landed = p.leap(*again, "--heartbeat", "0")
    assert landed.code == 0 and "landed" in landed.out, landed.out[-2000:]


@pytest.mark.parametrize("signal_name", ["KILL", "TERM"])
def test_a_test_author_stopped_from_outside_is_asked_again_with_nothing_to_fix(
        isolated: Path, served: Served, signal_name: str) -> None:
    """A test author ended by a signal from outside it (a kill, the OOM killer, a
    shutdown; a chaos hunt's `kill -9` of the builders) did nothing wrong: the stop names
    the signal and `leap run S` alone, never "fix red.command"; that command, as printed,
    with red.command unchanged, asks the author again and lands the slice."""
    base = served.folder(f"hint-author-{signal_name}")
    once = f"{base}/stopped-$LEAP_BALL"  # each ball's author is stopped once, then writes
    command = (f"if [ ! -e {once} ]; then touch {once}; kill -{signal_name} $$; fi; "
               f"exec {sys.executable} {base / 'author.py'}")
    with JurorServer("openai", jurors) as server:
        p = duo(base, served.daemon, server.url, "has", ("a", "b"),
                red={"identity": "model=m,family=f,session=au", "command": command})
        res = p.leap("run", "has", "--json", "--heartbeat", "0")
        assert res.code == 3, res.out[-2000:]
        stops = _stops(res.out)
        assert stops, res.out[-2000:]
        for stop in stops.values():
            assert f"SIG{signal_name}" in str(stop["reason"]), stop
            assert "red.command" not in str(stop["hint"]), stop  # nothing there to fix
        [again] = hinted_leap(str(next(iter(stops.values()))["hint"]))
        assert again == ["run", "has"], stops
        landed = p.leap(*again, "--heartbeat", "0")
    assert landed.code == 0 and "landed" in landed.out, landed.out[-2000:]


@pytest.mark.parametrize("field,value,said,rule", [
    ("red.command", "no-such-author-7f3 --write-red", "'no-such-author-7f3' is not on PATH",
     "T7.1"),
    ("red.command", "tools/author.sh", "'tools/author.sh' does not exist", "T7.1"),
    ("red.command", "python 'author.py",
     "does not read as a command line (No closing quotation)", "T7.1"),
    ("builder.command", "no-such-builder-7f3", "'no-such-builder-7f3' is not on PATH", "L3"),
    ("builder.identity", None, "the builder is not declared", "T4"),
], ids=["author-not-on-path", "author-no-such-file", "author-unclosed-quote",
        "builder-not-on-path", "builder-undeclared"])
def test_a_run_its_config_cannot_start_is_refused_before_a_throw_and_the_hint_leads_on(
        isolated: Path, served: Served, field: str, value: str | None, said: str,
        rule: str) -> None:
    """A red.command (T7.1) or builder.command (L3) that cannot start, or no builder
    identity (T4), is refused up front: one line naming the file, the field and the rule,
    exit 2, nothing thrown, no tree made (a broken author held every ball that needed a
    red, each after a throwaway tree); mended, the command the hint names lands the slice
    (it named `--builder`, an option `leap run` does not have)."""
    block, key = field.split(".")
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder(f"hint-no-start-{field}-{(value or '')[:5]}"), served.daemon,
                server.url, "hna", ("a", "b"))
        cfg_path = p.work / ".leap" / "config.yaml"
        cfg = yamlio.loads(cfg_path.read_bytes(), str(cfg_path))
        mended = cfg[block][key]
        if value is None:
            del cfg[block][key]
        else:
            cfg[block][key] = value
        cfg_path.write_bytes(yamlio.dumps(cfg))
        with Ledger(p.work / ".git") as ledger:
            before = ledger.view().commit
        res = p.leap("run", "hna", "--heartbeat", "0")
        assert res.code == 2, (res.out[-2000:], res.err)
        [line] = [x for x in res.err.splitlines() if field in x]
        assert ".leap/config.yaml" in line and f"[{rule}]" in line and said in line, res.err
        assert "Traceback" not in res.err + res.out
        with Ledger(p.work / ".git") as ledger:
            assert ledger.view().commit == before  # nothing thrown, nothing recorded
        assert not p.worktree("a", "hna").exists()
        [again] = hinted_leap(res.err)
        assert again == ["run", "hna"], res.err
        assert "--builder" not in res.err  # no option `leap run` does not have
        cfg[block][key] = mended
        cfg_path.write_bytes(yamlio.dumps(cfg))
        landed = p.leap(*again, "--heartbeat", "0")
    assert landed.code == 0 and "landed" in landed.out, landed.out[-2000:]


@pytest.mark.parametrize(("command", "starts"), [
    ("if true; then CMD; fi", True), ("(cd . && CMD)", True), (". /dev/null && CMD", True),
    ("{ CMD; }", True), ("# the author\nCMD", True), ("source ./env.sh && CMD", False),
    ("[[ -f env.sh ]] && CMD", False), ("select x in a; do CMD; done", False),
    ("} ; CMD", False), ("then CMD; fi", False)],
    ids=["if", "subshell", "dot", "group", "comment", "source", "double-bracket", "select",
         "closing-brace", "then"])
def test_the_preflight_takes_a_command_line_exactly_when_sh_can_start_it(
        tmp_path: Path, command: str, starts: bool) -> None:
    """Blind reviews: the preflight took the first word of `if ...; fi`, `(cd sub && ...)`
    or `. ./env.sh && ...` for a program and refused a red.command that runs: exit 2, "'if'
    is not on PATH". Then it took bash's words (`source`, `[[`, `select`) and words that
    never open a line (`}`, `then`) for the shell's own, and passed lines that /bin/sh,
    which runs them, refuses (not found, or a syntax error). It follows /bin/sh now, and
    a refusal names the field and the rule."""
    from leapgit.errors import UsageError
    from leapgit.worktrees.builder import require_program

    (tmp_path / "env.sh").write_text("X=1\n")
    command = command.replace("CMD", f"{sys.executable} -c pass")
    ran = subprocess.run(["/bin/sh", "-c", command], cwd=tmp_path, capture_output=True,
                         text=True, stdin=subprocess.DEVNULL)
    if starts:
        assert ran.returncode == 0, ran
        assert require_program(command, tmp_path, field="red.command", rule="T7.1") == command
        return
    assert ran.returncode in (2, 127), ran  # not found, or a syntax error
    with pytest.raises(UsageError) as refused:
        require_program(command, tmp_path, field="red.command", rule="T7.1")
    [problem] = refused.value.problems
    assert (problem.field, problem.rule) == ("red.command", "T7.1"), problem


@pytest.mark.parametrize("proof", ["if test -f tests/t.py; then sh tests/t.py; fi",
                                   "(sh tests/t.py)", "{ sh tests/t.py; }", "(./tests/t.py)",
                                   "sh tests/t.py; echo done", "sh tests/t.py > out/log 2>&1"],
                         ids=["if", "subshell", "group", "subshell-path", "semicolon",
                              "redirect"])
def test_a_proof_whose_files_are_there_holds_for_no_missing_dependency(
        tmp_path: Path, proof: str) -> None:
    """L2 at each round (``_dependencies``): the words of a proof kept the operators the
    shell splits off (`tests/t.py;`, `tests/t.py)`), and a redirect's target counted as a
    file the proof needs: a proof that runs was held as a missing dependency, and each
    round closed at 0 without a build (a blind review)."""
    from leapgit.worktrees.check import _dependencies

    (tmp_path / "tests").mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "tests" / "t.py").write_text("exit 0\n")
    (tmp_path / "tests" / "t.py").chmod(0o755)
    assert subprocess.run(proof, shell=True, cwd=tmp_path).returncode == 0
    ball = BallRecord(slice="s", ball="b", spec_version=1, goal="g", spec="s", scope=(),
                      proof=proof, rollback="restore-scope")
    assert _dependencies(ball, tmp_path) == []
    (tmp_path / "tests" / "t.py").unlink()  # and a file that is not there still holds
    assert [f.path for f in _dependencies(ball, tmp_path)][-1:] in (
        ["tests/t.py"], ["./tests/t.py"])


def test_a_red_command_in_a_subshell_lands_the_slice(isolated: Path, served: Served) -> None:
    """The same, end to end: such an author writes the reds and the slice lands."""
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("hint-author-subshell"), served.daemon, server.url, "hss",
                ("a", "b"))
        cfg_path = p.work / ".leap" / "config.yaml"
        cfg = yamlio.loads(cfg_path.read_bytes(), str(cfg_path))
        cfg["red"]["command"] = f"(cd . && {cfg['red']['command']})"
        cfg_path.write_bytes(yamlio.dumps(cfg))
        landed = p.leap("run", "hss", "--heartbeat", "0")
    assert landed.code == 0 and "landed" in landed.out, (landed.out[-2000:], landed.err)


def test_status_of_a_redless_ball_names_leap_run_when_a_test_author_is_configured(
        isolated: Path, served: Served) -> None:
    """T7.1: with red.command set, `leap status` named only the red by hand for a ball with
    no red (a walk-away hunt, after a kill in the author's phase); `leap run S` asks the
    author, and is named first. Run as printed, it lands the slice."""
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("hint-status-author"), served.daemon, server.url, "hsa",
                ("a", "b"))
        status = p.leap("status", "hsa")
        assert status.code == 0, status
        line = next(x for x in status.out.splitlines() if "ready to throw once its red" in x)
        named = hinted_leap(line)
        assert named[0] == ["run", "hsa"] and ["ball", "base", "hsa", "a"] in named, line
        landed = p.leap(*named[0], "--heartbeat", "0")
    assert landed.code == 0 and "landed" in landed.out, landed.out[-2000:]


def test_a_merge_stop_carries_its_hint_and_rule_in_their_own_fields(
        isolated: Path, served: Served) -> None:
    """Stop 36's telemetry review: a merge stop inside `leap run --json` put its hint into
    the `reason` text ("...; commit or stash them"), so an agent reading `hint` found none.
    The stop event has `reason` and `hint` apart, as a ball's stop has (and `rule` where
    the error has one: this one, bad input, has none); followed (its `git -C W stash`, not
    the commit it named, which the server refuses on the spine), the run lands."""
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("hint-merge-stop"), served.daemon, server.url, "hms", ("a", "b"))
        init = p.work / "calc" / "__init__.py"
        init.write_text(init.read_text() + "# not committed\n")
        res = p.leap("run", "hms", "--json", "--heartbeat", "0")
        assert res.code == 2, res.out[-2000:]
        [stop] = [e for e in events(res.out) if e["event"] == "stop" and "ball" not in e]
        assert str(stop["reason"]).startswith("merge: the spine 'main' is checked out in"), stop
        [stash] = [c for c in str(stop["hint"]).split("`")[1::2] if c.startswith("git ")]
        assert stash.endswith(" stash") and "commit" not in str(stop["hint"]), stop
        assert "stash" not in str(stop["reason"]) and stop["exit_code"] == 2, stop
        assert "rule" not in stop and "[" not in str(stop["reason"]), stop
        subprocess.run(stash, shell=True, cwd=p.base_dir, check=True)  # as printed
        landed = p.leap("run", "hms", "--heartbeat", "0")
    assert landed.code == 0 and "landed" in landed.out, landed.out[-2000:]


def test_a_committed_config_changed_here_stops_no_merge(isolated: Path,
                                                        served: Served) -> None:
    """A newcomer's hunt: the config committed before the cut, its builder and jurors set
    after, in the spine's checkout: every merge stopped on "uncommitted changes; commit or
    stash them", and neither led on (the server refuses a commit on the spine; stashed, the
    config the merge runs on was gone). leapgit's own config is read from the work tree and
    a fast-forward keeps its changes: the slice lands, the change still there."""
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("hint-config-here"), served.daemon, server.url, "hch",
                ("a", "b"), config={"round_limit": 4})  # committed on the spine
        config = p.work / ".leap" / "config.yaml"
        assert git("ls-files", ".leap/config.yaml", cwd=p.work) == ".leap/config.yaml"
        config.write_text(config.read_text() + "# set here, after the commit\n")
        landed = p.leap("run", "hch", "--heartbeat", "0")
        assert landed.code == 0 and "landed" in landed.out, landed.out[-2000:]
    assert config.read_text().endswith("# set here, after the commit\n")


def test_a_hold_and_a_refuse_lead_on_with_the_commands_they_name(isolated: Path,
                                                                 served: Served) -> None:
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("hint-stuck"), served.daemon, server.url, "hst", ("a", "b"),
                builder=MOODY)
        (p.base_dir / "hold").write_text("")
        (p.base_dir / "breach").write_text("")
        res = p.leap("run", "hst", "--json", "--heartbeat", "0")
        assert res.code == 1, res.out[-2000:]  # b refused, a held: the refuse outranks
        stops = _stops(res.out)
        assert _hinted(stops["a"]["hint"]) == ["leap run hst --resume-holds"], stops["a"]
        assert "leap ball respec hst b FILE" in _hinted(stops["b"]["hint"]), stops["b"]
        (p.base_dir / "hold").unlink()
        (p.base_dir / "breach").unlink()
        # a's worktree and branch removed by hand at its checkpoint: the resume puts the
        # branch back where the ledger left it, and says so to a program too
        tip = git("rev-parse", "refs/heads/leap/ball/hst/a", cwd=p.work)
        git("worktree", "remove", "--force", str(p.worktree("a", "hst")), cwd=p.work)
        git("branch", "-D", "leap/ball/hst/a", cwd=p.work)
        resumed = p.leap("run", "hst", "--resume-holds", "--json", "--heartbeat", "0")
        said = events(resumed.out)
        for event in said:
            validate(event, "run-event", "leap run --json")
        thrown = [e for e in said if e["event"] == "throw"]
        assert [(e["ball"], e["episode"]) for e in thrown] == [("a", 2)], resumed.out[-2000:]
        told = [e["line"] for e in said if e["event"] == "log" and e.get("ball") == "a"
                and "was gone" in str(e["line"])]
        assert told == ["the branch leap/ball/hst/a was gone: put back at the last commit the "
                        f"ledger recorded on it, {tip[:12]}"], told
        table = next(e for e in events(resumed.out) if e["event"] == "table")
        rows = {r["ball"]: r for r in table["balls"]}  # type: ignore[union-attr]
        assert rows["a"]["state"] == "passed" and rows["b"]["state"] == "stopped", rows
        assert _respec(p, "hst", "b", "the builder wrote outside the scope") == 0
        landed = p.leap("run", "hst", "--heartbeat", "0")
    assert landed.code == 0 and "landed" in landed.out, landed.out[-2000:]



# the world's builder, but one that exits 3 with nothing done while `broken` exists: the
# same failure twice in a row stops its ball (L6)
BROKEN = textwrap.dedent("""\
    import pathlib, runpy, sys
    here = pathlib.Path(sys.argv[0]).parent
    if (here / "broken").exists():
        sys.exit(3)
    sys.argv[0] = str(here / "builder.py")
    runpy.run_path(str(here / "builder.py"), run_name="__main__")
    """)


def test_a_stuck_builder_stop_leads_on_once_the_builder_is_fixed(isolated: Path,
                                                                 served: Served) -> None:
    """Every hint leads on: a builder that fails the same way twice ends its episode at 0
    and stops its ball with "fix builder.command, then `leap run S --resume-holds` goes
    on"; with the builder fixed, exactly that command lands the slice."""
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("hint-broken"), served.daemon, server.url, "hbr", ("a", "b"),
                builder=BROKEN)
        (p.base_dir / "broken").write_text("")
        res = p.leap("run", "hbr", "--json", "--heartbeat", "0")
        assert res.code == 3, res.out[-2000:]
        stops = _stops(res.out)
        assert "a" in stops and "failed the same way twice" in str(stops["a"]["reason"]), \
            stops
        assert "fix builder.command" in str(stops["a"]["hint"]), stops["a"]
        # one way on: not `leap run` (which stops again at the ended episode), nor the
        # receipt's `leap throw --resume --run` (blind review)
        assert _hinted(stops["a"]["hint"]) == ["leap run hbr --resume-holds"], stops["a"]
        assert "leap throw" not in str(stops["a"]["reason"]), stops["a"]
        (p.base_dir / "broken").unlink()  # the builder is fixed
        landed = p.leap("run", "hbr", "--resume-holds", "--heartbeat", "0")  # the hint
    assert landed.code == 0 and "landed" in landed.out, landed.out[-3000:]


def test_an_episode_resumed_that_ends_at_0_again_leads_on_to_a_respec(
        isolated: Path, served: Served) -> None:
    """Every hint leads on: a held ball resumed once (`--resume-holds`) that holds again
    stops with "`leap ball respec S B FILE`, then `leap run S`"; exactly those land it."""
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("hint-again"), served.daemon, server.url, "hag", ("a", "b"),
                builder=MOODY)
        (p.base_dir / "hold").write_text("")
        first = p.leap("run", "hag", "--json", "--heartbeat", "0")
        assert first.code == 3 and _hinted(_stops(first.out)["a"]["hint"]) == \
            ["leap run hag --resume-holds"], first.out[-2000:]
        again = p.leap("run", "hag", "--resume-holds", "--json", "--heartbeat", "0")
        assert again.code == 3, again.out[-2000:]
        stop = _stops(again.out)["a"]
        assert "ended at 0 again" in str(stop["reason"]), stop
        assert _hinted(stop["hint"]) == ["leap ball respec hag a FILE",
                                         "leap run hag --resume-holds"], stop  # as given
        # a chaos hunt: a plain `leap run` named --resume-holds here, which resumed nothing
        # and named `leap run` again: the two sent the user to each other
        plain = p.leap("run", "hag", "--json", "--heartbeat", "0")
        assert plain.code == 3, plain.out[-2000:]
        assert _hinted(_stops(plain.out)["a"]["hint"]) == \
            ["leap ball respec hag a FILE", "leap run hag"], plain.out[-2000:]
        shown = p.leap("status", "hag").out  # a blind review: status named a third episode
        assert "`leap ball respec hag a FILE`, then `leap run hag`" in shown, shown
        assert "--resume` starts a new episode" not in shown, shown
        (p.base_dir / "hold").unlink()  # the repaired spec is one the builder can meet
        assert _respec(p, "hag", "a", "held twice") == 0  # the hint
        shown = p.leap("status", "hag").out  # a blind review: still "needs repair" after it
        assert "needs repair" not in shown and "respecced to version 2: `leap run hag`" \
            in shown, shown
        landed = p.leap("run", "hag", "--heartbeat", "0")  # then `leap run`
    assert landed.code == 0 and "landed" in landed.out, landed.out[-2000:]


# the world's builder, but while `sleepy` exists it says it started and sleeps (a build
# the person stops with Ctrl-C)
SLEEPY = textwrap.dedent("""\
    import os, pathlib, runpy, sys, time
    here = pathlib.Path(sys.argv[0]).parent
    if (here / "sleepy").exists():
        (here / f"building-{os.environ['LEAP_BALL']}-{os.getpid()}").write_text("")
        time.sleep(60)
    if (here / "hold").exists():
        pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 0\\nevidence: stuck\\n")
        sys.exit(0)
    sys.argv[0] = str(here / "builder.py")
    runpy.run_path(str(here / "builder.py"), run_name="__main__")
    """)


def _interrupt_a_build(p: Project, slice_id: str, ball: str = "a",
                       given: tuple[str, ...] = ()) -> str:
    """`leap run S [given]` in a process, stopped with one Ctrl-C once ``ball``'s builder
    sits (not another ball's: under load a's had not started when b's had, and its round
    was not one of those stopped): its output."""
    before = set(p.base_dir.glob(f"building-{ball}-*"))
    proc = subprocess.Popen([sys.executable, "-m", "leapgit", "run", slice_id, *given,
                             "--json", "--heartbeat", "0"], cwd=p.work, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None and \
                set(p.base_dir.glob(f"building-{ball}-*")) == before:
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()[0][-2000:]
        proc.send_signal(signal.SIGINT)
        out = proc.communicate(timeout=60)[0]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, out[-2000:]
    return out


def test_a_run_s_hint_to_run_again_keeps_the_options_it_was_given(
        isolated: Path, served: Served) -> None:
    """A hint hunt: a `leap run S --jobs 1 --resume-holds` stopped by Ctrl-C said "`leap
    run S` goes on from here", without the options it was given. It names them; run as
    printed, the slice lands. (A time budget, --max-minutes, is a sitting's own: the
    same budget again could stop a merge longer than it every time.)"""
    given = ("--jobs", "1", "--resume-holds")
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("hint-given"), served.daemon, server.url, "hgv", ("a", "b"),
                builder=SLEEPY)
        (p.base_dir / "sleepy").write_text("")
        out = _interrupt_a_build(p, "hgv", given=given)
        stop = next(e for e in events(out) if e["event"] == "stop")
        [again] = hinted_leap(str(stop["hint"]))
        assert again == ["run", "hgv", *given], stop
        (p.base_dir / "sleepy").unlink()
        landed = p.leap(*again, "--heartbeat", "0")
    assert landed.code == 0 and "landed" in landed.out, landed.out[-3000:]


@pytest.mark.parametrize("moment", ["convening", "build"])
def test_status_after_a_killed_run_names_what_goes_on_with_a_ball_in_flight(
        isolated: Path, served: Served, moment: str) -> None:
    """A chaos hunt: after `leap run` was killed while a ball's claim waited for its score
    (or its round for its build), `leap status` named no command for it at all. It names
    `leap run S`, which scores the claim or builds the round; run exactly, it lands."""
    from tests.loop.kills import is_event, run_until

    with JurorServer("openai", jurors) as server:
        p = duo(served.folder(f"hint-in-flight-{moment}"), served.daemon, server.url,
                "hif", ("a", "b"))
        hit = is_event("score", step="convening") if moment == "convening" else \
            is_event("throw")
        killed, _code, said = run_until(p.work, "hif", hit, env=p.env)
        assert killed, said[-2000:]
        shown = p.leap("status", "hif").out
        nexts = [ln for ln in shown.splitlines() if ln.strip().startswith("next: ")]
        assert nexts, shown
        wanted = "scores its claimed pass" if moment == "convening" else "builds its next round"
        assert any(wanted in ln for ln in nexts), shown
        # an orchestrating agent reads `--json`: each ball carries the lines shown under
        # it, the next step among them (a telemetry gap: only the text named it)
        balls = [b for wave in json.loads(p.leap("status", "hif", "--json").out)["slices"][0]
                 ["waves"] for b in wave]
        told = [ln for b in balls for ln in b["lines"] if ln.startswith("next: ")]
        assert told == [ln.strip() for ln in nexts], (told, nexts)
        [again] = {tuple(c) for ln in told for c in hinted_leap(ln)}
        assert again == ("run", "hif"), told
        landed = p.leap(*again, "--heartbeat", "0")
    assert landed.code == 0 and "landed" in landed.out, landed.out[-3000:]


def test_rounds_the_person_stopped_do_not_end_in_a_checkpoint_to_resume_or_a_respec(
        isolated: Path, served: Served) -> None:
    """L6: a Ctrl-C during a build records that round at 0, and the stop says `leap run S`
    goes on from here. Rounds so stopped up to the limit ended the episode as a
    checkpoint that only `--resume-holds` resumed, and a second such episode was blamed
    on the spec ("needs repair (L3)"), though no builder ever answered (a walk-away
    hunt). An episode whose last round leap stopped is resumed by `leap run` itself and
    counts as no hold of the builder's: as printed, `leap run S` lands the slice."""
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("hint-ctrl-c"), served.daemon, server.url, "hcc", ("a", "b"),
                builder=SLEEPY, config={"round_limit": 2})
        (p.base_dir / "sleepy").write_text("")
        for _ in range(4):  # two episodes of two rounds, each round stopped
            out = _interrupt_a_build(p, "hcc")
            stop = next(e for e in events(out) if e["event"] == "stop")
            assert hinted_leap(str(stop["hint"])) == [["run", "hcc"]], stop
        with Ledger(p.work / ".git") as ledger:
            view = ledger.view()
            assert query.checkpoint(view, "hcc", "a", 2) is not None  # both episodes ended
        shown = p.leap("status", "hcc").out  # as `leap run` says it
        assert "leap stopped its last round: `leap run hcc` resumes it" in shown, shown
        assert "needs repair" not in shown and "--resume" not in shown, shown
        (p.base_dir / "sleepy").unlink()
        landed = p.leap("run", "hcc", "--json", "--heartbeat", "0")
    assert landed.code == 0 and "landed" in landed.out, landed.out[-3000:]
    resumed = [e for e in events(landed.out) if e["event"] == "throw" and e.get("resumed")]
    assert resumed and "leap stopped its last round" in str(resumed[0]["detail"]), resumed


def test_after_an_episode_leap_stopped_the_builders_first_hold_is_resumed_once_as_status_says(
        isolated: Path, served: Served) -> None:
    """A blind review: episode 1 ended as leap stopped it, episode 2 (resumed by `leap run`
    itself) ended at 0 by the builder's word. That is the builder's first hold: `leap run`
    names `--resume-holds`, and `leap status` said "the spec needs repair" (it counted
    every resume). Both say the same now, and the named command goes on."""
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("hint-ctrl-c-hold"), served.daemon, server.url, "hch",
                ("a", "b"), builder=SLEEPY, config={"round_limit": 2})
        (p.base_dir / "sleepy").write_text("")
        for _ in range(2):
            _interrupt_a_build(p, "hch")
        (p.base_dir / "sleepy").unlink()
        (p.base_dir / "hold").write_text("")
        held = p.leap("run", "hch", "--json", "--heartbeat", "0")
        assert held.code == 3, held.out[-3000:]
        stop = _stops(held.out)["a"]
        assert _hinted(stop["hint"]) == ["leap run hch --resume-holds"], stop
        shown = p.leap("status", "hch").out
        assert "needs repair" not in shown, shown
        (p.base_dir / "hold").unlink()
        landed = p.leap("run", "hch", "--resume-holds", "--heartbeat", "0")
    assert landed.code == 0 and "landed" in landed.out, landed.out[-3000:]


def test_a_ball_blocked_by_a_refused_dependency_names_that_dependency_s_repair(
        isolated: Path, served: Served) -> None:
    """Every hint leads on (dead-end hunt): d depends on a and b; b refused (-1: its builder wrote
    outside its scope) blocks d, whose stop named nothing. It names b's respec and the run;
    exactly those land both."""
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("hint-blocked"), served.daemon, server.url, "hbl", ("a", "b", "d"),
                builder=MOODY)
        (p.base_dir / "breach").write_text("")
        res = p.leap("run", "hbl", "--json", "--heartbeat", "0")
        assert res.code == 1, res.out[-2000:]
        stops = _stops(res.out)
        assert "blocked" in str(stops["d"]["reason"]), stops
        assert _hinted(stops["d"]["hint"]) == ["leap ball respec hbl b FILE", "leap run hbl"], \
            stops["d"]
        (p.base_dir / "breach").unlink()
        assert _respec(p, "hbl", "b", "the builder wrote outside the scope") == 0  # the hint
        landed = p.leap("run", "hbl", "--heartbeat", "0")
    assert landed.code == 0 and "landed" in landed.out, landed.out[-2000:]


@pytest.mark.parametrize("limit", [4, 1], ids=["a-round-to-spare", "the-last-round"])
def test_a_tribunal_out_of_reach_stops_the_ball_and_its_hint_leads_on(
        isolated: Path, served: Served, limit: int) -> None:
    """The dead-end hunt: with no juror in reach, each score held (T6) and `leap run` had
    the builder build again on the same candidate, until a T9 escalation blamed the spec.
    The run now seats the tribunal once more, then stops the ball, naming `leap run` once
    the jurors answer; run again while they are still out, it spends no round either; with
    them back, exactly that command lands the slice. On the last round too, whose held
    score ended the episode, so `leap run` resumed a new one (blind review)."""
    from leapgit.records import yamlio

    with JurorServer("openai", jurors) as server:
        p = duo(served.folder(f"hint-jurors-{limit}"), served.daemon, server.url, "hjr",
                ("a", "b"), config={"round_limit": limit})
        cfg_path = p.work / ".leap" / "config.yaml"
        cfg = yamlio.loads(cfg_path.read_bytes(), str(cfg_path))
        cfg["tribunal"]["rungs"][0]["endpoint"] = "http://127.0.0.1:9"  # nobody answers
        cfg_path.write_bytes(yamlio.dumps(cfg))
        res = p.leap("run", "hjr", "--json", "--heartbeat", "0")
        assert res.code == 3, res.out[-2000:]
        stop = _stops(res.out)["a"]
        assert "the tribunal gave no verdict" in str(stop["reason"]), stop
        assert _hinted(stop["hint"]) == ["leap tribunal rungs --probe", "leap run hjr"], stop
        sat = [e for e in events(res.out) if e["event"] == "score" and e["ball"] == "a"
               and e.get("step") == "convening"]
        assert len(sat) == 2, sat  # once more, then the stop
        again = p.leap("run", "hjr", "--json", "--heartbeat", "0")  # the jurors still out
        assert again.code == 3, again.out[-2000:]
        for out in (res.out, again.out):
            built = [e for e in events(out) if e["event"] == "round" and e["ball"] == "a"
                     and str(e.get("step", "")) == "build" and e.get("round", 1) > 1]
            assert built == [], built  # no round spent on a missing verdict
        probed = p.leap("tribunal", "rungs", "--probe")  # the hint's first command
        assert probed.code == 3, probed  # it names the rung that does not answer
        cfg["tribunal"]["rungs"][0]["endpoint"] = server.url  # the jurors are back
        cfg_path.write_bytes(yamlio.dumps(cfg))
        assert p.leap("tribunal", "rungs", "--probe").code == 0  # now it answers
        landed = p.leap("run", "hjr", "--heartbeat", "0")  # the hint, exactly
    assert landed.code == 0 and "landed" in landed.out, landed.out[-2000:]


# a's builder commits five rounds in one call (hooks on): the post-commit hook records 1-4,
# the fourth with a checkpoint, and refuses the fifth (L6) while the driver's round is open
FIVE_IN_ONE = textwrap.dedent("""\
    import json, os, pathlib, runpy, subprocess, sys
    here = pathlib.Path(sys.argv[0]).parent
    if os.environ["LEAP_BALL"] == "a" and not (here / "fixed").exists():
        code = json.loads((here / "plan.json").read_text())["a"]["calc/a.py"]
        for r in range(1, 6):
            pathlib.Path("calc/a.py").write_text(code + f"# step {r}\\n")
            subprocess.run(["git", "add", "-A"], check=True)
            said = 1 if r == 4 and (here / "claim4").exists() else 0
            subprocess.run(["git", "commit", "-q", "-m", f"step {r}\\n\\nLeap-Round: {r}\\n"
                            f"Leap-Outcome: {said}\\nLeap-Evidence: step {r}\\n"])
        sys.exit(0)
    sys.argv[0] = str(here / "builder.py")
    runpy.run_path(str(here / "builder.py"), run_name="__main__")
    """)


def test_a_builder_that_commits_past_the_round_limit_is_a_hold_that_leads_on(
        isolated: Path, served: Served) -> None:
    """A hunt with misbehaving builders: five rounds committed in one call ended the episode
    under the driver's open round; `leap run` stopped with exit 2 (bad input), the same
    reason twice, and no hint. A blind review: the next episode then recorded a round no
    builder ran, with the last episode's builder's word."""
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("hint-five"), served.daemon, server.url, "five1", ("a", "b"),
                builder=FIVE_IN_ONE)
        first = p.leap("run", "five1", "--json", "--heartbeat", "0")
        assert first.code == 3, first.out[-3000:]
        hint = _stops(first.out)["a"].get("hint")
        assert _hinted(hint) == ["leap run five1 --resume-holds"], first.out[-3000:]
        assert "is kept as refs/leap/" in first.out, first.out[-3000:]  # the fifth commit
        (p.base_dir / "fixed").write_text("")
        landed = p.leap(*_hinted(hint)[0].split()[1:], "--heartbeat", "0")  # the hint
    assert landed.code == 0 and "landed" in landed.out, landed.out[-3000:]
    with Ledger(p.work / ".git") as ledger:
        second = query.receipts(ledger.require(), "five1", "a", 2)
    assert second and all("killed" not in r.evidence for r in second), second


def test_a_builder_whose_own_fourth_round_claims_a_pass_before_a_fifth_is_scored(
        isolated: Path, served: Served) -> None:
    """A blind review: with round 4 a claim, the run still stopped with exit 2 and no hint;
    the claim waits for its score, as any claim."""
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("hint-claim4"), served.daemon, server.url, "claim4", ("a", "b"),
                builder=FIVE_IN_ONE)
        (p.base_dir / "claim4").write_text("")
        ran = p.leap("run", "claim4", "--heartbeat", "0")
    assert ran.code == 0 and "landed" in ran.out, ran.out[-3000:]


def _of_a(call: Call) -> bool:
    """A juror's call that grades ball a's candidate (its envelope holds calc/a.py)."""
    return "calc/a.py" in json.dumps(call.body.get("messages", []))


def test_jurors_that_answer_garbage_escalate_to_their_rungs_and_status_says_the_same(
        isolated: Path, served: Served) -> None:
    """A hunt with misbehaving jurors: every juror answered a's candidate with broken JSON
    (T6: a valid refuse). The T9 stop said "findings: none" and named a respec of a sound
    spec, and `leap status` named another step, calling round 3 the last the limit allows.
    Both now say the jurors refused without a finding, and name the same steps, which land
    the slice once the jurors answer."""
    broken = [True]

    def garbled(call: Call) -> Reply:
        if broken[0] and _of_a(call):
            return Reply('{"verdict": "pass", "findings": [')
        return jurors(call)

    with JurorServer("openai", garbled) as server:
        p = duo(served.folder("hint-garbage"), served.daemon, server.url, "garb", ("a", "b"))
        first = p.leap("run", "garb", "--json", "--heartbeat", "0")
        assert first.code == 3, first.out[-3000:]
        stop = _stops(first.out)["a"]
        assert "the refusals carry no finding to answer" in str(stop["reason"]), stop
        assert "answered badly" in str(stop["reason"]), stop
        steps = _hinted(stop["hint"])
        assert steps == ["leap tribunal rungs --probe", "leap throw garb --ball a --resume",
                         "leap run garb"], stop
        shown = p.leap("status", "garb").out
        assert f"next: {stop['hint']}" in shown, shown  # one next step, said alike
        assert "the last the limit allows" not in shown, shown
        broken[0] = False  # the rungs mended
        for step in steps:  # the hint, exactly
            done = p.leap(*step.split()[1:])
            assert done.code == 0, (step, done.out[-3000:], done.err)
    assert "landed" in done.out, done.out[-3000:]


def test_refusals_with_info_notes_only_are_no_jurors_fault(
        isolated: Path, served: Served) -> None:
    """A blind review: refusals whose findings were all info notes (no finding a builder
    answers) were taken for refusals with no finding at all, and sent the person to mend
    sound rungs; they are the spec's to decide, as any escalation with findings."""
    def noting(call: Call) -> Reply:
        if call.lens == "defect" and _of_a(call):
            return Reply(verdict("defect", "refuse", [{
                "severity": "info", "file": "calc/a.py", "claim": "a matter of taste",
                "evidence": "def"}]))
        return jurors(call)

    with JurorServer("openai", noting) as server:
        p = duo(served.folder("hint-info"), served.daemon, server.url, "info", ("a", "b"))
        ran = p.leap("run", "info", "--json", "--heartbeat", "0")
    assert ran.code == 3, ran.out[-3000:]
    stop = _stops(ran.out)["a"]
    assert "T9 escalation" in str(stop["reason"]), stop
    assert "carry no finding" not in str(stop["reason"]), stop
    assert _hinted(stop["hint"]) == ["leap log --slice info", "leap ball respec info a FILE",
                                     "leap run info"], stop


def test_a_candidate_that_fails_its_proof_once_then_passes_is_said_to_be_flaky(
        isolated: Path, served: Served) -> None:
    """A hunt with misbehaving builders: a's code is wrong on its first import only (a
    count kept outside the repository); its first score refused it (L7.4), and after the
    respec the same bytes passed with no word of the first answer."""
    count = "import pathlib\n_n = pathlib.Path(__file__).resolve().parents[3] / 'imports'\n" \
        "_c = int(_n.read_text()) + 1 if _n.exists() else 1\n_n.write_text(str(_c))\n\n\n" \
        "def fa():\n    return 1 if _c > 1 else 0\n"
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("hint-flaky"), served.daemon, server.url, "flaky", ("a", "b"),
                plan={"a": {"calc/a.py": count}, "b": {"calc/b.py": "def fb():\n    return 2\n"}})
        first = p.leap("run", "flaky", "--json", "--heartbeat", "0")
        assert first.code == 1, first.out[-3000:]
        stop = _stops(first.out)["a"]
        assert "tests: proof" in str(stop["reason"]), stop
        with Ledger(p.work / ".git") as ledger:
            from leapgit.ledger import history

            assert [s.rule for s in history.scores(ledger.require(), "flaky", "a")] == ["L7.4"]
        assert _respec(p, "flaky", "a", "the proof failed once") == 0  # the hint
        landed = p.leap("run", "flaky", "--heartbeat", "0")
    assert landed.code == 0 and "landed" in landed.out, landed.out[-3000:]
    assert "refused this same candidate on its proof or tests (L7.4): one of them is flaky" \
        in landed.out, landed.out[-3000:]


def test_a_remote_runs_hints_to_run_again_name_its_remote() -> None:
    """A blind review: a `leap run S --remote R` that stopped said "`leap run S` again";
    followed as printed, that run built the published balls here, without a word. Every
    hint of such a run, in its events, its table and its errors, names `--remote R`; and
    (a hint hunt) every other option that changes what the run does, as it was given."""
    import io

    from leapgit.commands.run import table_lines
    from leapgit.loop.drive import BallEnd, Options, RunEnd
    from leapgit.loop.events import Events, as_started

    up = ["--remote", "up"]
    said = "fix builder.command, then `leap run s1` again; or `leap run s1 --resume-holds`"
    assert as_started(said, "s1", up) == (
        "fix builder.command, then `leap run s1 --remote up` again; or `leap run s1 "
        "--remote up --resume-holds`")
    assert as_started(said, "s1", []) == said
    kept = "`leap run s1 --remote up` again; `leap run s10` is another slice's"
    assert as_started(kept, "s1", up) == kept
    given = Options(jobs=1, max_minutes=30, resume_holds=True, remote="up",
                    take_over=True).given()  # a time budget is a sitting's own
    assert given == ["--jobs", "1", "--resume-holds", "--remote", "up"]
    assert as_started(said, "s1", given) == (
        "fix builder.command, then `leap run s1 --jobs 1 --resume-holds --remote up` again; "
        "or `leap run s1 --jobs 1 --remote up --resume-holds`")
    out = io.StringIO()
    Events(out, "s1", as_json=True, given=up).emit("stop", "a", 0, reason="held",
                                                   hint="`leap run s1` again")
    assert json.loads(out.getvalue())["hint"] == "`leap run s1 --remote up` again"
    out = io.StringIO()  # a table's rows and a list of details too (a blind review)
    Events(out, "s1", as_json=True, given=up).emit(
        "table", balls=[{"ball": "a", "hint": "`leap run s1 --resume-holds` resumes it"}],
        details=["then `leap run s1` again"])
    table = json.loads(out.getvalue())
    assert table["balls"][0]["hint"] == "`leap run s1 --remote up --resume-holds` resumes it"
    assert table["details"] == ["then `leap run s1 --remote up` again"]
    end = RunEnd("s1", [BallEnd("a", 0, "stopped", "held", 3, "`leap run s1` again")],
                 stopped="a hold; `leap run s1` goes on")
    shown = "\n".join(table_lines(end, up))
    assert "next: `leap run s1 --remote up` again" in shown, shown
    assert "stopped: a hold; `leap run s1 --remote up` goes on" in shown, shown


def test_a_branch_put_back_is_said_to_a_person_too(isolated: Path, served: Served) -> None:
    """A blind review: the put-back line of `leap run` without `--json` was not tested."""
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("hint-putback"), served.daemon, server.url, "hpb", ("a", "b"),
                builder=MOODY)
        (p.base_dir / "hold").write_text("")
        assert p.leap("run", "hpb", "--heartbeat", "0").code == 3
        tip = git("rev-parse", "refs/heads/leap/ball/hpb/a", cwd=p.work)
        (p.base_dir / "hold").unlink()
        git("worktree", "remove", "--force", str(p.worktree("a", "hpb")), cwd=p.work)
        git("branch", "-D", "leap/ball/hpb/a", cwd=p.work)
        resumed = p.leap("run", "hpb", "--resume-holds", "--heartbeat", "0")
    assert resumed.code == 0, resumed.out[-2000:]
    assert "the branch leap/ball/hpb/a was gone: put back at the last commit the ledger " \
        f"recorded on it, {tip[:12]}" in resumed.out, resumed.out[-2000:]


def test_a_run_of_an_abandoned_slice_stops_with_l3_and_its_hint_leads_on(
        isolated: Path, served: Served) -> None:
    """`leap run --json` of an abandoned slice: one stop with the throw's L3 and the
    abandon's reason, whose commands run as printed (the new cut is its own test:
    test_aggregate)."""
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("hint-gone"), served.daemon, server.url, "gone", ("a", "b"))
        assert p.red("a", "gone", ("tests/test_a.py", red_test("a"))).code == 0
        assert p.leap("throw", "gone", "--ball", "a").code == 0
        assert p.leap("slice", "abandon", "gone", "--reason", "not wanted").code == 0
        res = p.leap("run", "gone", "--json", "--heartbeat", "0")
    assert res.code == 1, res
    said = events(res.out)
    for event in said:
        validate(event, "run-event", "leap run --json")
    [stop] = [e for e in said if e["event"] == "stop"]
    assert stop["rule"] == "L3" and "not wanted" in str(stop["reason"]), stop
    commands = hinted_leap(str(stop["hint"]))
    assert commands == [["worktree", "prune", "gone"], ["slice", "cut", "FILE"]], commands
    assert p.worktree("a", "gone").exists()
    pruned = p.leap(*commands[0])
    assert pruned.code == 0 and not p.worktree("a", "gone").exists(), pruned


def test_a_merge_or_a_dependents_base_asked_too_early_names_what_leads_on(
        isolated: Path, served: Served) -> None:
    """A hint-coverage hunt: `leap merge` of a slice no ball of which passed said "first
    `leap score S a`", and so did `leap ball base S c` while c's dependency a had not
    passed; run as printed, `leap score` of a ball never thrown only refused. Now the hint
    names `leap run S` for a ball with nothing to score, `leap score S a` once a's builder
    claims a pass; each, run exactly, leads on, and the slice lands."""
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("hint-too-early"), served.daemon, server.url, "hte", ("a", "c"))
        early, base = p.leap("merge", "hte"), p.leap("ball", "base", "hte", "c")
        assert early.code == 3 and "not passed: a (no pass), c (no pass)" in early.err, early
        assert hinted_leap(early.err) == [["run", "hte"]], early
        assert base.code == 3 and hinted_leap(base.err) == [["run", "hte"]], base
        assert p.red("a", "hte", ("tests/test_a.py", red_test("a"))).code == 0
        built = p.leap("throw", "hte", "--ball", "a", "--run")
        assert built.code == 0 and "last pass (claim)" in built.out, built
        claimed, base = p.leap("merge", "hte"), p.leap("ball", "base", "hte", "c")
        assert hinted_leap(claimed.err) == [["score", "hte", "a"], ["run", "hte"]], claimed
        assert hinted_leap(base.err) == [["score", "hte", "a"]], base
        scored = p.leap(*hinted_leap(base.err)[0])  # the hint, exactly
        assert scored.code == 0, scored
        assert p.leap("ball", "base", "hte", "c").code == 0  # c has its base now
        landed = p.leap(*hinted_leap(claimed.err)[1], "--heartbeat", "0")
    assert landed.code == 0 and "landed" in landed.out, landed.out[-2000:]


AUTHORED_AT_TOP = ("import unittest\nfrom calc.a import fa\n\n\nclass T(unittest.TestCase):\n"
                   "    def test_a(self):\n        self.assertEqual(fa(), 1)\n")


def test_an_authored_red_importing_its_ball_s_module_at_its_top_names_red_command(
        isolated: Path, served: Served) -> None:
    """A blind review: the test author's red imported the module its ball writes at its
    top; the stop told the person to "import it inside the test function", a file of the
    author's, and `leap run` asked the author again for the same red. It names
    red.command, the person's to change; once it writes the import inside, the run it
    names lands."""
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("hint-authored-import"), served.daemon, server.url, "haim",
                ("a", "b"))
        reds_file = p.base_dir / "reds.json"
        good = reds_file.read_text()
        reds = json.loads(good)
        reds["a"][1] = AUTHORED_AT_TOP
        reds_file.write_text(json.dumps(reds))
        res = p.leap("run", "haim", "--json", "--heartbeat", "0")
        hint = str(_stops(res.out)["a"]["hint"])
        assert "make red.command write its import inside the test function" in hint, hint
        reds_file.write_text(good)  # red.command mended, as the hint says
        [again] = [c for c in hinted_leap(hint) if c[0] == "run"]
        landed = p.leap(*again, "--heartbeat", "0")
    assert landed.code == 0 and "landed" in landed.out, landed.out[-3000:]
