"""Written truth only (L8, issue 15): `leap run` killed with SIGKILL at ten moments across one
run of the five-ball slice (a red being written, a throw, a build, a scoring and its jurors,
the findings, a second-wave build, the merge and its push, before the live proof), and
started again each time, lands the slice: no episode has a fifth round, no step is recorded
twice, and `leap audit` holds on a fresh clone of the remote."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from leapgit.ledger import history, layout, query
from leapgit.ledger.store import Ledger
from leapgit.worktrees import drivelock
from tests.loop.kills import Event, is_event, run_until
from tests.loop.world import DEPS, S, build, jurors
from tests.scoring.world import Project
from tests.support import git, leap
from tests.templates import Served
from tests.tribunal.jurors import JurorServer

# in the order a run reaches them; each restart is killed at the next one it reaches
MOMENTS: list[tuple[str, Callable[[Event], bool]]] = [
    ("a red being written", is_event("red", step="author")),
    ("a throw", is_event("throw")),
    ("a build", is_event("round", outcome="building")),
    ("a scoring", is_event("score", step="convening")),
    ("jurors sitting", lambda e: e["event"] == "log" and "ball" in e),
    ("the second wave's red", is_event("red", ball="c", step="author")),
    ("c's findings", is_event("findings", ball="c")),
    ("c's second build", is_event("round", ball="c", round=2, outcome="building")),
    ("the merge and its push", lambda e: e["event"] == "log" and "ball" not in e),
    ("before the live proof", is_event("merge")),
]


def test_killed_at_ten_moments_the_slice_lands_once(isolated: Path, served: Served,
                                                     tmp_path: Path) -> None:
    with JurorServer("openai", jurors) as server:
        p = build(served.folder("run5-kill"), served.daemon, server.url)
        killed = []
        for name, hit in MOMENTS:
            was_killed, code, said = run_until(p.work, S, hit)
            if not (was_killed or code == 0):  # whole, not as pytest cuts a long repr
                pytest.fail(f"restarted before {name!r}, the run ended {code} unkilled:\n"
                            f"{said[-12000:]}", pytrace=False)
            if name == "a build":  # and Ctrl-C (SIGINT) at the next build: exit 130
                stopped, code, said = run_until(p.work, S, hit, signal.SIGINT)
                assert stopped and code == 130, (code, said[-3000:])
                assert "interrupted" in said
            if was_killed:
                killed.append(name)
            if name == "before the live proof":  # landed, not proved: status says so
                shown = p.leap("status", S).out
                assert "landed, live proof not run yet" in shown, shown
                assert f"`leap run {S}` proves it live" in shown, shown
        final = p.leap("run", S, "--heartbeat", "0")  # that hint, exactly
    assert final.code == 0, final.out[-3000:]
    assert "landed, live proof held" in final.out
    assert len(killed) == len(MOMENTS), killed  # every moment was reached, and killed
    with Ledger(p.work / ".git") as ledger:
        view = ledger.require()
        for ball in DEPS:
            for episode in query.episodes(view, S, ball):
                rounds = query.receipts(view, S, ball, episode)
                assert len(rounds) <= 4, (ball, episode, rounds)  # L6: no fifth round
            assert len(history.reds(view, S, ball)) == 1, ball  # one red each
            graded = [(s.episode, s.rounds) for s in history.scores(view, S, ball)]
            assert len(graded) == len(set(graded)), (ball, graded)  # no round scored twice
            assert history.scores(view, S, ball)[-1].outcome == 1
        assert len(history.merge_records(view, S)) == 1
        assert view.exists(layout.live_path(S, 1))
    _five_merges_that_a_fresh_clone_audits(p, tmp_path)


# Every Python process of the killed `leap run` loads this (PYTHONPATH): `leap run` dies by
# SIGKILL at the one moment a plain kill hits by chance (a flake under load found it): the
# builder is started and the drive lock does not name its round yet (run_builder: Popen,
# then ``started``); the builder, in a session of its own, outlives it by a few seconds
KILL_AS_THE_BUILDER_STARTS = """\
import os
import signal
import sys
import time

if sys.argv and sys.argv[0].endswith("builder.py"):
    time.sleep(3)  # still at work when the next run comes to its ball
else:
    from leapgit.worktrees import drivelock

    def started(self, group, round_no):
        os.kill(os.getpid(), signal.SIGKILL)

    drivelock.DriveLock.started = started
"""


def test_killed_as_its_builder_starts_the_next_run_records_that_round_and_lands(
        isolated: Path, served: Served, tmp_path: Path) -> None:
    """The builder runs in a session of its own and outlives the kill; it wrote the ball's
    files. The drive lock named no round then, so the next run took those files for a change
    outside any round (L2), refused the ball (-1) for good, and blocked its dependents; and a
    next run that came while the builder still ran stopped the ball (a hold) where it can
    wait."""
    inject = tmp_path / "inject"
    inject.mkdir()
    (inject / "sitecustomize.py").write_text(KILL_AS_THE_BUILDER_STARTS)
    with JurorServer("openai", jurors) as server:
        p = build(served.folder("run5-kill"), served.daemon, server.url)
        killed = subprocess.run(
            [sys.executable, "-m", "leapgit", "run", S, "--json", "--heartbeat", "0"],
            cwd=p.work, capture_output=True, text=True, timeout=300,
            env={**os.environ, "PYTHONPATH": str(inject)})
        assert killed.returncode == -signal.SIGKILL, killed.stdout[-3000:]
        assert any(drivelock.held(lock.parent) for lock in  # the builder is still at work
                   (p.work / ".git" / "worktrees").glob("*/leap/drive.lock"))
        again = p.leap("run", S, "--heartbeat", "0")  # waits for it, then goes on
    assert again.code == 0 and "landed" in again.out, again.out[-4000:]
    assert "a builder a killed run left still runs" in again.out, again.out[-4000:]
    assert "the builder a killed run left ended after" in again.out, again.out[-4000:]
    # the killed run's round: recorded at 0 with what its builder left, by the next run
    left = git("grep", "-l", "ended before it recorded the round", "leap/ledger", "--",
               "slices/five", cwd=p.work)
    assert "/receipts/" in left, left


def test_killed_while_its_spine_push_is_in_flight_the_push_that_lands_later_is_recorded(
        isolated: Path, served: Served, tmp_path: Path) -> None:
    """A chaos hunt: `leap run` SIGKILLed while its spine push was still in the server's
    hook. The push, a child the kill left running, landed a moment later; the next run had
    asked the remote in between, taken the merge for one that never landed and forgotten
    it. From then on every run and merge exited 2 ("touches no file") and the audit failed
    (L8: integration merges no slice pass record names). The remote's spine push waits 3 s
    in its hook here, as on a slow server."""
    mark = tmp_path / "spine-push-in-the-hook"
    with JurorServer("openai", jurors) as server:
        p = build(served.folder("run5-push-in-flight"), served.daemon, server.url)
        hook = p.bare / "hooks" / "pre-receive"
        text = hook.read_text()
        line = next(ln for ln in text.splitlines() if ln.startswith("exec "))
        # the first spine push waits 3 s in the hook; every push that comes while it is
        # there waits until the hook has judged it (at most 60 s), so the killed run's push
        # is judged and lands first however loaded the machine is (a slow hook let the next
        # run give its lease back first, and the push was refused: right, but not this case)
        done = tmp_path / "spine-push-judged"
        hook.write_text(text.replace(line, (
            'input=$(cat); first=\n'
            f'case "$input" in *" refs/heads/main"*) [ -e "{mark}" ] || {{ : > "{mark}"; '
            'first=1; sleep 3; };; esac\n'
            f'if [ -z "$first" ] && [ -e "{mark}" ]; then n=0\n'
            f'  while [ ! -e "{done}" ] && [ $n -lt 1200 ]; do sleep 0.05; n=$((n+1)); done\n'
            'fi\n'
            f'printf "%s\\n" "$input" | {line.removeprefix("exec ")}; rc=$?\n'
            f'[ -z "$first" ] || : > "{done}"\n'
            'exit $rc\n')))
        proc = subprocess.Popen([sys.executable, "-m", "leapgit", "run", S, "--json",
                                 "--heartbeat", "0"], cwd=p.work, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        while not mark.exists():
            assert proc.poll() is None, "the run ended before its spine push"
            time.sleep(0.02)
        proc.kill()  # the driver alone: its `git push` goes on, and lands
        proc.wait()
        again = p.leap("run", S, "--heartbeat", "0")
        after = p.leap("run", S, "--heartbeat", "0")
    assert again.code == 0 and "landed" in again.out, again.out[-4000:]
    # the killed run's push entered the hook first, and landed first: it is the one recorded
    assert "a stopped run left in flight landed at" in again.out, again.out[-4000:]
    assert after.code == 0, after.out[-3000:]
    with Ledger(p.work / ".git") as ledger:
        assert len(history.merge_records(ledger.require(), S)) == 1
    _five_merges_that_a_fresh_clone_audits(p, tmp_path)


def _five_merges_that_a_fresh_clone_audits(p: Project, tmp_path: Path) -> None:
    """The remote's spine holds the five balls' integration merges, and `leap audit` holds
    in a fresh clone of the remote (its ledger fetched)."""
    log = git("log", "--first-parent", "--format=%s", "main", cwd=p.bare).splitlines()
    assert len([s for s in log if s.startswith(f"leap: integrate {S}/")]) == 5, log
    clone = tmp_path / "clone"
    git("clone", "-q", str(p.bare), str(clone), cwd=tmp_path)
    git("fetch", "-q", "origin", "refs/heads/leap/ledger:refs/heads/leap/ledger", cwd=clone)
    audited = leap("audit", cwd=clone)
    assert audited.code == 0, audited


def _killed_once_prices_committed(p: Project, pause: float) -> None:
    """`leap run` of the realistic project, its builder pausing ``pause`` s after its
    commit (a summary, say), SIGKILLed (the driver alone) once prices' commit is on its
    branch: the builder, in a session of its own, goes on."""
    from tests.loop import real_project as rp

    builder = p.base_dir / "builder.py"
    builder.write_text(builder.read_text() + f"\nimport time\ntime.sleep({pause})\n")
    proc = subprocess.Popen([sys.executable, "-m", "leapgit", "run", rp.S, "--json",
                             "--heartbeat", "0"], cwd=p.work, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    branch = f"leap/ball/{rp.S}/prices"
    while "prices: step" not in git("log", "--format=%s", branch, "--", cwd=p.work,
                                    check=False):
        assert proc.poll() is None, "the run ended before the builder committed"
        time.sleep(0.02)
    proc.kill()
    proc.wait()


def test_killed_while_its_builder_finishes_the_builders_word_is_recorded_and_it_lands(
        isolated: Path, served: Served, tmp_path: Path) -> None:
    """A chaos hunt: `leap run` SIGKILLed while the builder (in a session of its own) was
    finishing: it committed the ball's whole change and exited 0, and no one heard it. The
    next run recorded that round at 0, handed the same work to a second round, whose
    builder (one that commits, as aider does) found nothing to commit and failed; twice,
    so the episode ended, then the resumed one, until only a respec of a sound spec was
    left. The builder's shell now writes its exit status where the next run reads it:
    the round is the builder's own word, a claim that is scored, and the slice lands."""
    from tests.loop import real_project as rp

    with JurorServer("openai", rp.jurors) as server:
        p = rp.build(served.folder("real-kill-finishing"), served.daemon, server.url)
        _killed_once_prices_committed(p, 2)  # the builder finishes its round, unheard
        again = p.leap("run", rp.S, "--heartbeat", "0")
    assert again.code == 0 and "landed" in again.out, again.out[-4000:]
    with Ledger(p.work / ".git") as ledger:
        view = ledger.require()
        first = query.receipts(view, rp.S, "prices", 1)[0]
        assert first.outcome == 1 and first.claim, first  # its word: exit 0, a claim
        assert "exit 0" in first.evidence and "it was killed" in first.evidence, first
        assert len(query.episodes(view, rp.S, "prices")) == 1
    assert "a builder a killed run left still runs" in again.out, again.out[-4000:]


def test_a_killed_runs_builder_that_ended_past_its_timeout_gets_the_0_a_living_run_gives(
        isolated: Path, served: Served) -> None:
    """A blind review: a builder that ran on past builder.timeout after its run was killed
    had its word recorded, where a living run stops it and records 0 (timed out)."""
    from leapgit.records import yamlio
    from tests.loop import real_project as rp

    with JurorServer("openai", rp.jurors) as server:
        p = rp.build(served.folder("real-kill-late"), served.daemon, server.url)
        cfg_path = p.work / ".leap" / "config.yaml"
        cfg = yamlio.loads(cfg_path.read_bytes(), str(cfg_path))
        cfg["builder"]["timeout"] = 2.5
        cfg_path.write_bytes(yamlio.dumps(cfg))
        _killed_once_prices_committed(p, 4)  # the builder sleeps on, past its timeout
        locks = list((p.work / ".git" / "worktrees").glob("*/leap/drive.lock"))
        deadline = time.monotonic() + 30
        while any(drivelock.held(lock.parent) for lock in locks):  # the builders end
            assert time.monotonic() < deadline
            time.sleep(0.1)
        p.leap("run", rp.S, "--heartbeat", "0")
    with Ledger(p.work / ".git") as ledger:
        first = query.receipts(ledger.require(), rp.S, "prices", 1)[0]
    assert first.outcome == 0 and not first.claim, first
    assert "past builder.timeout (2.5 s)" in first.evidence, first.evidence


def test_a_test_author_a_killed_run_left_is_waited_for_and_its_commit_is_the_red(
        isolated: Path, served: Served) -> None:
    """A walk-away hunt: `leap run` SIGKILLed while its test author (in a session of its
    own) wrote a ball's red left the author writing in its throwaway tree, and the next
    run asked a second author beside it: two authors (an agent's cost twice) for one red.
    The next run now waits for the one a killed run left, its commit is the ball's red,
    and the slice lands: one author a ball."""
    from leapgit.records import yamlio
    from tests.loop.test_review_findings import duo

    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("kill-author"), served.daemon, server.url, "kau", ("a", "b"))
        cfg_path = p.work / ".leap" / "config.yaml"
        cfg = yamlio.loads(cfg_path.read_bytes(), str(cfg_path))
        started = p.base_dir / "author-started"
        cfg["red"]["command"] = f"touch {started} && sleep 2 && {cfg['red']['command']}"
        cfg_path.write_bytes(yamlio.dumps(cfg))
        run = subprocess.Popen([sys.executable, "-m", "leapgit", "run", "kau", "--heartbeat",
                                "0"], cwd=p.work, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while not started.exists() and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        run.kill()  # SIGKILL, the author already at work
        assert run.wait() == -signal.SIGKILL and started.exists()
        landed = p.leap("run", "kau", "--heartbeat", "0")
    assert landed.code == 0 and "landed" in landed.out, landed.out[-3000:]
    assert "a test author a killed run left still writes kau/" in landed.out, \
        landed.out[-3000:]
    authored = (p.base_dir / "authored.log").read_text().split()
    assert sorted(authored) == ["a", "b"], authored  # one author a ball, once
    assert not [t for t in git("worktree", "list", cwd=p.work).splitlines()
                if "leap-red-author-" in t]  # its tree is gone: its commit is the red
