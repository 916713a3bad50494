"""One `leap run` drives a slice at a time across clones (L3, issue 15 item 7): with a
shared remote the run holds the slice's run lease on the remote's ledger (``rules.runs``).
A run on another clone is refused, naming it, and its hint leads on; a run killed with -9
is taken over by its own clone's next run at once. Real clones, the real hook behind
`git daemon`; no worker builds here, so each run waits on its published balls until the
test stops it."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from leapgit.errors import RuleViolation
from leapgit.ledger import layout
from leapgit.ledger.sync import push_records
from leapgit.records import yamlio
from leapgit.records.runs import RunAction, RunLeaseRecord
from leapgit.timeutil import now_iso
from tests.loop import workers_world as ww
from tests.loop.workers_world import wait
from tests.support import GitDaemon, git, hinted_leap, leap
from tests.tribunal.jurors import JurorServer


def world(daemon: GitDaemon, jurors: JurorServer, name: str) -> ww.World:
    base = daemon.base / name
    base.mkdir()
    return ww.build(base, lambda bare: daemon.url(str(bare.relative_to(daemon.base))),
                    jurors.url, 2)


def running(w: ww.World, cwd: Path, log: str, *extra: str) -> subprocess.Popen[bytes]:
    return w.popen("run", ww.S, "--remote", "origin", "--poll", "0.2", "--heartbeat", "0",
                   *extra, cwd=cwd, log=w.base_dir / log)


@contextmanager
def driving(w: ww.World, cwd: Path, log: str, *args: str) -> Iterator[None]:
    """`leap run` (``args``: its slice and flags) while the block runs; then Ctrl-C."""
    proc = w.popen("run", *args, "--remote", "origin", "--poll", "0.2", "--heartbeat", "0",
                   cwd=cwd, log=w.base_dir / log)
    try:
        yield
    finally:
        proc.send_signal(signal.SIGINT)
        wait(proc, w.base_dir / log, 60)


def with_a_worker(w: ww.World, cwd: Path, log: str, *extra: str) -> tuple[int, str]:
    """`leap run --remote origin` in ``cwd`` (``extra``: its flags) to its end, while a
    worker on a clone of its own builds; its exit code and what it printed."""
    name = f"builder-{Path(log).stem}"
    worker = w.popen("worker", "--remote", "origin", "--name", name, "--poll", "0.2",
                     cwd=w.clone(name))
    try:
        run = w.popen("run", ww.S, "--remote", "origin", "--heartbeat", "0", *extra, cwd=cwd,
                      log=w.base_dir / log)
        code = wait(run, w.base_dir / log)
    finally:
        worker.send_signal(signal.SIGINT)
        wait(worker, w.base_dir / f"{name}.log", 60)
    return code, (w.base_dir / log).read_text()


def files(w: ww.World, pattern: str) -> list[str]:
    """The remote ledger's files under ``pattern``; none while it has no ledger."""
    try:
        return w.ledger_files(pattern)
    except AssertionError:  # no ledger ref there yet
        return []


def lease(w: ww.World, number: int, action: str = "take", timeout: float = 120,
          slice_id: str = ww.S, log: str | None = None) -> dict[str, object]:
    """The remote's run lease record, once it is there (``log``: the run's, shown if not)."""
    path = layout.run_path(slice_id, number, action)
    deadline = time.monotonic() + timeout
    while path not in files(w, f"slices/{slice_id}/runs/"):
        said = (w.base_dir / log).read_text()[-3000:] if log else ""
        assert time.monotonic() < deadline, (path, files(w, f"slices/{slice_id}/"), said)
        time.sleep(0.1)
    return yamlio.loads(w.ledger_text(path).encode(), path)


def test_a_run_on_another_clone_is_refused_and_the_take_over_hint_leads_on(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    w = world(daemon, jurors, "two-drivers")
    first = running(w, w.work, "first.log")
    took = lease(w, 1)
    other = w.clone("other")
    res = w.leap("run", ww.S, "--remote", "origin", "--heartbeat", "0", cwd=other)
    assert res.code == 3 and "[L3]" in res.err, res
    assert f"is being run by run lease 1 of {took['holder']} (process {first.pid}" in res.err
    hint = f"`leap run {ww.S} --remote origin --take-over` takes its lease over"
    assert hint in res.err, res
    assert layout.run_path(ww.S, 2, "take") not in w.ledger_files("/runs/")  # nothing taken
    first.kill()  # its machine lost: the lease stays open
    first.wait()
    second = running(w, other, "second.log", "--take-over")  # the hint, exactly
    took2 = lease(w, 2)
    assert took2["takes_over"] == 1 and took2["holder"] != took["holder"], took2
    second.send_signal(signal.SIGINT)
    assert wait(second, w.base_dir / "second.log", 60) == 130
    assert lease(w, 2, "release", 30)["holder"] == took2["holder"]


def test_a_killed_run_is_taken_over_by_its_own_clone_at_once(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    w = world(daemon, jurors, "killed-driver")
    first = running(w, w.work, "first.log")
    lease(w, 1)
    first.send_signal(signal.SIGKILL)
    first.wait()
    again = running(w, w.work, "again.log")
    took = lease(w, 2)
    assert took["takes_over"] == 1, took
    again.send_signal(signal.SIGINT)
    assert wait(again, w.base_dir / "again.log", 60) == 130
    lease(w, 2, "release", 30)
    names = w.ledger_files(f"slices/{ww.S}/runs/")
    assert layout.run_path(ww.S, 1, "release") not in names, names  # closed by the take over


def test_take_over_without_a_remote_is_bad_input(daemon: GitDaemon, jurors: JurorServer
                                                 ) -> None:
    w = world(daemon, jurors, "no-remote")
    res = leap("run", ww.S, "--take-over", cwd=w.work)
    assert res.code == 2 and "--take-over" in res.err and "[L3]" in res.err, res
    assert "Traceback" not in res.err


def test_the_server_refuses_a_second_open_run_lease_and_a_release_by_another_clone(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """``rules.runs`` at the server: what a run that skipped its own check would push."""
    w = world(daemon, jurors, "forged-runs")
    with driving(w, w.work, "first.log", ww.S):
        lease(w, 1)
        other = w.clone("forger")
        assert w.leap("sync", "origin", cwd=other).code == 0
        forged: list[tuple[int, RunAction, str]] = [
            (2, "take", "open at once"), (1, "release", "only its clone gives it back")]
        for number, action, why in forged:
            rec = RunLeaseRecord(ww.S, number, action, "elsewhere:/x", 1, now_iso())
            with pytest.raises(RuleViolation) as info:
                push_records("origin", {layout.run_path(ww.S, number, action):
                                        yamlio.dumps(rec.to_dict())}, "forged", start=other)
            said = " ".join(info.value.lines())
            assert "[L3]" in said and why in said, said


MORE = """slice: more
spine: integrator
balls:
  - id: c1
    goal: c1 returns its name
    spec: add pkg/c1.py with c1()
    scope: [pkg/c1.py, tests/test_c1.py]
    proof: python -m unittest -q tests.test_c1
    tests: python -m unittest discover -q -s tests -t .
    rollback: restore-scope
  - id: c2
    goal: c2 returns its name
    spec: add pkg/c2.py with c2()
    scope: [pkg/c2.py, tests/test_c2.py]
    proof: python -m unittest -q tests.test_c2
    tests: python -m unittest discover -q -s tests -t .
    rollback: restore-scope
"""


def test_the_first_run_of_a_slice_cut_here_takes_its_lease_after_the_cut_reached_the_remote(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """Blind review: the cut was only in this clone's ledger, and the remote held the run
    lease of a slice it did not know (every other clone's `leap status` failed on it)."""
    w = world(daemon, jurors, "cut-here")
    (w.base_dir / "more.yaml").write_text(MORE)
    assert w.leap("slice", "cut", str(w.base_dir / "more.yaml")).code == 0
    with driving(w, w.work, "more.log", "more"):
        lease(w, 1, slice_id="more")
        assert "slices/more/slice.yaml" in w.ledger_files("slices/more/")
        other = w.clone("reader")
        assert w.leap("sync", "origin", cwd=other).code == 0
        shown = w.leap("status", cwd=other)
        assert shown.code == 0 and "slice more" in shown.out, shown


def test_a_run_on_a_remote_without_a_ledger_puts_this_one_there_first(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    w = world(daemon, jurors, "no-ledger-there")
    git("update-ref", "-d", "refs/heads/leap/ledger", cwd=w.bare)
    with driving(w, w.work, "first.log", ww.S):
        lease(w, 1)
        assert f"slices/{ww.S}/slice.yaml" in w.ledger_files(f"slices/{ww.S}/")


def test_the_server_refuses_a_run_lease_of_a_slice_it_does_not_hold(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    w = world(daemon, jurors, "ghost-run")
    rec = RunLeaseRecord("ghost", 1, "take", "elsewhere:/x", 1, now_iso())
    with pytest.raises(RuleViolation) as info:
        push_records("origin", {layout.run_path("ghost", 1, "take"):
                                yamlio.dumps(rec.to_dict())}, "forged", start=w.work)
    said = " ".join(info.value.lines())
    assert "[L3]" in said and "which this ledger does not hold" in said, said


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_after_the_remote_took_the_run_lease_gives_it_back(
        daemon: GitDaemon, jurors: JurorServer, sig: int) -> None:
    """As a worker's claim (tests/loop/test_workers.py): the take landed, its push had not
    returned when Ctrl-C came; the run gives the lease back on its way out, so no other
    clone is refused by a run that never ran (CI caught the window in the test above).
    SIGTERM (a supervisor's stop) does the same: before, it killed the run there and left
    the lease to a take-over."""
    w = world(daemon, jurors, f"ctrlc-run-{int(sig)}")
    marker, entered = ww.slow_pushes(w)
    run = running(w, w.work, "hasty.log")
    deadline = time.monotonic() + 60
    while not entered.exists():  # a push landed (the run's ledger, then its lease)
        assert time.monotonic() < deadline and run.poll() is None
        time.sleep(0.02)
    while layout.run_path(ww.S, 1, "take") not in files(w, "/runs/"):
        entered.unlink()
        while not entered.exists():
            assert time.monotonic() < deadline and run.poll() is None
            time.sleep(0.02)
    run.send_signal(sig)
    marker.unlink()
    assert wait(run, w.base_dir / "hasty.log", 60) == 130
    assert layout.run_path(ww.S, 1, "release") in files(w, "/runs/"), \
        (w.base_dir / "hasty.log").read_text()


def test_a_lease_of_another_boot_of_the_same_host_and_path_is_not_taken_as_our_own(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """A machine started from this one's disk image has the same host name and the same
    git-dir path: the lease its run holds is not ours, though our file lock is free (ours
    says nothing of its process). Before, the holder was host:git-dir only, so this clone
    took it over at once and two runs drove the slice. The same holds after a reboot: the
    run before is another boot's; `--take-over` (the hint) takes it."""
    from leapgit.loop.lease import clone_id

    w = world(daemon, jurors, "same-image")
    ours = clone_id(Path(git("rev-parse", "--path-format=absolute", "--git-common-dir",
                             cwd=w.work).strip()))
    assert "(boot " in ours, ours  # Linux: this machine's boot is part of the name
    twin = ours.split(" (boot ")[0] + " (boot 00000000)"
    with driving(w, w.work, "warm.log", ww.S):  # the slice's cut reaches the remote
        lease(w, 1)
    lease(w, 1, "release", 30, log="warm.log")
    rec = RunLeaseRecord(ww.S, 2, "take", twin, 4242, now_iso())
    push_records("origin", {layout.run_path(ww.S, 2, "take"): yamlio.dumps(rec.to_dict())},
                 "the twin's run", start=w.work)
    res = w.leap("run", ww.S, "--remote", "origin", "--heartbeat", "0")
    assert res.code == 3 and "[L3]" in res.err, res
    assert f"is being run by run lease 2 of {twin} (process 4242" in res.err, res.err
    assert layout.run_path(ww.S, 3, "take") not in files(w, "/runs/")  # nothing taken
    again = running(w, w.work, "again.log", "--take-over")  # the hint, exactly
    took = lease(w, 3)
    assert took["takes_over"] == 2 and took["holder"] == ours, took
    again.send_signal(signal.SIGINT)
    assert wait(again, w.base_dir / "again.log", 60) == 130


def test_a_lease_that_kept_moving_says_run_again_and_again_takes_it(
        daemon: GitDaemon, jurors: JurorServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every hint leads on: when the run lease's number kept moving under every look (each
    take lost its compare-and-swap; here no look is allowed at all), the run holds, nothing
    taken, and names `leap run S --remote R` again, which a test runs exactly."""
    from leapgit.loop import lease as lease_module

    w = world(daemon, jurors, "kept-moving")
    monkeypatch.setattr(lease_module, "_TAKE_ATTEMPTS", 0)
    res = w.leap("run", ww.S, "--remote", "origin", "--heartbeat", "0")
    assert res.code == 3 and "[L3]" in res.err, res
    assert f"the run lease of {ww.S} on origin kept moving" in res.err, res.err
    hint = f"run `leap run {ww.S} --remote origin` again"
    assert hint in res.err, res.err
    assert layout.run_path(ww.S, 1, "take") not in files(w, "/runs/")  # nothing taken
    again = running(w, w.work, "again.log")  # the hint, exactly (its own process)
    took = lease(w, 1)
    assert took["holder"] and took.get("takes_over") is None, took
    again.send_signal(signal.SIGINT)
    assert wait(again, w.base_dir / "again.log", 60) == 130


def test_a_lease_of_this_clone_named_before_the_boot_was_part_of_it_is_taken_over_at_once(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """A lease left open by this clone's run before an upgrade names it ``host:git-dir``
    alone: it is this clone's (its file lock is free), taken over at once as before, not
    held as another clone's until `--take-over` (blind review)."""
    from leapgit.loop.lease import clone_id

    w = world(daemon, jurors, "old-holder")
    ours = clone_id(Path(git("rev-parse", "--path-format=absolute", "--git-common-dir",
                             cwd=w.work).strip()))
    with driving(w, w.work, "warm.log", ww.S):  # the slice's cut reaches the remote
        lease(w, 1)
    lease(w, 1, "release", 30, log="warm.log")
    old = RunLeaseRecord(ww.S, 2, "take", ours.split(" (boot ")[0], 4242, now_iso())
    push_records("origin", {layout.run_path(ww.S, 2, "take"): yamlio.dumps(old.to_dict())},
                 "a run before the upgrade", start=w.work)
    again = running(w, w.work, "again.log")
    took = lease(w, 3)
    assert took["takes_over"] == 2 and took["holder"] == ours, took
    again.send_signal(signal.SIGINT)
    assert wait(again, w.base_dir / "again.log", 60) == 130


def test_a_lease_a_stopped_run_could_not_give_back_is_taken_over_by_the_next_run_it_names(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """Every hint leads on: a run stopped while its remote is out of reach cannot give its
    lease back; it warns that the lease may stay open and that this clone's next
    `leap run S --remote R` takes it over, and that run, with the remote back, does so at
    once (no `--take-over`, no wait for the lease to lapse)."""
    from leapgit.loop.lease import clone_id

    w = world(daemon, jurors, "left-open")
    first = running(w, w.work, "first.log")
    lease(w, 1, log="first.log")
    away = w.bare.with_name(w.bare.name + ".away")
    w.bare.rename(away)  # the remote is out of reach as the run stops
    try:
        first.send_signal(signal.SIGINT)
        assert wait(first, w.base_dir / "first.log", 60) == 130
    finally:
        away.rename(w.bare)
    said = (w.base_dir / "first.log").read_text()
    assert f"run lease 1 of {ww.S} may stay open on origin (" in said, said
    hint = f"the next `leap run {ww.S} --remote origin` of this clone takes it over"
    assert hint in said, said
    assert layout.run_path(ww.S, 1, "release") not in files(w, "/runs/")  # it stayed open
    ours = clone_id(Path(git("rev-parse", "--path-format=absolute", "--git-common-dir",
                             cwd=w.work).strip()))
    again = running(w, w.work, "again.log")  # the hint (its own process)
    took = lease(w, 2, log="again.log")
    assert took["takes_over"] == 1 and took["holder"] == ours, took
    again.send_signal(signal.SIGINT)
    assert wait(again, w.base_dir / "again.log", 60) == 130
    assert layout.run_path(ww.S, 2, "release") in files(w, "/runs/")


def test_a_run_that_stops_gives_its_lease_back_only_with_its_records_on_the_remote(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """A walk-away hunt on two machines: `leap run --remote` stopped (one ball refused)
    and gave its run lease back, while the other ball's score, recorded after its last look
    at the remote, stayed in its clone alone. Another machine then scored that ball again,
    and the first clone's every sync, run and merge stopped on a true conflict. The run
    now puts its records on the remote before it gives its lease back: when it ends, its
    clone's ledger is the remote's."""
    w = world(daemon, jurors, "stopped-run-pushes")
    (w.base_dir / "breach-b2").write_text("")  # b2's builder writes outside its scope
    # the run looks at the remote once in 8 s: its last records are its own to push
    code, said = with_a_worker(w, w.work, "run.log", "--poll", "8")
    assert code == 1 and "b2" in said, said[-3000:]
    assert w.ledger_files(f"slices/{ww.S}/balls/b1/scores/"), said[-3000:]  # b1's score up
    assert git("rev-parse", "leap/ledger", cwd=w.work) == w.remote_ledger(), said[-3000:]
    assert layout.run_path(ww.S, 1, "release") in w.ledger_files(f"slices/{ww.S}/runs/")
    # the respec the stop names leads on to the workers, never to a throw here (a walk-away
    # hunt: its `leap throw` made a local episode no worker saw)
    (w.base_dir / "breach-b2").unlink()
    spec = w.base_dir / "b2.yaml"
    spec.write_text(ww.draft(2).split("  - id: b2\n")[1].replace("    ", "")
                    + "reason: the builder wrote outside its scope\n")
    respecced = w.leap("ball", "respec", ww.S, "b2", str(spec))
    assert respecced.code == 0, respecced
    [command] = [c for c in hinted_leap(respecced.out) if c[0] == "run"]
    assert command == ["run", ww.S, "--remote", "origin"], respecced.out
    # shared, the respec keeps a worker at work: the thrower throws b2 next (a worker that
    # saw b2 refused and nothing else to build ended at once: "done: 0 ball(s) built")
    assert w.leap("sync", "origin").code == 0
    code, said = with_a_worker(w, w.work, "again.log")
    assert code == 0 and "landed" in said, said[-3000:]


def test_a_take_over_gives_back_the_integrator_lease_of_the_gone_run_s_merge(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """A walk-away hunt on two machines: a run killed outright in its merge (its machine
    lost) left the spine's integrator lease open; `leap run S --remote R --take-over` on
    another machine took the run lease over, then waited on that integrator lease ("its
    holder gives back a lease whose merge died ... in its clone": the lost machine) until
    a person gave it back by hand. Taking the run over gives back the lease its merge held,
    and the slice lands."""
    from leapgit.ledger.leases import next_take
    from leapgit.ledger.store import Ledger
    from leapgit.ledger.workspace import open_workspace
    from leapgit.scoring.merge import _taken_for

    w = world(daemon, jurors, "taken-over-merge")
    first = running(w, w.work, "first.log")
    lease(w, 1)
    with Ledger(w.work / ".git") as ledger:  # the lease its merge took, then its machine lost
        _, records, subject, trailers = next_take(
            ledger.require(), "main", "integrator", _taken_for(open_workspace(w.work), ww.S))
    push_records("origin", records, subject, trailers, start=w.work)
    first.kill()
    first.wait()
    code, said = with_a_worker(w, w.clone("other"), "second.log", "--take-over")
    assert code == 0 and "landed" in said, said[-3000:]
    released = yamlio.loads(w.ledger_text(layout.lease_path("main", 1, "release")).encode(),
                            "release")
    assert "taken over" in str(released.get("reason")), released


def test_a_run_shares_one_remote_the_one_its_spine_tracks(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """L9 (a walk-away hunt): `leap run S --remote nohook`, with the spine tracking origin,
    published the balls and took the claims on nohook, and merged onto origin's spine with
    the slice's records: two remotes, each with half. Refused before anything is taken;
    the hint's run on the spine's remote lands."""
    w = world(daemon, jurors, "two-remotes")
    other = w.base_dir / "nohook.git"
    git("init", "-q", "--bare", "-b", "main", str(other), cwd=w.base_dir)
    git("remote", "add", "nohook", str(other), cwd=w.work)
    git("push", "-q", "nohook", "main", "leap/ledger", cwd=w.work)
    before = git("rev-parse", "leap/ledger", cwd=other)
    res = w.leap("run", ww.S, "--remote", "nohook", "--max-minutes", "30", "--heartbeat", "0")
    assert res.code == 2 and "[L9]" in res.err and "--remote" in res.err, res
    assert git("rev-parse", "leap/ledger", cwd=other) == before  # nothing taken there
    # the other way out, in a clone of its own: the spine tracks nohook, and the run goes on
    # past the refusal (its time cap, kept in the hint, stops it at once)
    [config] = [c.split() for c in res.err.split("`") if c.startswith("git config ")]
    elsewhere = w.clone("elsewhere")
    git("remote", "add", "nohook", str(other), cwd=elsewhere)
    git("fetch", "-q", "nohook", cwd=elsewhere)
    git(*config[1:], cwd=elsewhere)
    past = w.leap("run", ww.S, "--remote", "nohook", "--max-minutes", "0.01", "--heartbeat",
                  "0", cwd=elsewhere)
    assert past.code != 2 and "[L9]" not in past.err, past
    [command] = [c for c in hinted_leap(res.err) if c[0] == "run"][:1]
    assert command == ["run", ww.S, "--max-minutes", "30", "--remote", "origin"], res.err
    code, said = with_a_worker(w, w.work, "hinted.log", "--max-minutes", "30")  # as hinted
    assert code == 0 and "landed" in said, said[-3000:]
