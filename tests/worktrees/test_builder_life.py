"""Builders that fail fast, and show life (issue 14 item 9; L3, L6): a builder whose program
does not resolve is refused before any worktree or round; two rounds that fail the same way
stop the run instead of burning the rest; a running builder shows a heartbeat with the last
line of its log, whose path is shown when the round starts."""

from __future__ import annotations

import io
import os
import re
import stat
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from leapgit.commands.throw import drive_builders, throw
from leapgit.ledger import query
from leapgit.ledger.store import Ledger
from leapgit.records.types import STUCK, Receipt
from tests.support import IDENTITY, git, leap
from tests.worktrees.conftest import set_config, worktree_of

Builder = Callable[..., str]


def _receipts(repo: Path) -> list[Receipt]:
    with Ledger(repo / ".git") as ledger:
        return query.receipts(ledger.require(), "dia", "A", 1)


@pytest.mark.parametrize("command", ["my-agnet --task \"$LEAP_HANDOFF\"",
                                     "LEVEL=3 /nowhere/agent run", "./scripts/agent.sh"])
def test_a_builder_program_that_does_not_resolve_is_refused_before_any_worktree(
        diamond: Path, command: str) -> None:
    set_config(diamond, builder=command)
    branches = git("for-each-ref", "--format=%(refname)", cwd=diamond)
    worktrees = git("worktree", "list", "--porcelain", cwd=diamond)
    r = leap("throw", "dia", "--run", cwd=diamond)
    assert r.code == 2, r
    program = command.split()[1] if command.startswith("LEVEL") else command.split()[0]
    assert f"builder.command: its program {program!r} " in r.err, r
    assert ".leap/config.yaml" in r.err and "no ball was thrown" in r.err
    assert "[L3]" in r.err, r  # the rule id, as bad input gives it (the dogfooding review)
    assert git("for-each-ref", "--format=%(refname)", cwd=diamond) == branches  # no branch
    assert git("worktree", "list", "--porcelain", cwd=diamond) == worktrees  # no worktree
    with Ledger(diamond / ".git") as ledger:
        assert query.episodes(ledger.require(), "dia", "A") == []  # no throw, no round


def test_a_builder_on_path_or_by_path_passes_the_check(diamond: Path, tmp_path: Path) -> None:
    script = tmp_path / "bin" / "my-agent"
    script.parent.mkdir()
    script.write_text(f"#!{sys.executable}\nimport os, pathlib\n"
                      "pathlib.Path(os.environ['LEAP_REPORT']).write_text("
                      "'outcome: 1\\nevidence: ran\\n')\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    set_config(diamond, builder="LEVEL=3 my-agent --task \"$LEAP_HANDOFF\"")
    path = f"{script.parent}{os.pathsep}{os.environ['PATH']}"
    r = leap("throw", "dia", "--run", cwd=diamond, env={"PATH": path})
    assert r.code == 0 and "A: 1 round(s), last pass (claim): ran" in r.out, r


def test_two_rounds_that_fail_the_same_way_stop_the_run_and_it_continues_later(
        diamond: Path, builder: Builder, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.write_text("")
    set_config(diamond, builder=builder(f"""
        if pathlib.Path("{broken}").exists():
            print("error: no API key")
            sys.exit(4)
        pathlib.Path("src/a.py").write_text("A = 2\\n")
        pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 1\\nevidence: built\\n")
    """))
    r = leap("throw", "dia", "--run", cwd=diamond)
    assert r.code == 3, r
    got = _receipts(diamond)
    assert [(x.round, x.outcome) for x in got] == [(1, 0), (2, 0)]  # not four: two are left
    assert "failed the same way twice in a row (exit 4, no change in the worktree)" in \
        got[1].evidence
    # issue 14 item 9: the episode ends at 0 there, with a checkpoint the server takes
    hint = "`leap throw dia --ball A --resume --run` starts a new episode from its checkpoint"
    assert hint in got[1].evidence
    assert "A: 2 round(s), last hold" in r.out and "checkpoint" in r.out, r.out
    with Ledger(diamond / ".git") as ledger:
        ended = query.checkpoint(ledger.require(), "dia", "A", 1)
    assert ended is not None and ended.reason == STUCK and ended.rounds_used == 2
    broken.unlink()  # the builder is repaired; the hint's command goes on
    r = leap("throw", "dia", "--ball", "A", "--resume", "--run", cwd=diamond)
    assert r.code == 0, r
    with Ledger(diamond / ".git") as ledger:
        fresh = query.receipts(ledger.require(), "dia", "A", 2)
    assert [(x.round, x.outcome) for x in fresh] == [(1, 1)]  # four fresh rounds


def test_failures_that_change_the_worktree_are_not_the_same_failure(
        diamond: Path, builder: Builder) -> None:
    set_config(diamond, builder=builder("""
        r = os.environ["LEAP_ROUND"]
        pathlib.Path("src/a.py").write_text(f"A = {r}\\n")
        sys.exit(4)
    """))
    r = leap("throw", "dia", "--run", cwd=diamond)
    assert r.code == 3 and "checkpoint written" in r.out, r
    assert [x.round for x in _receipts(diamond)] == [1, 2, 3, 4]


def test_a_running_builder_shows_a_heartbeat_and_its_log_path(
        diamond: Path, builder: Builder, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in IDENTITY.items():
        monkeypatch.setenv(key, value)
    set_config(diamond, builder=builder("""
        print("reading the handoff", flush=True)
        time.sleep(0.5)
        print("running the proof", flush=True)
        time.sleep(0.8)
        pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 1\\nevidence: done\\n")
    """))
    thrown = throw("dia", ["A"], start=diamond, run=True)
    out = io.StringIO()
    result = drive_builders(thrown, 1, out, live=False, heartbeat=0.2)
    assert result.balls[0].last is not None and result.balls[0].last.outcome == 1
    lines = out.getvalue().splitlines()
    log = _receipts(diamond)[0].log
    assert any(f"building; log {log}" in ln for ln in lines), lines  # at the round's start
    beats = [ln for ln in lines if "building for" in ln]
    assert len(beats) >= 4, lines  # at least one every 0.2 s of a 1.3 s build
    assert any(re.search(r"building for 0\.\d s: reading the handoff$", ln) for ln in beats)
    assert any(re.search(r"building for 1\.\d s: running the proof$", ln) for ln in beats)
    assert (worktree_of(diamond, "A") / "src/a.py").exists()


@pytest.mark.parametrize("command", [
    "exit 3", "printf 'out\\n'; false", "cat <<EOF\nheredoc to the end", "exec sh -c 'exit 4'",
    "echo a # a trailing comment", "sleep 0 & wait; exit 5"])
def test_the_builders_exit_status_is_written_and_its_command_runs_as_ever(
        tmp_path: Path, command: str) -> None:
    """Its shell writes the builder's exit status where a driver killed meanwhile finds it
    (``carry.close_killed_round``); a blind review: a first wrapping parsed the command
    anew, and a heredoc running to the end swallowed it."""
    import subprocess

    from leapgit.worktrees.builder import Stop, left_exit, run_builder

    plain = subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True)
    exit_file = tmp_path / "builder-1-1.exit"
    exit_file.write_text("0\n")  # a stale one is never read as this builder's
    log = tmp_path / "round.log"
    ex = run_builder(command, tmp_path, dict(os.environ), log, 30, Stop(),
                     exit_file=exit_file)
    assert ex.code == plain.returncode == left_exit(exit_file), (ex, plain)
    assert log.read_bytes().endswith(plain.stdout), log.read_text()


def test_a_builder_stopped_by_the_run_says_why_in_its_round(tmp_path: Path) -> None:
    """Stop 35 found every stopped round recorded as "interrupted (SIGINT)": a SIGTERM, a
    run's --max-minutes and a worker's stop too. The round says what stopped it, the first
    reason given."""
    from leapgit.worktrees.builder import Stop, builder_word, run_builder

    stop = Stop()
    stop.halt("--max-minutes 0.5 reached")  # the run's limit, as drive.py's deadline says
    stop.halt("interrupted (SIGINT)")  # a later reason: the first one stands
    ex = run_builder("sleep 30", tmp_path, dict(os.environ), tmp_path / "round.log", 60,
                     stop)
    assert ex.interrupted and not ex.timed_out and ex.seconds < 20, ex
    outcome, evidence = builder_word(ex, None, tmp_path, "", 60)
    assert outcome == 0, evidence
    assert evidence == "--max-minutes 0.5 reached: leap stopped the builder; the round " \
        "ended at 0", evidence
    assert stop.why == "--max-minutes 0.5 reached"
