"""Every hint leads on, for two stops of `leap run`'s merge step (the brief: a hint is a
promise; a test runs exactly the command it names and shows it makes progress):

* the run landed the slice, but its last sync of the ledger could not reach the spine's
  remote: it warns, names `leap sync R`, and that sync, once the remote answers, carries
  what the run recorded after its merge (the live proof) there;
* the merge waited for another clone's integrator lease past the run's cap (--max-minutes,
  or the wait's own patience): it stops naming the command to run once the lease is given
  back, and that command, after the holder gives it back, lands the slice.

Real clones, the real server hook behind `git daemon`; the remote goes away by its folder
being moved, as in tests/loop/test_run_lease.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from leapgit.ledger import layout, leases
from leapgit.ledger.workspace import open_workspace
from leapgit.scoring.merge import _taken_for
from tests.scoring.test_merge_leases import clone_b
from tests.scoring.test_merge_refusals import PLAN, draft, left_passed, red_test
from tests.scoring.world import Project, build_project
from tests.support import GitDaemon, git, hinted_leap, leap
from tests.templates import Served

__all__ = ["left_passed"]  # the fixture, shared

LIVE = "python -m unittest -q tests.test_u"  # the slice's live proof: u's test, merged


def _live_passed(base: Path, daemon: GitDaemon, url: str) -> Project:
    """``two_passed``'s project, its slice ``left`` declaring a live proof: ready to run."""
    text = draft("left", [("u", "calc/u.py"), ("v", "calc/v.py")]).replace(
        "spine: integrator\n", f"spine: integrator\nlive_proof: {LIVE}\n")
    p = build_project(base, daemon, url, text, None, {"u": PLAN["u"], "v": PLAN["v"]})
    for b in "uv":
        assert p.red(b, "left", red_test(b)).code == 0
    assert p.leap("throw", "left", "--run").code == 0
    for b in "uv":
        assert p.leap("score", "left", b).code == 0
    return p


@pytest.fixture
def live_passed(served: Served, scripted_url: str) -> Iterator[Project]:
    with served.world("two-passed-live", lambda folder: _live_passed(
            folder, served.daemon, scripted_url)) as p:
        yield p


def _remote_ledger(p: Project, under: str) -> list[str]:
    return git("ls-tree", "-r", "--name-only", "leap/ledger", under, cwd=p.bare).splitlines()


def test_a_run_whose_last_sync_cannot_reach_the_remote_names_the_sync_that_carries_it(
        live_passed: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """The merge landed and synced its record; the remote went away before the run's last
    sync (here: as the live proof ends), so the live proof's record stayed here. The run
    still ends 0 (the slice landed), warns, and names `leap sync origin`: run as printed
    once the remote answers, the remote's ledger holds the live proof, and this clone's
    ledger is the remote's."""
    from leapgit.loop import drive

    p = live_passed
    away = p.bare.with_name(p.bare.name + ".away")
    real = drive.prove_live

    def proved_then_gone(*args: object, **kwargs: object) -> object:
        proved = real(*args, **kwargs)  # type: ignore[arg-type]
        p.bare.rename(away)  # the remote is out of reach for the run's last sync
        return proved

    monkeypatch.setattr(drive, "prove_live", proved_then_gone)
    try:
        ran = leap("run", "left", "--heartbeat", "0", cwd=p.work, timeout=300)
    finally:
        if away.exists():
            away.rename(p.bare)
    monkeypatch.undo()
    said = ran.out + ran.err
    assert ran.code == 0 and "landed" in ran.out, said[-3000:]
    [warned] = [line for line in said.splitlines() if "did not reach origin" in line]
    assert "warning: the ledger did not reach origin: " in warned, warned
    assert warned.endswith("; `leap sync origin` carries it"), warned
    live = layout.live_path("left", 1)
    assert layout.merge_path("left") in _remote_ledger(p, "slices/left/")  # the merge's own
    assert live not in _remote_ledger(p, "slices/left/"), said[-3000:]  # the run's, here only
    assert git("cat-file", "-e", f"leap/ledger:{live}", cwd=p.work) == ""
    [hinted] = hinted_leap(warned)
    synced = leap(*hinted, cwd=p.work)  # the hint, exactly
    assert synced.code == 0, synced
    assert live in _remote_ledger(p, "slices/left/")
    assert git("rev-parse", "leap/ledger", cwd=p.bare) == \
        git("rev-parse", "leap/ledger", cwd=p.work)


def _lease_in_b(p: Project) -> tuple[Path, leases.Lease]:
    """Clone B, whose merge of another slice holds the spine's lease on the remote now."""
    b = clone_b(p)
    taken = leases.take_lease_on("origin", b, "main", "integrator",
                                 _taken_for(open_workspace(b), "other"), "`leap merge other`")
    return b, taken


def _give_back_in_b(b: Path) -> None:
    """B's holder gives its lease back, as a lease's hint says: released, then shared."""
    assert leap("lease", "release", "--holder", "integrator", cwd=b).code == 0
    assert leap("sync", "origin", cwd=b).code == 0


def _stop_line(said: str, start: str) -> str:
    found = [line for line in said.splitlines() if start in line]
    assert found, said[-3000:]
    return found[-1]


def test_a_run_whose_merge_waited_past_max_minutes_for_a_lease_names_the_run_that_lands(
        left_passed: Project) -> None:
    p = left_passed
    before = p.remote_tip("refs/heads/main")
    b, taken = _lease_in_b(p)
    cut = leap("run", "left", "--heartbeat", "0", "--poll", "0.2", "--max-minutes", "0.05",
               cwd=p.work, timeout=120)
    said = cut.out + cut.err
    assert cut.code == 3, said[-3000:]
    assert f"waits for lease {taken.number}" in said, said[-3000:]
    assert "merge: --max-minutes 0.05 reached: a hold, nothing lost; the merge waited for " \
        f"lease {taken.number}" in said, said[-3000:]
    assert p.remote_tip("refs/heads/main") == before  # nothing landed
    hint = "`leap run left` again"
    assert hint in said, said[-3000:]
    [again] = hinted_leap(_stop_line(said, hint))
    _give_back_in_b(b)
    landed = leap(*again, cwd=p.work, timeout=300)  # the hint, exactly
    assert landed.code == 0 and "landed" in landed.out, landed.out[-3000:]
    assert p.remote_tip("refs/heads/main") != before
    assert layout.merge_path("left") in _remote_ledger(p, "slices/left/")


def test_a_run_whose_merge_waited_past_its_patience_for_a_lease_names_the_merge_that_lands(
        left_passed: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """The wait for one holder is capped (``drive.LEASE_PATIENCE``, 30 minutes; a second
    here): past it the run stops on the lease, naming `leap merge left` again once it is
    given back, and how its holder gives it back."""
    from leapgit.loop import drive

    p = left_passed
    before = p.remote_tip("refs/heads/main")
    b, taken = _lease_in_b(p)
    monkeypatch.setattr(drive, "LEASE_PATIENCE", 1.0)
    cut = leap("run", "left", "--heartbeat", "0", "--poll", "0.2", cwd=p.work, timeout=120)
    monkeypatch.undo()
    said = cut.out + cut.err
    assert cut.code == 3, said[-3000:]
    assert f"leased to 'integrator' (lease {taken.number}" in said, said[-3000:]
    assert p.remote_tip("refs/heads/main") == before  # nothing landed
    hint = "`leap merge left` again once it is given back"
    stop = _stop_line(said, hint)
    assert "`leap sync origin`, then `leap lease release --holder integrator` and `leap sync " \
        "origin`, in its clone" in stop
    again, first, release, share = hinted_leap(stop)
    assert (first, release, share) == (["sync", "origin"], ["lease", "release", "--holder",
                                                            "integrator"], ["sync", "origin"])
    held = leap(*again, cwd=p.work, timeout=300)  # not given back yet: still a hold
    assert held.code == 3 and p.remote_tip("refs/heads/main") == before, held
    for cmd in (first, release, share):  # the holder's part of the hint, exactly, in its clone
        assert leap(*cmd, cwd=b).code == 0
    landed = leap(*again, cwd=p.work, timeout=300)  # the hint, exactly
    assert landed.code == 0, landed
    assert p.remote_tip("refs/heads/main") != before
    assert layout.merge_path("left") in _remote_ledger(p, "slices/left/")


def test_a_run_s_merge_stop_names_the_run_which_lands_and_proves_the_slice(
        isolated: Path, served: Served, scripted_url: str) -> None:
    """A hint hunt: two integrators raced; this clone's checkout of the spine holds an
    untracked file where the other's slice adds one. `leap run left` stopped in its merge
    naming "`leap merge left` again": followed, the slice landed and its live proof never
    ran. In a run the stop names the run; moved away as it says, run exactly, it lands."""
    from tests.scoring.test_merge_refusals import DRAFT

    p = build_project(served.folder("run-merge-stop"), served.daemon, scripted_url, DRAFT,
                      None, PLAN)
    for slice_id, balls in (("left", "uv"), ("right", "wz")):
        for b in balls:
            assert p.red(b, slice_id, red_test(b)).code == 0
        assert p.leap("throw", slice_id, "--run").code == 0
        for b in balls:
            assert p.leap("score", slice_id, b).code == 0
    b = clone_b(p)
    assert leap("merge", "right", cwd=b, timeout=300).code == 0
    (p.work / "calc" / "w.py").write_text("# my scratch, untracked\n")  # right adds it
    held = leap("run", "left", "--heartbeat", "0", cwd=p.work, timeout=300)
    said = held.out + held.err
    assert held.code == 2 and "would overwrite: calc/w.py" in said, said[-3000:]
    stop = next(ln for ln in said.splitlines() if " stop " in ln and "would overwrite" in ln)
    assert hinted_leap(stop) == [["run", "left"]], stop
    (p.work / "calc" / "w.py").rename(p.base_dir / "w.py.mine")  # "move or delete them"
    landed = leap("run", "left", "--heartbeat", "0", cwd=p.work, timeout=300)  # exactly
    assert landed.code == 0 and "landed" in landed.out, landed.out[-3000:]
