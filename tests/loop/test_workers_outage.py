"""The shared remote out of reach for a while (a walk-away hunt: its git daemon restarted,
its repository moved away and back), and `leap run --remote` with two workers at work: the
driver and the workers look again until it answers, and the slice lands. Before, the
driver's first failed look ended the run with exit 2 (bad input) and no `end` event, and
each worker stopped on its first failed idle look."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.loop import workers_world as ww
from tests.loop.workers_world import wait
from tests.scoring.world import commit_files
from tests.support import GitDaemon, git, hinted_leap, leap, make_repo
from tests.tribunal.jurors import JurorServer


def _run_with_two_workers(w: ww.World, cloned: Callable[[], object] = lambda: None
                          ) -> tuple[subprocess.Popen[bytes], list[subprocess.Popen[bytes]],
                                     Path]:
    """`leap run --remote origin` and two workers (clones w1, w2), as processes, started
    once ``cloned`` has run; the run's log."""
    clones = [w.clone(f"w{i}") for i in (1, 2)]
    cloned()
    log = w.base_dir / "work.log"
    orch = w.popen("run", ww.S, "--remote", "origin", "--poll", "0.2", "--heartbeat", "0",
                   cwd=w.work, log=log)
    workers = [w.popen("worker", "--remote", "origin", "--name", c.name, "--poll", "0.2",
                       cwd=c) for c in clones]
    return orch, workers, log


def _the_run_again_lands(w: ww.World) -> None:
    """The hold's hint, exactly (`leap run S --remote origin`), once the remote answers:
    with a worker at work, the slice lands."""
    worker = w.popen("worker", "--remote", "origin", "--name", "w1", "--poll", "0.2",
                     cwd=w.clone("w1"))
    again = w.leap("run", ww.S, "--remote", "origin")
    assert again.code == 0 and "landed" in again.out, again.out[-3000:]
    assert wait(worker, w.base_dir / "w1.log", 60) == 0


def test_the_remote_out_of_reach_for_a_while_is_waited_for_and_the_slice_lands(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    w = ww.world(daemon, jurors, "outage", 2)
    orch, workers, log = _run_with_two_workers(w)
    deadline = time.monotonic() + 120
    while "  throw  " not in log.read_text():  # published: the workers build now
        assert orch.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
        time.sleep(0.1)
    away = w.bare.with_name(w.bare.name + ".away")
    w.bare.rename(away)  # out of reach: git daemon no longer serves it
    time.sleep(4)
    away.rename(w.bare)
    code = wait(orch, log)
    codes = [wait(p, w.base_dir / f"w{i}.log", 60) for i, p in enumerate(workers, 1)]
    said = log.read_text()
    assert code == 0 and "landed" in said, said[-4000:]
    assert "origin is out of reach (" in said, said[-4000:]
    assert "origin answers again: going on" in said, said[-4000:]
    logs = [(w.base_dir / f"w{i}.log").read_text() for i in (1, 2)]
    assert codes == [0, 0], [text[-2000:] for text in logs]
    fresh = w.base_dir / "fresh"
    git("clone", "-q", w.url, str(fresh), cwd=w.base_dir)
    git("fetch", "-q", "origin", "leap/ledger:leap/ledger", cwd=fresh)
    audit = leap("audit", cwd=fresh)
    assert audit.code == 0, audit


def test_a_run_started_while_the_remote_is_out_of_reach_waits_for_it_and_lands(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """Before, `leap run --remote` with the remote out of reach at its very start stopped
    with exit 3 before its first event, where a look later in the run waits for it."""
    w = ww.world(daemon, jurors, "away-at-start", 2)
    away = w.bare.with_name(w.bare.name + ".away")
    orch, workers, log = _run_with_two_workers(w, lambda: w.bare.rename(away))
    deadline = time.monotonic() + 60
    while "origin is out of reach (" not in log.read_text():
        assert orch.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
        time.sleep(0.1)
    assert "  start  " not in log.read_text(), log.read_text()  # nothing taken meanwhile
    time.sleep(1)
    away.rename(w.bare)
    code = wait(orch, log)
    said = log.read_text()
    assert code == 0 and "landed" in said, said[-4000:]
    assert said.index("origin answers again: going on") < said.index("  start  "), said
    codes = [wait(p, w.base_dir / f"w{i}.log", 60) for i, p in enumerate(workers, 1)]
    assert codes == [0, 0]


@pytest.mark.parametrize("limit", ["patience", "max-minutes"])
def test_a_run_whose_remote_never_answers_at_its_start_is_a_hold_whose_hint_leads_on(
        daemon: GitDaemon, jurors: JurorServer, monkeypatch: pytest.MonkeyPatch,
        limit: str) -> None:
    from leapgit.git import RemoteUnavailable
    from leapgit.ledger import sync
    from leapgit.loop import remote as rm

    w = ww.world(daemon, jurors, f"never-at-start-{limit}", 2)
    tries: list[object] = []

    def away(*_args: object, **_kwargs: object) -> None:
        tries.append(_args)
        raise RemoteUnavailable("cannot reach origin: git fetch failed: fatal: unable to "
                                "connect to 127.0.0.1; nothing was pushed")

    monkeypatch.setattr(sync, "sync", away)
    if limit == "patience":
        monkeypatch.setattr(rm, "REMOTE_PATIENCE", 1.0)
        held = w.leap("run", ww.S, "--remote", "origin", "--poll", "0.2", "--json")
        assert "origin has been out of reach for" in held.err, held
    else:
        held = w.leap("run", ww.S, "--remote", "origin", "--poll", "0.2", "--json",
                      "--max-minutes", "0.02")
        assert "--max-minutes 0.02 reached while origin was out of reach" in held.err, held
    assert held.code == 3 and len(tries) > 2, held  # looked again before it gave up
    assert "origin is out of reach (" in held.out, held  # said while it waited
    hint = f"`leap run {ww.S} --remote origin` again once it answers"
    assert hint in held.err, held
    monkeypatch.undo()
    _the_run_again_lands(w)


def test_a_ball_whose_branch_never_reached_the_remote_is_published_again(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """A walk-away hunt: the push of a published ball's branch was lost after its throw
    record reached the remote (the remote went away between the two). No worker could claim
    a ball with no branch there, and every `leap run --remote` waited for it for good."""
    w = ww.published(daemon, jurors, "lost-branch")
    git("update-ref", "-d", "refs/heads/leap/ball/pkgs/b1", cwd=w.bare)  # the lost push
    git("update-ref", "-d", "refs/leap/remotes/origin/heads/leap/ball/pkgs/b1", cwd=w.work,
        check=False)
    log = w.base_dir / "work.log"
    orch = w.popen("run", ww.S, "--remote", "origin", "--poll", "0.2", "--heartbeat", "0",
                   cwd=w.work, log=log)
    worker = w.popen("worker", "--remote", "origin", "--name", "w1", "--poll", "0.2",
                     cwd=w.clone("w1"))
    code = wait(orch, log, 120)
    assert code == 0 and "landed" in log.read_text(), log.read_text()[-4000:]
    assert wait(worker, w.base_dir / "w1.log", 60) == 0


def test_a_remote_out_of_reach_past_the_patience_is_a_hold_whose_hint_leads_on(
        daemon: GitDaemon, jurors: JurorServer, monkeypatch: pytest.MonkeyPatch) -> None:
    from leapgit.git import RemoteUnavailable
    from leapgit.loop import remote as rm

    w = ww.world(daemon, jurors, "patience", 2)

    def away(*_args: object, **_kwargs: object) -> None:
        raise RemoteUnavailable("cannot reach origin: git fetch failed: fatal: unable to "
                                "connect to 127.0.0.1; nothing was pushed")

    monkeypatch.setattr(rm, "REMOTE_PATIENCE", 1.0)
    monkeypatch.setattr(rm, "sync_with_balls", away)  # every look goes unanswered
    held = w.leap("run", ww.S, "--remote", "origin", "--poll", "0.2", "--heartbeat", "0")
    assert held.code == 3, held
    assert "origin has been out of reach for" in held.out, held.out[-3000:]
    hint = f"`leap run {ww.S} --remote origin` again once it answers"
    assert hint in held.out, held.out[-3000:]
    monkeypatch.undo()
    _the_run_again_lands(w)


def test_a_push_that_keeps_failing_while_fetches_answer_still_runs_out_of_patience(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A blind review: every answered look reset the clock of a claim (or a step) that
    kept failing, so the loop never gave up and said two lines every poll."""
    from leapgit.git import RemoteUnavailable
    from leapgit.loop import remote as rm

    said: list[str] = []
    clock = [0.0]
    monkeypatch.setattr("time.monotonic", lambda: clock[0])
    monkeypatch.setattr(rm, "REMOTE_PATIENCE", 10.0)
    reach = rm.Reach("origin", 1.0, said.append)
    refused = RemoteUnavailable("cannot reach origin: the push was not taken")
    for _ in range(30):  # a look answers, a claim does not, every second
        reach.back("look")
        assert reach.lost(refused, "claim") is None or clock[0] > 10.0
        clock[0] += 1.0
    assert reach.gave_up is not None and "origin has been out of reach" in reach.gave_up
    assert len(said) == 1, said  # said once, not every poll


# the server's post-receive, once: the push of a worker's round (a ball branch with the
# ledger) loses its connection after the refs moved
DROP_AFTER_LANDING = """#!/bin/sh
ball=; ledger=
while read old new ref; do
  case "$ref" in
    refs/heads/leap/ledger) ledger=1 ;;
    refs/heads/leap/ball/*) ball=1 ;;
  esac
done
if [ -n "$ball" ] && [ -n "$ledger" ] && [ ! -e "{mark}" ]; then
  touch "{mark}"; kill -9 $PPID
fi
exit 0
"""


def test_a_round_push_whose_connection_drops_after_it_landed_is_no_refusal(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """A walk-away hunt: git's "unexpected disconnect" after the refs moved was read as a
    refusal; the worker took its own landed round back out of its ledger, kept it as
    refused, and exited 3."""
    w = ww.world(daemon, jurors, "dropped", 2)
    hook = w.bare / "hooks" / "post-receive"
    hook.write_text(DROP_AFTER_LANDING.replace("{mark}", str(w.base_dir / "dropped")))
    hook.chmod(0o755)
    orch, workers, log = _run_with_two_workers(w)
    code = wait(orch, log)
    codes = [wait(p, w.base_dir / f"w{i}.log", 60) for i, p in enumerate(workers, 1)]
    assert (w.base_dir / "dropped").exists()  # the connection did drop
    assert code == 0 and "landed" in log.read_text(), log.read_text()[-3000:]
    logs = [(w.base_dir / f"w{i}.log").read_text() for i in (1, 2)]
    assert codes == [0, 0], [text[-2000:] for text in logs]
    assert not any("the remote refused" in text for text in logs), logs
    for i in (1, 2):
        assert git("for-each-ref", "refs/leap/evidence/refused/", cwd=w.base_dir / f"w{i}") \
            == ""


def test_a_throw_whose_publish_is_cut_off_is_said_and_published_by_a_later_look(
        daemon: GitDaemon, jurors: JurorServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A walk-away hunt: a throw whose publish the outage cut off was built, scored and
    merged with no `throw` event in the run's stream."""

    w = ww.world(daemon, jurors, "publish-cut", 2)
    cut = cut_publishes(monkeypatch, 1)
    worker = w.popen("worker", "--remote", "origin", "--name", "w1", "--poll", "0.2",
                     cwd=w.clone("w1"))
    ran = w.leap("run", ww.S, "--remote", "origin", "--poll", "0.2", "--heartbeat", "0")
    assert cut and ran.code == 0 and "landed" in ran.out, ran.out[-3000:]
    assert ran.out.count("  throw  episode=1") == 2, ran.out[-3000:]
    assert wait(worker, w.base_dir / "w1.log", 60) == 0


def test_a_run_whose_every_publish_was_cut_off_between_two_looks_waits_and_lands(
        daemon: GitDaemon, jurors: JurorServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """CI, in a fresh clone: the remote went away as both balls were thrown. Their publishes
    failed, the next look was not due yet (one a ``--poll``), so nothing seemed to wait
    (no ball published, the looks unanswered by none) and the run ended at once, "not
    merged", exit 3, leaving its workers to wait on a slice no one would merge."""

    w = ww.world(daemon, jurors, "publish-cut-all", 2)
    cut = cut_publishes(monkeypatch, 2)
    worker = w.popen("worker", "--remote", "origin", "--name", "w1", "--poll", "0.2",
                     cwd=w.clone("w1"))
    ran = w.leap("run", ww.S, "--remote", "origin", "--poll", "3", "--heartbeat", "0")
    assert len(cut) == 2 and ran.code == 0 and "landed" in ran.out, ran.out[-3000:]
    assert wait(worker, w.base_dir / "w1.log", 60) == 0


def cut_publishes(monkeypatch: pytest.MonkeyPatch, times: int) -> list[str]:
    """The first ``times`` publishes of the run meet a remote that hung up (the publish
    the run makes in-process, through ``loop.remote.publish``); the list grows by one each."""
    from leapgit.git import RemoteUnavailable
    from leapgit.loop import remote as rm

    real = rm.publish
    cut: list[str] = []

    def cut_off(*args: object, **kwargs: object) -> None:
        if len(cut) < times:
            cut.append("cut")
            raise RemoteUnavailable("cannot reach origin: the remote end hung up; nothing "
                                    "was pushed")
        real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(rm, "publish", cut_off)
    return cut


def test_an_outage_met_by_several_kinds_of_call_is_said_once_and_its_end_once() -> None:
    """A walk-away hunt: one outage said "out of reach" twice (a look's, a claim's), and
    "answers again" while a push still went unanswered."""
    from leapgit.git import RemoteUnavailable
    from leapgit.loop import remote as rm

    said: list[str] = []
    reach = rm.Reach("origin", 1.0, said.append)
    gone = RemoteUnavailable("cannot reach origin: the remote end hung up")
    reach.lost(gone, "look")
    reach.lost(gone, "claim")
    reach.back("look")
    assert len(said) == 1 and "out of reach" in said[0], said
    reach.back("claim")
    assert said[1:] == ["origin answers again: going on"], said


def test_a_daemon_that_takes_no_pushes_refuses_and_one_that_lost_the_repository_is_away(
        daemon: GitDaemon, tmp_path: Path) -> None:
    """git daemon says "access denied or repository not exported" both to a push of a
    repository it serves to fetches only (a refusal: waiting would never help) and to any
    call for one it cannot find now (moved away for a while: out of reach). A look tells
    them apart; a full-suite run found the second taken for the first, and a throw's
    publish stopped its ball in the middle of an outage."""
    from leapgit import git as gitcalls

    work = make_repo(tmp_path / "work", {"a.txt": "a\n"})
    bare = daemon.base / "fetch-only.git"
    git("clone", "-q", "--bare", str(work), str(bare), cwd=tmp_path)
    git("config", "daemon.receivepack", "false", cwd=bare)
    git("remote", "add", "origin", daemon.url("fetch-only.git"), cwd=work)

    def pushed() -> str:
        proc = gitcalls.run(["push", "--porcelain", "origin", "HEAD:refs/heads/x"], work,
                            check=False)
        assert proc.returncode != 0
        return (proc.stdout + proc.stderr).decode(errors="replace")

    said = pushed()
    assert "access denied" in said, said
    assert gitcalls.unavailable_push("origin", said, [], work) is None  # a refusal
    bare.rename(bare.with_name("moved.git"))  # now it cannot find it
    said = pushed()
    assert "access denied" in said, said
    assert isinstance(gitcalls.unavailable_push("origin", said, [], work),
                      gitcalls.RemoteUnavailable)


def test_a_worker_out_of_patience_is_a_hold_whose_hint_leads_on(
        daemon: GitDaemon, jurors: JurorServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hint names the worker as it was started, every option kept (a hint hunt: it
    dropped --slice and --once, and the worker so started built every published ball)."""
    from leapgit.git import RemoteUnavailable
    from leapgit.loop import remote as rm

    w = ww.published(daemon, jurors, "worker-patience")
    base = git("rev-parse", "main", cwd=w.work)
    red = commit_files(w.work, base, {"tests/test_b2.py": ww.red_test("b2")}, "test: b2")
    assert w.leap("red", ww.S, "b2", red).code == 0
    assert w.leap("throw", ww.S, "--ball", "b2", "--remote", "origin").code == 0
    clone = w.clone("w1")

    def away(*_args: object, **_kwargs: object) -> None:
        raise RemoteUnavailable("cannot reach origin: git fetch failed: fatal: unable to "
                                "connect to 127.0.0.1; nothing was pushed")

    monkeypatch.setattr(rm, "REMOTE_PATIENCE", 1.0)
    monkeypatch.setattr(rm, "sync_with_balls", away)  # every look goes unanswered
    held = w.leap("worker", "--remote", "origin", "--name", "w1", "--slice", ww.S, "--once",
                  "--poll", "0.2", cwd=clone)
    said = held.out + held.err
    assert held.code == 3 and "origin has been out of reach for" in said, held
    hint = f"`leap worker --remote origin --name w1 --slice {ww.S} --once --poll 0.2` again " \
        "once it answers"
    assert hint in said, held
    monkeypatch.undo()
    log = w.base_dir / "w1.log"
    cmd = next(c for c in hinted_leap(said) if c[0] == "worker")
    again = w.popen(*cmd, cwd=clone, log=log)  # the hint, exactly: one ball, then it ends
    assert wait(again, log, 120) == 0, log.read_text()[-3000:]
    taken = [ln for ln in log.read_text().splitlines() if "taken by w1" in ln]
    assert len(taken) == 1, taken


def test_a_failure_of_a_call_not_made_for_a_while_starts_a_new_outage(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A blind review: a claim that failed in a short outage, and then was not tried for an
    hour (no ball to claim) while the looks answered, made the next brief outage give up at
    once, and the first outage's end was never said."""
    from leapgit.git import RemoteUnavailable
    from leapgit.loop import remote as rm

    said: list[str] = []
    clock = [0.0]
    monkeypatch.setattr("time.monotonic", lambda: clock[0])
    reach = rm.Reach("origin", 1.0, said.append)
    gone = RemoteUnavailable("cannot reach origin: the remote end hung up")
    reach.lost(gone, "claim")
    clock[0] = 120.0
    reach.back("look")  # the looks answer; no claim was tried since
    assert said[-1] == "origin answers again: going on", said
    clock[0] = 3600.0
    assert reach.lost(gone, "claim") is None  # a new outage: said, and waited for
    assert len(said) == 3 and "out of reach" in said[-1], said
