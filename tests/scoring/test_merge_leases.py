"""The integrator lease under clones that share a host and a remote (L9), from a blind
review of the lease taken by the remote's compare-and-swap: a lease this clone took and no
merge of it holds was left by a killed merge, and is given back (any slice); one another
clone took, on the same host, is not; a rewrite of the ledger by hand is no "lost lease";
a refused spine push keeps the server's words; `leap run` waits for this clone's other
merge as for another integrator's lease."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from filelock import FileLock

from leapgit.ledger import leases
from leapgit.ledger.store import Ledger
from leapgit.ledger.workspace import open_workspace
from leapgit.scoring.merge import _taken_for
from leapgit.scoring.spine import PushRefused, push
from tests.scoring.test_merge_refusals import left_passed
from tests.scoring.world import Project
from tests.support import IDENTITY, git, hinted_leap, leap, make_repo

__all__ = ["left_passed"]  # the fixture, shared


def clone_b(p: Project) -> Path:
    """A second clone of the remote on this host, with the ledger and the ball branches."""
    b = p.base_dir / "B"
    git("clone", "-q", git("remote", "get-url", "origin", cwd=p.work), str(b), cwd=p.base_dir)
    shutil.copytree(p.work / ".leap", b / ".leap")
    (b / ".git" / "info" / "exclude").write_text(".leap/\n")
    assert leap("sync", "origin", cwd=p.work).code == 0
    assert leap("sync", "origin", cwd=b).code == 0
    git("fetch", "-q", str(p.work), "+refs/heads/leap/ball/*:refs/heads/leap/ball/*", cwd=b)
    return b


def test_another_clone_on_this_host_never_takes_a_live_lease_as_a_killed_merges(
        left_passed: Project) -> None:
    p = left_passed
    b = clone_b(p)
    ws = open_workspace(p.work)  # clone A: its merge of `left` runs now
    taken = leases.take_lease_on("origin", p.work, "main", "integrator",
                                 _taken_for(ws, "left"), "`leap merge left`")
    res = leap("merge", "left", cwd=b, timeout=300)
    assert res.code == 3 and f"leased to 'integrator' (lease {taken.number}" in res.err, res
    names = git("ls-tree", "-r", "--name-only", "leap/ledger", "spines/main/leases",
                cwd=p.bare).splitlines()
    assert f"spines/main/leases/{taken.number}/release.yaml" not in names, names


def test_status_names_what_gives_back_a_lease_a_killed_merge_left_and_it_does(
        left_passed: Project) -> None:
    """A walk-away hunt: a merge killed outright after its slice landed left the spine's
    lease open; `leap status` in its clone said "complete" and named nothing, while every
    other clone's merge waited on it, each told that "its holder" gives it back. Its clone's
    status names the lease and what gives it back; the other's says another clone holds it;
    followed exactly, the other clone's merge lands."""
    p = left_passed
    b = clone_b(p)
    ws = open_workspace(p.work)
    taken = leases.take_lease_on("origin", p.work, "main", "integrator",
                                 _taken_for(ws, "right"), "`leap merge right`")  # then killed
    assert leap("sync", "origin", cwd=b).code == 0
    there = leap("status", cwd=b)
    assert f"integrator lease {taken.number} on 'main' is open" in there.out, there
    assert "another clone's merge holds it" in there.out, there
    here = leap("status", cwd=p.work)
    [line] = [ln for ln in here.out.splitlines() if "gives it back" in ln]
    assert hinted_leap(line) == [["lease", "release"], ["sync", "origin"]], here.out
    as_json = json.loads(leap("status", "--json", cwd=p.work).out)
    assert as_json["lease"]["number"] == taken.number and as_json["lease"]["taken_here"]
    for cmd in hinted_leap(line):  # the hint, exactly
        assert leap(*cmd, cwd=p.work).code == 0
    assert "integrator lease" not in leap("status", cwd=p.work).out
    res = leap("merge", "left", cwd=b, timeout=300)
    assert res.code == 0, res


def test_status_in_another_clone_names_the_forced_release_for_a_clone_gone_for_good(
        left_passed: Project) -> None:
    """The clone whose merge took the lease is gone for good (its disk died): every other
    clone's status said only that "another clone's merge gives it back when it ends", and
    no merge anywhere could take the spine again. It names the forced release and the sync
    that shares it; followed exactly there, that clone's merge lands."""
    p = left_passed
    b = clone_b(p)
    taken = leases.take_lease_on("origin", p.work, "main", "integrator",
                                 _taken_for(open_workspace(p.work), "right"),
                                 "`leap merge right`")
    shutil.rmtree(p.work)  # gone for good
    assert leap("sync", "origin", cwd=b).code == 0
    there = leap("status", cwd=b)
    [line] = [ln for ln in there.out.splitlines() if "another clone's merge holds it" in ln]
    assert hinted_leap(line) == [["lease", "release", "--force"], ["sync", "origin"]], line
    for cmd in hinted_leap(line):  # the hint, exactly
        assert leap(*cmd, cwd=b).code == 0, cmd
    names = git("ls-tree", "-r", "--name-only", "leap/ledger", "spines/main/leases",
                cwd=p.bare).splitlines()
    assert f"spines/main/leases/{taken.number}/release.yaml" in names, names
    assert leap("merge", "left", cwd=b, timeout=300).code == 0


def test_a_lease_a_killed_merge_of_another_slice_left_in_this_clone_is_given_back(
        left_passed: Project) -> None:
    p = left_passed
    ws = open_workspace(p.work)
    with Ledger(p.work / ".git") as ledger:
        leases.take_lease(ledger, "main", "integrator", _taken_for(ws, "right"))
    res = p.leap("merge", "left")
    assert res.code == 0, res
    reasons = git("show", "leap/ledger:spines/main/leases/1/release.yaml", cwd=p.work)
    assert "its merge was killed" in reasons


def test_a_rewrite_of_the_ledger_by_hand_is_no_lost_lease(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"f.txt": "x\n"})
    assert leap("init", cwd=repo).code == 0
    before = git("rev-parse", "leap/ledger", cwd=repo)
    with Ledger(repo / ".git") as ledger:
        leases.take_lease(ledger, "main", "integrator")
        leases.release_lease(ledger, "main", "integrator")
    git("update-ref", "refs/heads/leap/ledger", before, cwd=repo)
    audit = leap("audit", cwd=repo)
    assert audit.code == 1 and "ledger-history-kept" in audit.out, audit
    assert "left out by a sync" not in audit.out


def test_a_push_a_server_hook_declined_keeps_its_words(tmp_path: Path) -> None:
    work = make_repo(tmp_path / "work", {"f.txt": "one\n"})
    bare = tmp_path / "origin.git"
    git("clone", "-q", "--bare", str(work), str(bare), cwd=tmp_path)
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'GH006: Protected branch update failed' >&2\nexit 1\n")
    hook.chmod(0o755)
    git("remote", "add", "origin", str(bare), cwd=work)
    (work / "f.txt").write_text("two\n")
    git("-c", "user.name=o", "-c", "user.email=o@x", "commit", "-qam", "two", cwd=work)
    try:
        push(work, "origin", ["HEAD:refs/heads/main"], then="`leap merge s1` again")
    except PushRefused as exc:
        line = exc.lines()[0]
    else:
        raise AssertionError("the hook declined the push")
    assert "GH006: Protected branch update failed" in line, line
    assert "`leap merge s1` again" not in line, line  # not a push behind the remote's


def _merge_lock(p: Project) -> FileLock:
    """This clone's merge lock: held, another merge of this clone runs."""
    (p.work / ".git" / "leap" / "merging").mkdir(parents=True, exist_ok=True)
    return FileLock(str(p.work / ".git" / "leap" / "merging" / "spine.lock"))


@contextmanager
def _run_waiting_for_the_other_merge(p: Project, log: Path, *args: str
                                     ) -> Iterator[subprocess.Popen[bytes]]:
    """`leap run left ARGS` as a process, once it waits in its merge step for this clone's
    other merge (the lock is held until the block ends)."""
    with _merge_lock(p):
        with open(log, "wb") as out:
            run = subprocess.Popen([sys.executable, "-m", "leapgit", "run", "left", *args,
                                    "--heartbeat", "0", "--poll", "0.2"], cwd=p.work,
                                   stdout=out, stderr=subprocess.STDOUT,
                                   env={**IDENTITY, **os.environ})
        deadline = time.monotonic() + 120
        while "waits for this clone's other merge" not in log.read_text():
            assert run.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        yield run


def test_leap_run_waits_for_this_clones_other_merge(left_passed: Project) -> None:
    p = left_passed
    log = p.base_dir / "run.log"
    with _run_waiting_for_the_other_merge(p, log) as run:
        pass
    assert run.wait(240) == 0, log.read_text()[-3000:]
    assert "landed" in log.read_text()


def test_a_clone_whose_ledger_is_behind_merges_on_the_passes_the_remote_holds(
        left_passed: Project) -> None:
    """A blind review: the merge planned on this clone's ledger alone, and a clone that had
    not seen the passes yet was told to score the balls again."""
    p = left_passed
    b = clone_b(p)
    passes = git("log", "--format=%H", "-1", "leap/ledger", "--", "slices/left/balls/u/scores",
                 cwd=b)
    git("update-ref", "refs/heads/leap/ledger", f"{passes}^", cwd=b)  # before u's pass
    res = leap("merge", "left", cwd=b, timeout=300)
    assert res.code == 0, res
    assert git("rev-parse", "main", cwd=p.bare) == git("rev-parse", "main", cwd=b)


def test_ctrl_c_in_the_merge_step_ends_the_json_stream_and_its_hint_leads_on(
        left_passed: Project) -> None:
    """A reversibility review: Ctrl-C while `leap run` was in its merge step (its wait, the
    merge, the live proof) left the `--json` stream with no ``stop`` and no ``end``: an
    orchestrating agent could not tell an interrupt from a crash. It now stops as the ball
    loop does (exit 130), names the next run, and that run lands the slice."""
    p = left_passed
    log = p.base_dir / "run.jsonl"
    with _run_waiting_for_the_other_merge(p, log, "--json") as run:
        run.send_signal(signal.SIGINT)
        assert run.wait(60) == 130, log.read_text()[-3000:]
    events = [json.loads(line) for line in log.read_text().splitlines()
              if line.startswith("{")]
    stops = [e for e in events if e["event"] == "stop"]
    assert stops and "interrupted" in stops[-1]["reason"], events[-4:]
    assert stops[-1]["hint"] == "`leap run left` goes on from here", stops[-1]  # its field
    assert events[-1]["event"] == "end" and events[-1]["exit_code"] == 130, events[-4:]
    assert events[-1]["outcome"] == "interrupted", events[-1]
    again = leap("run", "left", "--heartbeat", "0", cwd=p.work, timeout=300)  # the hint
    assert again.code == 0 and "landed" in again.out, again.out[-3000:]


def _interrupted_as_the_lease_is_taken(p: Project, monkeypatch: pytest.MonkeyPatch,
                                       then: Callable[[], object] = lambda: None
                                       ) -> list[str]:
    """`leap merge left` stopped by Ctrl-C just after the remote took its lease, ``then``
    done first (the remote gone, a second press or a failing sync armed); what it said."""
    from leapgit.scoring.merge import merge

    real = leases.take_lease_on

    def taken_then_interrupted(*args: object, **kwargs: object) -> leases.Lease:
        real(*args, **kwargs)  # type: ignore[arg-type]
        then()
        raise KeyboardInterrupt

    monkeypatch.setattr(leases, "take_lease_on", taken_then_interrupted)
    said: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        merge(open_workspace(p.work), "left", echo=said.append)
    monkeypatch.undo()
    return said


def test_ctrl_c_as_the_remote_takes_the_lease_gives_it_back_there(
        left_passed: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reversibility review: a Ctrl-C that landed just after the remote took the lease
    (its compare-and-swap answered, the merge's own clean-up not yet begun) left the lease
    open there without a word, and every other clone's merge waited on it. The merge now
    looks for its lease on the remote and gives it back; the next merge lands."""
    p = left_passed
    _interrupted_as_the_lease_is_taken(p, monkeypatch)  # as the remote's answer came in
    b = clone_b(p)  # the remote's ledger, as any other clone sees it
    with Ledger(b / ".git") as ledger:
        view = ledger.require()
        assert leases.active_lease(view, "main") is None
        assert len(leases.leases(view, "main")) == 1  # it was taken, and given back
    landed = leap("merge", "left", cwd=p.work, timeout=300)
    assert landed.code == 0, landed


def test_ctrl_c_as_the_lease_is_taken_with_the_remote_gone_names_the_merge_that_gives_it_back(
        left_passed: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    p = left_passed
    away = p.bare.with_name(p.bare.name + ".away")
    said = _interrupted_as_the_lease_is_taken(  # the remote goes out of reach
        p, monkeypatch, lambda: p.bare.rename(away))
    away.rename(p.bare)
    assert any("given back by this clone's next `leap merge left`" in line
               for line in said), said
    landed = leap("merge", "left", cwd=p.work, timeout=300)  # the hint, exactly
    assert landed.code == 0, landed
    b = clone_b(p)
    with Ledger(b / ".git") as ledger:
        view = ledger.require()
        assert leases.active_lease(view, "main") is None
        assert len(leases.leases(view, "main")) == 2  # the interrupted one, the merge's


def test_a_merge_wait_cut_off_by_max_minutes_names_the_time_and_the_next_run_lands(
        left_passed: Project) -> None:
    """A reversibility review: a wait for the lease cut off by --max-minutes stopped the
    run naming the lease, as though the lease had stopped it, not the time."""
    p = left_passed
    with _merge_lock(p):  # another merge of this clone runs, longer than the run may take
        cut = leap("run", "left", "--heartbeat", "0", "--poll", "0.2", "--max-minutes",
                   "0.05", cwd=p.work, timeout=120)
    assert cut.code == 3, cut
    said = cut.out + cut.err
    assert "stopped: merge: --max-minutes 0.05 reached: a hold, nothing lost; the merge " \
        "waited for this clone's other merge" in said, said
    again = leap("run", "left", "--heartbeat", "0", cwd=p.work, timeout=300)
    assert again.code == 0 and "landed" in again.out, again.out[-3000:]


def _leases_on_remote(p: Project) -> list[str]:
    return git("ls-tree", "-r", "--name-only", "leap/ledger", "spines/main/leases",
               cwd=p.bare).splitlines()


def test_a_second_ctrl_c_in_the_lease_give_back_names_the_merge_that_gives_it_back(
        left_passed: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """A blind review: a second Ctrl-C inside the give-back's own sync left the lease open
    on the remote without a word."""
    from leapgit.ledger import sync as syncing

    p = left_passed

    def pressed(*_args: object, **_kwargs: object) -> None:
        raise KeyboardInterrupt

    said = _interrupted_as_the_lease_is_taken(  # the second press, in the give-back
        p, monkeypatch, lambda: monkeypatch.setattr(syncing, "sync", pressed))
    assert any("given back by this clone's next `leap merge left`" in line
               for line in said), said
    landed = leap("merge", "left", cwd=p.work, timeout=300)  # the hint, exactly
    assert landed.code == 0, landed
    assert sum(n.endswith("take.yaml") for n in _leases_on_remote(p)) == \
        sum(n.endswith("release.yaml") for n in _leases_on_remote(p)) == 2


def test_a_give_back_that_did_not_reach_the_remote_says_so_and_names_the_sync(
        left_passed: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """A blind review: the give-back said "given back" when its sync to the remote failed
    and the lease stayed open there."""
    from leapgit.errors import LedgerBusy
    from leapgit.ledger import sync as syncing

    p = left_passed
    real_sync = syncing.sync
    calls: list[int] = []

    def the_release_fails(*args: object, **kwargs: object) -> object:
        calls.append(1)
        if len(calls) >= 2:  # the release's sync: the remote kept moving
            raise LedgerBusy("the ledger on origin kept moving", hint="try again")
        return real_sync(*args, **kwargs)  # type: ignore[arg-type]

    said = _interrupted_as_the_lease_is_taken(
        p, monkeypatch, lambda: monkeypatch.setattr(syncing, "sync", the_release_fails))
    assert not any(n.endswith("release.yaml") for n in _leases_on_remote(p))
    assert any("given back here; `leap sync origin` gives it back on origin" in line
               for line in said), said
    synced = leap("sync", "origin", cwd=p.work)  # the hint, exactly
    assert synced.code == 0, synced
    assert any(n.endswith("release.yaml") for n in _leases_on_remote(p))


def test_a_merge_stopped_with_the_remote_gone_says_its_lease_is_given_back_here_only(
        left_passed: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """A blind review: a merge the outage stopped gave its lease back here, and said nothing
    of the remote, where it stayed open (``merge._stopped``)."""
    from leapgit.git import RemoteUnavailable
    from leapgit.ledger import sync as syncing
    from leapgit.scoring import merge as merging

    p = left_passed
    gone = RemoteUnavailable("cannot reach origin: the remote end hung up; nothing was pushed")

    def away(*_args: object, **_kwargs: object) -> None:
        raise gone

    def cut_off(*_args: object, **_kwargs: object) -> None:
        monkeypatch.setattr(syncing, "sync", away)  # the give-back cannot reach it either
        raise gone

    monkeypatch.setattr(merging, "_push", cut_off)
    said: list[str] = []
    with pytest.raises(RemoteUnavailable):
        merging.merge(open_workspace(p.work), "left", echo=said.append)
    monkeypatch.undo()
    assert "the lease is given back here; `leap sync origin` gives it back on origin" in said
    assert not any(n.endswith("release.yaml") for n in _leases_on_remote(p))
    synced = leap("sync", "origin", cwd=p.work)  # the hint, exactly
    assert synced.code == 0, synced
    assert any(n.endswith("release.yaml") for n in _leases_on_remote(p))


def _reviewed_then_cut_off(p: Project, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """`leap merge left` whose aggregate review passed and whose spine push was then cut
    off; returns the records of the slice's aggregate reviews."""
    from leapgit.git import RemoteUnavailable
    from leapgit.scoring import merge as merging

    def cut_off(*_args: object, **_kwargs: object) -> None:
        raise RemoteUnavailable("cannot reach origin: the remote end hung up; nothing was "
                                "pushed")

    monkeypatch.setattr(merging, "_push", cut_off)  # the spine push, after the review
    with pytest.raises(RemoteUnavailable):
        merging.merge(open_workspace(p.work), "left", echo=lambda _line: None)
    monkeypatch.undo()
    reviewed = _reviews(p)
    assert any(r.endswith("/summary.yaml") for r in reviewed), reviewed
    return reviewed


def _reviews(p: Project) -> list[str]:  # every record of the slice's aggregate reviews
    return git("ls-tree", "-r", "--name-only", "leap/ledger", "slices/left/tribunal/",
               cwd=p.work).splitlines()


def test_a_merge_cut_off_after_its_review_passed_lands_on_that_review_unpaid(
        left_passed: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """A walk-away hunt: an outage after the aggregate review passed threw the review away,
    and the next merge paid for the same review of the same bytes again (T6: the same bytes
    are not reviewed again, as a refusal already was not)."""
    p = left_passed
    reviewed = _reviewed_then_cut_off(p, monkeypatch)
    landed = leap("merge", "left", cwd=p.work, timeout=300)
    assert landed.code == 0, landed
    assert "passed the aggregate review in run" in landed.out, landed
    assert "round 2" not in landed.out and _reviews(p) == reviewed  # no review, no spend


def test_a_passed_review_is_not_reused_for_a_builder_of_another_family(
        left_passed: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """A blind review: the reuse ignored the builder; its jurors were chosen apart from
    another family's (T4)."""
    p = left_passed
    reviewed = _reviewed_then_cut_off(p, monkeypatch)
    landed = leap("merge", "left", "--builder", "model=other-m,family=otherfam,session=s2",
                  cwd=p.work, timeout=300)
    assert landed.code == 0, landed
    assert "passed the aggregate review in run" not in landed.out, landed
    assert _reviews(p) != reviewed  # reviewed again, for this builder


def _no_answer_then_landed_by_the_server(p: Project, monkeypatch: pytest.MonkeyPatch) -> str:
    """`leap merge left` whose spine push got no answer (a dropped connection) while the
    remote's spine still was at its base; the server then finishes the push (its ref moves
    to the planned tip). Returns that tip."""
    from leapgit.git import GitFailed
    from leapgit.scoring import merge as merging

    def no_answer(*_args: object, **_kwargs: object) -> None:
        raise GitFailed("the spine push to origin failed (exit 128)")

    base = git("rev-parse", "refs/heads/main", cwd=p.bare)
    monkeypatch.setattr(merging, "_push", no_answer)
    with pytest.raises(GitFailed):
        merging.merge(open_workspace(p.work), "left", echo=lambda _line: None)
    monkeypatch.undo()
    kept = sorted((p.work / ".git" / "leap-merging" / "kept" / "left").glob("*.yaml"))
    assert len(kept) == 1, kept  # set aside: the server may finish it yet
    tip = kept[0].stem
    git("fetch", "-q", str(p.work), tip, cwd=p.bare)  # the server, finishing late
    git("update-ref", "refs/heads/main", tip, base, cwd=p.bare)
    return tip


def test_a_push_that_got_no_answer_and_landed_later_is_recorded_by_the_next_merge(
        left_passed: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """A blind review: a push that got no answer, with the remote's spine still at its base,
    was forgotten; a server that finished it later left a merge no record names (L8)."""
    p = left_passed
    tip = _no_answer_then_landed_by_the_server(p, monkeypatch)
    landed = leap("merge", "left", cwd=p.work, timeout=300)
    assert landed.code == 0, landed
    assert f"left in flight landed at {tip[:12]}: recorded now" in landed.out, landed
    with Ledger(p.work / ".git") as ledger:
        from leapgit.ledger import history

        assert [m.tip for m in history.merge_records(ledger.require(), "left")] == [tip]
    assert leap("audit", cwd=p.work).code == 0


def test_another_slices_merge_that_landed_later_is_recorded_before_this_merge(
        left_passed: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """A blind review: a merge set aside was looked at only when its own slice merged
    again; any other merge first recorded it (``merge._others_landed``)."""
    from leapgit.scoring import merge as merging

    p = left_passed
    tip = _no_answer_then_landed_by_the_server(p, monkeypatch)
    said: list[str] = []
    ws = open_workspace(p.work)
    base = git("rev-parse", "refs/heads/main", cwd=p.work)
    assert merging._others_landed(ws, "another", "integrator", base, said.append)
    assert any(f"landed at {tip[:12]}: recorded now" in line for line in said), said
    assert git("rev-parse", "refs/heads/main", cwd=p.work) == tip  # the spine here follows
    assert leap("audit", cwd=p.work).code == 0


def test_a_merge_of_an_unknown_slice_writes_nothing_first(
        left_passed: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bad input is said before anything is written: `leap merge NOSUCH` recorded another
    slice's merge that had landed (true, but a command given a wrong name must not write),
    then refused the name."""
    p = left_passed
    tip = _no_answer_then_landed_by_the_server(p, monkeypatch)
    ledger_before = git("rev-parse", "leap/ledger", cwd=p.work)
    res = leap("merge", "nosuch", cwd=p.work, timeout=300)
    assert res.code == 2 and "unknown slice 'nosuch' (known: left)" in res.err, res
    assert "recorded now" not in res.out, res
    assert git("rev-parse", "leap/ledger", cwd=p.work) == ledger_before
    kept = p.work / ".git" / "leap-merging" / "kept" / "left" / f"{tip}.yaml"
    assert kept.is_file()  # still set aside: `leap merge left` records it (the test above)


def test_a_merge_while_another_of_this_clone_runs_is_a_hold_whose_hint_lands_after_it(
        left_passed: Project) -> None:
    p = left_passed
    before = p.remote_tip("refs/heads/main")
    with _merge_lock(p):  # the other merge of this clone, running
        busy = leap("merge", "left", cwd=p.work, env=p.env, subprocess=True)
    assert busy.code == 3 and "another merge runs in this clone now [L9]" in busy.err, busy
    assert p.remote_tip("refs/heads/main") == before
    [again] = hinted_leap(busy.err)  # "wait for it to end": it has
    landed = p.leap(*again)
    assert landed.code == 0, landed
    assert p.remote_tip("refs/heads/main") != before
