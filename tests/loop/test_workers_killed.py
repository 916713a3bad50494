"""Issue 16: a worker killed, cut off from the remote, stalled past its lease or stopped
with Ctrl-C loses nothing and leaves no claim behind that blocks the ball."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from leapgit.records import yamlio
from tests.loop import workers_world as ww
from tests.loop.workers_world import wait
from tests.support import GitDaemon, git, leap
from tests.tribunal.jurors import JurorServer

# -- a worker killed, a worker cut off -----------------------------------------------------

def test_a_killed_worker_s_ball_is_taken_over_once_its_claim_runs_out(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    w = ww.published(daemon, jurors, "killed", claim_seconds=5)
    second = w.clone("second")
    proc = ww.hung_worker(w, "first")
    built = w.base_dir / "built.log"
    proc.send_signal(signal.SIGKILL)  # the worker, in the middle of its round
    proc.wait()
    pid = int(built.read_text().split()[-1])
    try:
        os.kill(pid, signal.SIGKILL)  # the orphaned builder, as a dead machine's would be
    except ProcessLookupError:
        pass
    (w.base_dir / "hang-b1").unlink()
    took = time.monotonic()
    res = leap("worker", "--remote", "origin", "--name", "second", "--once", "--poll", "0.2",
               cwd=second, env=w.env, timeout=120)
    assert res.code == 0, res
    assert time.monotonic() - took >= 5 - 1.5  # it waited for the lease to run out
    got = ww.receipts(w)["b1"]
    assert [r["round"] for r in got] == [1] and got[0]["worker"] == "second", got
    takes = sorted(p for p in ww.claim_files(w) if p.endswith("take.yaml"))
    assert len(takes) == 2, takes
    assert yamlio.loads(w.ledger_text(takes[1]).encode(), takes[1])["holder"] == "second"
    ww.fsck(w.bare)


def test_a_worker_that_loses_the_remote_pushes_nothing_half_and_its_round_goes_up_later(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """Its round cannot go up: nothing of it lands half; the worker says it waits for the
    remote, and the same atomic push goes up once it answers (a walk-away hunt: it stopped
    at its first failed look; a blind review: the round then stayed in the clone for good
    and the worker idled, the ball waiting on it)."""
    w = ww.published(daemon, jurors, "cutoff")
    proc = ww.hung_worker(w, "cut")
    clone = w.base_dir / "cut"
    log_path = w.base_dir / "cut.log"
    branch_before = git("rev-parse", "refs/heads/leap/ball/pkgs/b1", cwd=w.bare)
    url = git("remote", "get-url", "origin", cwd=clone)
    git("remote", "set-url", "origin", "git://127.0.0.1:9/gone.git", cwd=clone)
    (w.base_dir / "hang-b1").unlink()
    deadline = time.monotonic() + 60
    while "round 1 waits for origin to answer (cannot reach origin" not in \
            log_path.read_text():
        assert proc.poll() is None and time.monotonic() < deadline, log_path.read_text()
        time.sleep(0.1)
    # nothing half: neither the receipt nor the round's commit is on the remote
    assert "receipts" not in " ".join(w.ledger_files(f"slices/{ww.S}/balls/b1/"))
    assert git("rev-parse", "refs/heads/leap/ball/pkgs/b1", cwd=w.bare) == branch_before
    git("remote", "set-url", "origin", url, cwd=clone)  # it answers again
    while not ww.receipts(w).get("b1"):
        assert time.monotonic() < deadline, log_path.read_text()[-3000:]
        time.sleep(0.2)
    assert git("rev-parse", "refs/heads/leap/ball/pkgs/b1", cwd=w.bare) != branch_before
    proc.send_signal(signal.SIGINT)
    assert wait(proc, log_path, 60) == 130, log_path.read_text()
    assert "Traceback" not in log_path.read_text()


def _crashed_mid_round(w: ww.World) -> tuple[Path, Path]:
    """Worker ``solo`` (its own clone) whose machine dies while its builder is mid-round:
    b1's file written, the round not done; (the clone, the file it left)."""
    (w.base_dir / "hang-after-b1").write_text("")
    clone = w.clone("solo")
    proc = w.popen("worker", "--remote", "origin", "--name", "solo", "--poll", "0.2",
                   cwd=clone)
    written = w.base_dir / "solo.leap-worktrees" / ww.S / "b1" / "pkg" / "b1.py"
    deadline = time.monotonic() + 60
    while not written.exists():
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)  # the machine dies: the worker and its builder
    proc.wait()
    os.kill(int((w.base_dir / "built.log").read_text().split()[-1]), signal.SIGKILL)
    (w.base_dir / "hang-after-b1").unlink()
    return clone, written


def test_a_worker_crashed_mid_round_closes_that_round_when_it_comes_back(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """A chaos hunt: the machine died while a worker's builder was mid-round (the ball's
    file written, not done). The restarted worker took a new claim and refused the ball
    ("holds work no round recorded"), for good: with one worker the slice never landed. It
    now closes that round first, as a local run does (at 0, with what the builder left)."""
    w = ww.published(daemon, jurors, "crashed", claim_seconds=3)
    clone, _ = _crashed_mid_round(w)
    res = leap("worker", "--remote", "origin", "--name", "solo", "--once", "--poll", "0.2",
               cwd=clone, env=w.env, timeout=120)  # the same worker, restarted
    assert res.code == 0, res
    got = ww.receipts(w)["b1"]
    assert [(r["round"], r["outcome"]) for r in got] == [(1, 0), (2, 1)], got
    assert "ended before it recorded the round" in str(got[0]["evidence"]), got[0]
    ww.fsck(w.bare)


def test_a_crashed_workers_round_that_another_worker_recorded_is_not_closed_again(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """A blind review: the restarted worker skipped its check of what the crash left even
    when another worker had recorded that round since (a 0 with no commit: the remote's tip
    unchanged); the dead builder's edits were then folded into the next round."""
    w = ww.published(daemon, jurors, "crashed-taken", claim_seconds=3)
    solo, written = _crashed_mid_round(w)
    other = w.clone("other")
    deadline = time.monotonic() + 60
    (w.base_dir / "hang-b1").write_text("")  # other's builder waits before it writes
    built = w.base_dir / "built.log"
    took = w.popen("worker", "--remote", "origin", "--name", "other", "--poll", "0.2",
                   cwd=other)
    while " other " not in built.read_text():  # claimed once solo's lease ran out
        assert took.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    took.send_signal(signal.SIGINT)  # its round is recorded at 0, with no change
    assert wait(took, w.base_dir / "other.log", 60) == 130
    (w.base_dir / "hang-b1").unlink()
    got = ww.receipts(w)["b1"]
    assert [(r["round"], r["outcome"], r["worker"]) for r in got] == [(1, 0, "other")], got
    again = leap("worker", "--remote", "origin", "--name", "solo", "--once", "--poll", "0.2",
                 cwd=solo, env=w.env, timeout=120)
    assert "holds work no round recorded" in again.out, again  # refused here, as before
    got = ww.receipts(w)["b1"]
    assert [r["worker"] for r in got if r["worker"] == "solo"] == [], got  # nothing folded
    assert written.exists()  # and nothing of it discarded


def test_a_stalled_worker_whose_lease_lapsed_renews_it_and_its_round_counts(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """A worker stopped (SIGSTOP: a machine asleep) past its lease, and no one took the
    ball over: it renews the lapsed claim before its round goes up (L9 allows it while no
    later claim exists), and the round lands."""
    w = ww.published(daemon, jurors, "stalled", claim_seconds=3)
    proc = ww.hung_worker(w, "sleepy", "--once")
    proc.send_signal(signal.SIGSTOP)
    time.sleep(4)  # past the 3 s lease: the claim lapsed
    (w.base_dir / "hang-b1").unlink()
    proc.send_signal(signal.SIGCONT)
    assert wait(proc, w.base_dir / "sleepy.log", 60) == 0, \
        (w.base_dir / "sleepy.log").read_text()
    got = ww.receipts(w)["b1"]
    assert [(r["round"], r["worker"]) for r in got] == [(1, "sleepy")], got
    names = ww.claim_files(w)
    assert any("/claims/1/renew-" in p for p in names), names
    assert not any("/claims/2/" in p for p in names), names


def test_the_claim_renewer_keeps_renewing_through_an_outage(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """A blind review: the renewer stopped for good at its first failed renewal, so a long
    round after a short outage ran on with a lease no one renewed (another worker could take
    the ball over while this one still built it)."""
    w = ww.published(daemon, jurors, "renewer", claim_seconds=4)
    proc = ww.hung_worker(w, "keen")
    clone, log_path = w.base_dir / "keen", w.base_dir / "keen.log"
    url = git("remote", "get-url", "origin", cwd=clone)
    git("remote", "set-url", "origin", "git://127.0.0.1:9/gone.git", cwd=clone)
    deadline = time.monotonic() + 60
    while "could not renew claim 1" not in log_path.read_text():
        assert proc.poll() is None and time.monotonic() < deadline, log_path.read_text()
        time.sleep(0.1)
    before = {p for p in ww.claim_files(w) if "/renew-" in p}
    git("remote", "set-url", "origin", url, cwd=clone)  # it answers again
    while not {p for p in ww.claim_files(w) if "/renew-" in p} - before:  # builder still at it
        assert proc.poll() is None and time.monotonic() < deadline, log_path.read_text()
        time.sleep(0.2)
    assert (w.base_dir / "hang-b1").exists()  # renewed by the renewer, not before the push
    (w.base_dir / "hang-b1").unlink()
    while not ww.receipts(w).get("b1"):
        assert time.monotonic() < deadline, log_path.read_text()[-3000:]
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    assert wait(proc, log_path, 60) == 130, log_path.read_text()
    assert [r["worker"] for r in ww.receipts(w)["b1"]] == ["keen"]
    assert not any("/claims/2/" in p for p in ww.claim_files(w))


def test_ctrl_c_records_the_running_round_as_0_and_gives_the_claim_back(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    w = ww.published(daemon, jurors, "ctrlc")
    proc = ww.hung_worker(w, "polite")
    proc.send_signal(signal.SIGINT)
    assert wait(proc, w.base_dir / "polite.log", 60) == 130, \
        (w.base_dir / "polite.log").read_text()
    (w.base_dir / "hang-b1").unlink()
    got = ww.receipts(w)["b1"]
    assert [(r["round"], r["outcome"], r["worker"]) for r in got] == [(1, 0, "polite")], got
    assert any(p.endswith("/claims/1/release.yaml") for p in ww.claim_files(w))


@pytest.mark.parametrize("claim_seconds", [3, 60], ids=["claim-ran-out", "claim-live"])
def test_a_restarted_worker_leaves_a_ball_its_killed_builder_still_holds(
        daemon: GitDaemon, jurors: JurorServer, claim_seconds: int) -> None:
    """A blind review: a worker SIGKILLed while its builder ran (the builder lives on, in a
    session of its own), restarted in the same clone once its claim ran out, claimed the
    ball, stopped on the builder at once, gave the claim back and claimed it again, every
    turn (89 take and release pairs in 150 s on the shared ledger). It leaves the ball while
    that builder runs, says so once, and builds it after. Restarted while its claim was
    still live, it said nothing till the claim ran out (a walk-away hunt): it says so now,
    and once the builder ended it waited out its own claim's lease and built the ball again
    under a new claim: it takes its own claim up again at once, and its builder's word is
    the round."""
    w = ww.published(daemon, jurors, f"left-builder-{claim_seconds}",
                     claim_seconds=claim_seconds)
    proc = ww.hung_worker(w, "restarted")
    proc.send_signal(signal.SIGKILL)  # the worker only: its builder goes on
    proc.wait()
    if claim_seconds == 3:
        time.sleep(3.5)  # its claim runs out
    clone = w.base_dir / "restarted"
    log = w.base_dir / "again.log"
    again = w.popen("worker", "--remote", "origin", "--name", "restarted", "--poll", "0.2",
                    "--once", cwd=clone, log=log)
    try:  # said at once: with its claim live, well before the claim runs out
        deadline = time.monotonic() + (30 if claim_seconds == 3 else 12)
        while "not claimed here till it ends" not in log.read_text():
            assert time.monotonic() < deadline and again.poll() is None, log.read_text()
            time.sleep(0.1)
        time.sleep(2)  # ten turns of its look
        takes = [p for p in ww.claim_files(w) if p.endswith("take.yaml")]
        assert len(takes) == 1, (takes, log.read_text()[-2000:])  # the killed worker's only
        assert log.read_text().count("not claimed here till it ends") == 1
        (w.base_dir / "hang-b1").unlink()  # the left builder ends
        assert wait(again, log, 120) == 0, log.read_text()[-3000:]
    finally:
        if again.poll() is None:
            again.kill()
    got = ww.receipts(w)["b1"]
    assert got and got[-1]["worker"] == "restarted", got  # built here once the builder ended
    said = log.read_text()
    if claim_seconds == 60:  # its own claim 1, taken up again: no second claim waited for
        assert "claim 1 of restarted, which a killed run of this worker left live, taken " \
            "up again" in said, said[-3000:]
        files = ww.claim_files(w)
        assert not any("/claims/2/" in p for p in files), files
        assert any(p.endswith("/claims/1/release.yaml") for p in files), files


# a server hook run before leapgit's (``pre-receive.leap-legacy``): while ``hold`` exists,
# a push that moves a ball branch waits; let go, it is refused (and ``left`` appears) if
# ``refuse`` exists
GATE = """#!/bin/sh
ball=""
while read old new ref; do
  case "$ref" in refs/heads/leap/ball/*) ball="$ref" ;; esac
done
[ -n "$ball" ] || exit 0
touch "{entered}"
while [ -e "{hold}" ]; do sleep 0.05; done
if [ -e "{refuse}" ]; then touch "{left}"; echo "gate: refused" >&2; exit 1; fi
exit 0
"""


def _descendants(pid: int) -> list[int]:
    """Every process under ``pid`` (from /proc), deepest first."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue

    def under(parent: int) -> list[int]:
        return [p for child in children.get(parent, []) for p in (*under(child), child)]

    return under(pid)


@pytest.mark.parametrize("refused", [False, True], ids=["taken-along", "refused-along"])
def test_a_receipt_another_push_carries_up_takes_its_round_s_commit_along(
        daemon: GitDaemon, jurors: JurorServer, refused: bool) -> None:
    """A worker killed while its round's push waits on the remote leaves the round's receipt
    in its clone's ledger. Any later push of that ledger (`leap sync`, a second worker)
    carried the receipt up alone: the remote named a round its ball branch never got, and
    `leap run --remote` waited for that commit until --max-minutes. The push takes the
    round's commit along, in the same atomic push (L7, L9). ``refused``: the remote refuses
    the round taken along; the push goes again without it, as before."""
    w = ww.published(daemon, jurors, f"carried-{refused}")
    clone = w.clone("builder")
    hold, refuse, entered, left = (w.base_dir / n for n in ("hold", "refuse", "entered",
                                                             "left"))
    gate = w.bare / "hooks" / "pre-receive.leap-legacy"
    gate.write_text(GATE.format(hold=hold, refuse=refuse, entered=entered, left=left))
    gate.chmod(0o755)
    hold.write_text("")
    log = w.base_dir / "worker.log"
    proc = w.popen("worker", "--remote", "origin", "--name", "builder", "--once", cwd=clone,
                   log=log)
    deadline = time.monotonic() + 120
    while not entered.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert entered.exists(), log.read_text()[-3000:]
    for pid in [*_descendants(proc.pid), proc.pid]:  # the worker and its `git push`
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait()
    refuse.write_text("")
    hold.unlink()  # the killed push, let go, is refused: it never lands
    deadline = time.monotonic() + 30
    while not left.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left.exists(), "the held push never came back to the gate"
    if not refused:
        refuse.unlink()
    receipt = "slices/pkgs/balls/b1/episodes/1/receipts/1.yaml"
    here = yamlio.loads(git("show", f"leap/ledger:{receipt}", cwd=clone).encode(), receipt)
    assert receipt not in w.ledger_files(), "the killed push landed"
    synced = leap("sync", "origin", cwd=clone, env=w.env)
    assert synced.code == 0, synced
    assert receipt in w.ledger_files()
    moved = git("rev-parse", "refs/heads/leap/ball/pkgs/b1", cwd=w.bare) == here["commit"]
    assert moved is not refused
    # said either way (a review: the push along, and its refusal, left no trace)
    if refused:
        assert "rounds not taken along: origin refused them (" in synced.out and \
            "gate: refused" in synced.out and \
            "their receipts went up alone" in synced.out, synced.out
    else:
        assert f"taken along: leap/ball/pkgs/b1 at {here['commit'][:12]}, the round its " \
            "receipt names (L7)" in synced.out, synced.out
        assert git("rev-parse", "refs/leap/remotes/origin/heads/leap/ball/pkgs/b1",
                   cwd=clone) == here["commit"]


def test_a_refused_round_still_on_its_branch_is_not_taken_along(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """A blind review of the push that takes rounds along: a builder that commits a scope
    breach itself gets its -1 recorded by post-commit while the commit stays on the branch
    until the builder exits (the worker folds the round then). A `leap sync` of the clone
    in that gap took the refused commit along, the server refused it (L4), and the atomic
    push refused the whole ledger with it. A -1's commit never goes along; the receipt goes
    up, the remote's branch stays where it was."""
    w = ww.published(daemon, jurors, "breach-gap")
    before = git("rev-parse", "refs/heads/leap/ball/pkgs/b1", cwd=w.bare)
    proc = ww.hung_worker(w, "builder")
    try:
        clone = w.base_dir / "builder"
        [wt] = [Path(line.split(" ", 1)[1]) for line in
                git("worktree", "list", "--porcelain", cwd=clone).splitlines()
                if line.startswith("worktree ") and line.endswith("b1")]
        (wt / "outside_scope.txt").write_text("breach\n")
        git("add", "outside_scope.txt", cwd=wt)
        git("commit", "-q", "-m", "round 1\n\nLeap-Round: 1\nLeap-Outcome: 1", cwd=wt,
            env={**w.env, "LEAP_FOLDS_COMMITS": "1", "LEAP_WORKER": "builder"})
        receipt = "slices/pkgs/balls/b1/episodes/1/receipts/1.yaml"
        here = yamlio.loads(git("show", f"leap/ledger:{receipt}", cwd=clone).encode(), receipt)
        assert here["outcome"] == -1 and here["commit"] == git("rev-parse", "HEAD", cwd=wt)
        synced = leap("sync", "origin", cwd=clone, env=w.env)
        assert synced.code == 0, synced
        assert receipt in w.ledger_files()
        assert git("rev-parse", "refs/heads/leap/ball/pkgs/b1", cwd=w.bare) == before
    finally:
        proc.kill()
        proc.wait()
        (w.base_dir / "hang-b1").unlink()  # its builder, left waiting, ends


def _builders(w: ww.World) -> int:
    built = w.base_dir / "built.log"
    return len(built.read_text().splitlines()) if built.exists() else 0


def test_a_worker_never_takes_up_another_machine_s_live_claim_of_its_name(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """A blind review: two machines' workers share one --name (as the README's
    authenticating remotes have it: a worker's name is its user there). Machine 2 built the
    ball once and stopped (Ctrl-C: its worktree stays); machine 1 claimed it again and
    builds. Machine 2's worker, started again, took machine 1's live claim up as its own:
    two builders on one ball. Only a claim this clone's own killed worker took is taken up
    (this clone's mark of it, its process gone)."""
    w = ww.published(daemon, jurors, "same-name")
    m2, m1 = w.clone("m2"), w.clone("m1")
    (w.base_dir / "hang-b1").write_text("")
    first = w.popen("worker", "--remote", "origin", "--name", "alice", "--poll", "0.2",
                    cwd=m2, log=w.base_dir / "m2-first.log")
    deadline = time.monotonic() + 60
    while _builders(w) < 1:
        assert time.monotonic() < deadline and first.poll() is None
        time.sleep(0.05)
    first.send_signal(signal.SIGINT)
    assert wait(first, w.base_dir / "m2-first.log", 60) == 130
    m1proc = w.popen("worker", "--remote", "origin", "--name", "alice", "--poll", "0.2",
                     cwd=m1, log=w.base_dir / "m1.log")
    again = None
    try:
        while _builders(w) < 2:  # machine 1 builds under claim 2
            assert time.monotonic() < deadline and m1proc.poll() is None, \
                (w.base_dir / "m1.log").read_text()
            time.sleep(0.05)
        assert any("/claims/2/take.yaml" in p for p in ww.claim_files(w))
        log = w.base_dir / "m2-again.log"
        again = w.popen("worker", "--remote", "origin", "--name", "alice", "--poll", "0.2",
                        cwd=m2, log=log)
        end = time.monotonic() + 8  # forty looks
        while time.monotonic() < end and again.poll() is None:
            time.sleep(0.2)
        said = log.read_text()
        assert "taken up again" not in said, said[-2000:]
        assert _builders(w) == 2, said[-2000:]
    finally:
        for proc in (m1proc, again):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
        (w.base_dir / "hang-b1").unlink(missing_ok=True)


def test_a_claim_mark_is_a_gone_process_s_only_when_its_process_is_told_apart(
        tmp_path: Path) -> None:
    """A boundary review: where /proc cannot tell when a process started (its start written
    as 0), a mark naming a process still alive was read as a gone one's, and a live worker
    of this clone could have its claim taken up by another of the same name. Alive, and no
    start to compare, is taken as the same process."""
    import subprocess

    from leapgit import procs
    from leapgit.ledger.workspace import open_workspace
    from leapgit.loop.worker import Options, Worker
    from tests.support import leap, make_repo

    repo = make_repo(tmp_path / "repo", {"f.txt": "x\n"})
    assert leap("init", cwd=repo).code == 0
    worker = Worker(open_workspace(repo), Options("origin", "w"), lambda _line: None)
    mark = worker._mark_path("s", "b")
    mark.parent.mkdir(parents=True)
    me, began = os.getpid(), procs.started_at(os.getpid())
    gone = subprocess.Popen(["true"])
    gone.wait()

    def left(pid: int, start: float | None, episode: int = 1) -> bool:
        mark.write_text(f"{episode} 2 {pid} {start or 0}\n")
        return worker._left_by_the_dead("s", "b", 1, 2)

    assert left(gone.pid, began)  # gone
    assert not left(me, began)  # alive, the same process
    assert not left(me, None)  # alive, no start to tell it apart
    assert left(me, (began or 0) + 100) is (began is not None)  # its id taken by another
    assert not left(gone.pid, began, episode=2)  # another claim's mark
