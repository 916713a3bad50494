"""Two clones, two slices, one shared remote (L9: one write spine, one integrator at a
time). A dead-end hunt found the second clone's merge stuck for good: it took the
integrator lease in its own ledger while the remote held another clone's lease of that
number, so its every sync stopped on "a true conflict" no command cleared; and it built its
merge on its own old copy of the spine, which the remote refused as no fast-forward, a new
paid review each try. Now a merge with a remote takes its lease by the remote's
compare-and-swap, builds on the spine the remote holds, and a lease another integrator
holds is a hold that names it; `leap run` waits for its release. Real clones, real workers,
the real hook behind `git daemon`."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from leapgit.ledger import layout
from leapgit.ledger.leases import release_lease, take_lease
from leapgit.ledger.workspace import open_workspace
from tests.loop import workers_world as ww
from tests.loop.test_run_lease import MORE
from tests.loop.workers_world import wait
from tests.support import GitDaemon, git
from tests.tribunal.jurors import JurorServer

RUN = ("--remote", "origin", "--poll", "0.2", "--heartbeat", "0")
ELSEWHERE = "merge other on elsewhere"  # the lease of an integrator on another machine


@contextmanager
def two_clones(daemon: GitDaemon, jurors: JurorServer, name: str
               ) -> Iterator[tuple[ww.World, Path]]:
    """A world whose remote holds two slices (``pkgs`` and ``more``), a second clone B
    synced with it, and two workers building whatever is published."""
    w = ww.world(daemon, jurors, name, 2)
    (w.base_dir / "more.yaml").write_text(MORE)
    assert w.leap("slice", "cut", str(w.base_dir / "more.yaml")).code == 0
    assert w.leap("sync", "origin").code == 0
    b = w.clone("B")
    assert w.leap("sync", "origin", cwd=b).code == 0
    workers = [w.popen("worker", "--remote", "origin", "--name", f"w{i}", "--poll", "0.2",
                       cwd=w.clone(f"w{i}")) for i in (1, 2)]
    try:
        yield w, b
    finally:
        for proc in workers:
            proc.send_signal(signal.SIGINT)
        for i, proc in enumerate(workers, start=1):
            wait(proc, w.base_dir / f"w{i}.log", 60)


def open_lease_elsewhere(w: ww.World) -> None:
    """Another integrator's lease, open on the remote (its merge runs there now)."""
    with open_workspace(w.work).ledger() as ledger:
        take_lease(ledger, "main", "integrator", ELSEWHERE)
    assert w.leap("sync", "origin").code == 0


def give_back_elsewhere(w: ww.World) -> None:
    with open_workspace(w.work).ledger() as ledger:
        release_lease(ledger, "main", "integrator", "its merge ended")
    assert w.leap("sync", "origin").code == 0


def landed_both(w: ww.World, b: Path, first: str) -> None:
    """Both slices are on the remote's spine, the second built on the first; B's spine is
    the remote's; every lease is closed; B's audit holds."""
    tip = git("rev-parse", "main", cwd=w.bare)
    assert git("merge-base", "--is-ancestor", first, tip, cwd=w.bare) == ""
    for ball in ("b1", "b2", "c1", "c2"):
        assert git("show", f"main:pkg/{ball}.py", cwd=w.bare), ball
    assert git("rev-parse", "main", cwd=b) == tip
    names = w.ledger_files("spines/main/leases/")
    assert sum(n.endswith("take.yaml") for n in names) == \
        sum(n.endswith("release.yaml") for n in names), names
    assert w.ledger_files(layout.merge_path("more"))
    audit = w.leap("audit", cwd=b)
    assert audit.code == 0, audit


def test_a_second_clone_merges_past_a_lease_it_had_not_seen_onto_the_moved_spine(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    with two_clones(daemon, jurors, "two-integrators") as (w, b):
        a = w.leap("run", ww.S, *RUN, timeout=240)
        assert a.code == 0 and "landed" in a.out, a.out[-3000:]
        first = git("rev-parse", "main", cwd=w.bare)
        # B's balls pass; its merge stops on an uncommitted change in its spine's checkout
        (b / "README.md").write_text("# edited, not committed\n")
        stopped = w.leap("run", "more", *RUN, cwd=b, timeout=240)
        assert stopped.code == 2 and "uncommitted changes" in stopped.out, stopped.out[-3000:]
        git("checkout", "--", "README.md", cwd=b)
    # After B's last look, another integrator's lease opens on the remote; and B holds a
    # lease of that number of its own, taken and given back here only (an older leapgit's
    # merge, stopped before its push).
    open_lease_elsewhere(w)
    with open_workspace(b).ledger() as ledger:
        take_lease(ledger, "main", "integrator", "merge more on this machine")
        release_lease(ledger, "main", "integrator", "stopped before its push")
    held = w.leap("merge", "more", cwd=b)
    assert held.code == 3, held
    assert f"leased to 'integrator' (lease 2: {ELSEWHERE})" in held.err, held
    assert "`leap merge more` again once it is given back" in held.err, held
    assert "`leap sync origin`, then `leap lease release --holder integrator` and `leap sync " \
        "origin`, in its clone" in held.err, held
    assert git("rev-parse", "main", cwd=w.bare) == first  # nothing landed
    # the holder's clone gives it back, as the hint says: synced, released, then shared
    assert w.leap("sync", "origin").code == 0
    assert w.leap("lease", "release", "--holder", "integrator").code == 0
    assert w.leap("merge", "more", cwd=b).code == 3  # not shared yet: still held
    assert w.leap("sync", "origin").code == 0
    again = w.leap("merge", "more", cwd=b)  # the hint, exactly
    assert again.code == 0, again
    landed_both(w, b, first)


def test_two_runs_of_two_slices_on_two_clones_at_once_wait_for_a_lease_and_both_land(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """The hunt's own case: whichever merges second waits for, or follows, the first. A
    third integrator's lease is open when both runs reach their merge: both wait for it
    (`leap run` looks again), and land once it is given back."""
    with two_clones(daemon, jurors, "two-runs") as (w, b):
        open_lease_elsewhere(w)
        logs = {"A": w.base_dir / "A.log", "B": w.base_dir / "B.log"}
        runs = [w.popen("run", ww.S, *RUN, cwd=w.work, log=logs["A"]),
                w.popen("run", "more", *RUN, cwd=b, log=logs["B"])]
        deadline = time.monotonic() + 240
        while not all("waits for lease 1" in log.read_text() for log in logs.values()):
            said = {n: log.read_text()[-2000:] for n, log in logs.items()}
            assert all(r.poll() is None for r in runs) and time.monotonic() < deadline, said
            time.sleep(0.2)
        give_back_elsewhere(w)
        codes = [wait(proc, logs[n], 300) for proc, n in zip(runs, "AB", strict=True)]
    texts = {n: log.read_text() for n, log in logs.items()}
    assert codes == [0, 0], {n: text[-3000:] for n, text in texts.items()}
    assert all("landed" in text for text in texts.values())
    tip = git("rev-parse", "main", cwd=w.bare)
    for ball in ("b1", "b2", "c1", "c2"):
        assert git("show", f"{tip}:pkg/{ball}.py", cwd=w.bare), ball
    assert w.leap("sync", "origin", cwd=b).code == 0
    git("pull", "-q", "--ff-only", "origin", "main", cwd=b)  # whichever landed first
    audit = w.leap("audit", cwd=b)
    assert audit.code == 0, audit


def test_a_lease_taken_here_alone_and_still_open_is_given_back_then_left_out(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """An older leapgit's merge took lease 1 in B's ledger alone and died; the remote gave
    lease 1 to another integrator. B's sync names the release, which leads on: the next
    sync leaves B's lease out, and B's audit says so as a note, not a rewrite."""
    w = ww.world(daemon, jurors, "lost-open-lease", 2)
    b = w.clone("B")
    assert w.leap("sync", "origin", cwd=b).code == 0
    open_lease_elsewhere(w)
    with open_workspace(b).ledger() as ledger:
        take_lease(ledger, "main", "integrator", "merge pkgs on a machine of old")
    stuck = w.leap("sync", "origin", cwd=b)
    assert stuck.code == 1 and "a true conflict: spines/main/leases/1/take.yaml" in stuck.err
    hint = ("`leap lease release --holder integrator` gives it back here, then `leap sync "
            "origin` again")
    assert hint in stuck.err, stuck
    released = w.leap("lease", "release", "--holder", "integrator", cwd=b)  # the hint
    assert released.code == 0, released
    synced = w.leap("sync", "origin", cwd=b)  # the hint, exactly
    assert synced.code == 0, synced
    # what it left out is said (a reversibility review: the drop went unreported)
    assert "left out here: spines/main/leases/1/take.yaml, spines/main/leases/1/release.yaml" \
        in synced.out and "lost their number to origin's (L9)" in synced.out, synced
    take = git("show", f"leap/ledger:{layout.lease_path('main', 1, 'take')}", cwd=b)
    assert ELSEWHERE in take  # the remote's lease 1 stands here
    audit = w.leap("audit", cwd=b)
    assert audit.code == 0, audit
    assert "left out by a sync (L9)" in audit.out, audit
