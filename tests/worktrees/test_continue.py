"""`leap throw --ball B --run` continues an in-flight episode at its next round (issue 14
item 4; L3, L6): after a round closed by hand, after Ctrl-C, after a crash of the run or of
its builder. No round is repeated or skipped, and the round limit holds."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from leapgit.ledger import query
from leapgit.ledger.store import Ledger
from leapgit.records.types import Receipt
from tests.reds import red_commit
from tests.support import IDENTITY, git, leap
from tests.worktrees.conftest import set_config, worktree_of

Builder = Callable[..., str]

# Each round writes its number into src/a.py and says what it saw; $HOLD_ON lists rounds
# that report 0; a round named in $SLEEP_ON writes its process group to $PIDS and sleeps.
ROUNDS = """
import json
r = os.environ["LEAP_ROUND"]
hand = pathlib.Path(os.environ["LEAP_HANDOFF"]).read_text()
print("round", r, "previous:", [ln for ln in hand.splitlines() if "round:" in ln])
pathlib.Path("src/a.py").write_text(f"A = {r}\\n")
if r in os.environ.get("SLEEP_ON", "").split(","):
    pathlib.Path(os.environ["PIDS"], r).write_text(str(os.getpgrp()))
    time.sleep(60)
outcome = 0 if r in os.environ.get("HOLD_ON", "").split(",") else 1
pathlib.Path(os.environ["LEAP_REPORT"]).write_text(f"outcome: {outcome}\\nevidence: round {r}\\n")
"""


def _receipts(repo: Path) -> list[Receipt]:
    with Ledger(repo / ".git") as ledger:
        return query.receipts(ledger.require(), "dia", "A", 1)


def _wait_for(path: Path, proc: subprocess.Popen[str] | None = None) -> None:
    """Until ``path`` holds something (the builder writes it while we look)."""
    deadline = time.monotonic() + 30
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < deadline, proc.communicate(timeout=5) if proc else path
        time.sleep(0.02)


def _gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def _run(repo: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "leapgit", "throw", "dia", "--ball", "A",
                             "--run"], cwd=repo, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **IDENTITY, **env})


def _branch_is_its_receipts(repo: Path) -> None:
    """Every commit on the ball branch is a recorded round, once (the server's L6 count)."""
    red = red_commit(repo, "dia", "A")  # T7.1: the branch starts at the red commit
    on_branch = git("rev-list", "--reverse", f"{red}..leap/ball/dia/A", cwd=repo).split()
    assert on_branch == [r.commit for r in _receipts(repo) if r.commit]


def test_a_round_held_by_hand_then_run_continues_at_round_two_up_to_the_limit(
        diamond: Path, builder: Builder) -> None:
    set_config(diamond, builder=builder(ROUNDS), round_limit=2)
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    (wt / "src/a.py").write_text("A = 'by hand'\n")
    r = leap("round", "dia", "A", "--outcome", "0", "--evidence", "half way", cwd=wt)
    assert r.code == 3, r
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond, env={"HOLD_ON": "2"})
    assert r.code == 3, r  # round 2 held: the limit of 2 ends the episode with a checkpoint
    assert "A  wave 0  episode 1" in r.out and "continues at round 2" in r.out, r
    got = _receipts(diamond)
    assert [(x.round, x.outcome, x.recorded_by) for x in got] == [
        (1, 0, "leap round"), (2, 0, "leap throw --run")]
    assert "round 2 previous: ['round: 2', '  round: 1']" in Path(got[1].log or "").read_text()
    assert "A: 1 round(s), last hold: round 2" in r.out and "checkpoint written" in r.out
    _branch_is_its_receipts(diamond)
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond)  # L6: no third round
    assert r.code == 3 and "ended episode 1 at 0 with a checkpoint" in r.err, r
    assert len(_receipts(diamond)) == 2


def test_after_ctrl_c_run_continues_with_the_next_round(diamond: Path, builder: Builder,
                                                         tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    set_config(diamond, builder=builder(ROUNDS))
    proc = _run(diamond, {"SLEEP_ON": "1", "PIDS": str(pids)})
    _wait_for(pids / "1", proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, (out, err)
    assert [(x.round, x.outcome) for x in _receipts(diamond)] == [(1, 0)]
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond, env={"PIDS": str(pids)})
    assert r.code == 0, r
    assert [(x.round, x.outcome) for x in _receipts(diamond)] == [(1, 0), (2, 1)]
    assert (worktree_of(diamond, "A") / "src/a.py").read_text() == "A = 2\n"
    _branch_is_its_receipts(diamond)


def test_a_killed_run_continues_without_repeating_a_recorded_round(
        diamond: Path, builder: Builder, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    set_config(diamond, builder=builder(ROUNDS))
    proc = _run(diamond, {"HOLD_ON": "1", "SLEEP_ON": "2", "PIDS": str(pids)})
    _wait_for(pids / "2", proc)  # round 1 is recorded; round 2's builder runs
    proc.kill()  # SIGKILL of `leap throw --run`: nothing of round 2 is recorded
    proc.communicate(timeout=30)
    assert [(x.round, x.outcome) for x in _receipts(diamond)] == [(1, 0)]
    orphan = int((pids / "2").read_text())
    assert not _gone(orphan)  # the builder has a session of its own: it outlives the run
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond)
    assert r.code == 3, r  # never two builders in one worktree (L3)
    assert f"a builder is still running in {worktree_of(diamond, 'A')}" in r.err, r
    assert f"`kill -- -{orphan}`" in r.err
    # the lock cannot tell which driver left it (a blind review: a worker's was called one of
    # `leap throw --run`'s)
    assert "left by a run of leapgit that is gone: a throw's, a slice's or a worker's" \
        in r.err
    assert len(_receipts(diamond)) == 1
    os.killpg(orphan, signal.SIGKILL)  # what the hint says to do
    deadline = time.monotonic() + 10
    while not _gone(orphan) and time.monotonic() < deadline:
        time.sleep(0.02)
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond, env={"PIDS": str(pids)})
    assert r.code == 0, r
    got = _receipts(diamond)  # L6: the killed round is recorded, with what it left; no
    # round is repeated or skipped
    assert [(x.round, x.outcome, x.claim) for x in got] == [(1, 0, True), (2, 0, False),
                                                            (3, 1, True)]
    assert "drove round 2 ended before it recorded the round (it was killed)" in \
        got[1].evidence
    assert git("show", f"{got[1].commit}:src/a.py", cwd=diamond) == "A = 2"  # its work kept
    assert "round 3 previous: ['round: 3', '  round: 2']" in Path(got[2].log or "").read_text()
    assert "A: 2 round(s), last pass (claim): round 3" in r.out
    _branch_is_its_receipts(diamond)


def test_a_killed_builder_group_ends_its_round_at_zero_and_the_run_goes_on(
        diamond: Path, builder: Builder, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    set_config(diamond, builder=builder(ROUNDS))
    proc = _run(diamond, {"SLEEP_ON": "1", "PIDS": str(pids)})
    _wait_for(pids / "1", proc)
    os.killpg(int((pids / "1").read_text()), signal.SIGKILL)  # the builder and its children
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, (out, err)
    got = _receipts(diamond)
    assert [(x.round, x.outcome) for x in got] == [(1, 0), (2, 1)], got
    assert "exited -9" in got[0].evidence
    _branch_is_its_receipts(diamond)


def test_a_claim_waiting_for_its_score_is_not_continued(diamond: Path,
                                                        builder: Builder) -> None:
    set_config(diamond, builder=builder(ROUNDS))
    assert leap("throw", "dia", "--ball", "A", "--run", cwd=diamond).code == 0
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond)
    assert r.code == 1 and "`leap score dia A` grades round 1's claim" in r.err, r
    assert len(_receipts(diamond)) == 1


def _vanish(repo: Path, wt: Path, how: str) -> None:
    """The ball's worktree goes: through git, or deleted by hand (git still lists it)."""
    if how == "removed":
        git("worktree", "remove", "--force", str(wt), cwd=repo)
    else:
        shutil.rmtree(wt)


def _way_back(err: str) -> str:
    """The command a "worktree is gone" refusal names to bring the worktree back."""
    found = re.search(r"recreate it on its branch \(`([^`]+)`\)", err)
    assert found is not None, err
    return found.group(1)


@pytest.mark.parametrize("how", ["removed", "deleted"])
def test_a_continued_ball_whose_worktree_is_gone_is_refused_before_any_round(
        diamond: Path, builder: Builder, how: str) -> None:
    set_config(diamond, builder=builder(ROUNDS))
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    _vanish(diamond, wt, how)
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond)
    assert r.code == 3 and f"the worktree of dia/A is gone: {wt}" in r.err, r
    assert _receipts(diamond) == []
    back = _way_back(r.err)
    assert back.endswith(f"git worktree add {wt} leap/ball/dia/A"), back
    subprocess.run(back, shell=True, cwd=diamond, check=True)  # the hint's command, exactly
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond)
    assert r.code == 0, r
    assert [x.round for x in _receipts(diamond)] == [1]


@pytest.mark.parametrize("how", ["removed", "deleted"])
def test_a_gone_worktree_is_brought_back_by_what_ball_check_and_round_name(
        diamond: Path, how: str) -> None:
    """Every hint leads on (blind review): `leap ball check` and `leap round` named
    `leap throw --resume`, which refuses a ball in flight and names `leap round` again.
    Both now name the git command that puts the worktree back on the ball's branch, which
    holds its work; a test runs it, and the check and the round go through."""
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    _vanish(diamond, wt, how)
    checked = leap("ball", "check", "dia", "A", cwd=diamond)
    assert checked.code == 3 and f"the worktree of dia/A is gone: {wt} [L5]" in checked.err, \
        checked
    closed = leap("round", "dia", "A", "--outcome", "0", "--evidence", "by hand", cwd=diamond)
    assert closed.code == 3 and f"the worktree of dia/A is gone: {wt} [L5]" in closed.err, \
        closed
    back = _way_back(checked.err)
    assert _way_back(closed.err) == back and "leap throw" not in checked.err + closed.err
    assert _receipts(diamond) == []
    # another worktree, on a disk not mounted just now, stays registered through the hint
    # (blind review: `git worktree prune` forgot every missing one, its state with it)
    other = diamond.parent / "elsewhere"
    git("worktree", "add", "-q", "-b", "elsewhere", str(other), cwd=diamond)
    unmounted = other.rename(diamond.parent / "unmounted")
    subprocess.run(back, shell=True, cwd=diamond, check=True)  # the hint, exactly
    unmounted.rename(other)
    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=other) == "elsewhere"
    assert leap("ball", "check", "dia", "A", cwd=diamond).code == 0
    (wt / "src" / "a.py").write_text("A = 2\n")
    closed = leap("round", "dia", "A", "--outcome", "0", "--evidence", "by hand", cwd=diamond)
    assert closed.code == 3 and "round 1 of dia/A (episode 1): hold" in closed.out, closed
    assert [(x.round, x.outcome) for x in _receipts(diamond)] == [(1, 0)]


@pytest.mark.parametrize("command", [("ball", "check", "dia", "A"),
                                     ("round", "dia", "A", "--outcome", "0", "--evidence", "x"),
                                     ("throw", "dia", "--ball", "A", "--run")])
def test_a_ball_branch_deleted_by_hand_comes_back_at_its_last_recorded_round(
        diamond: Path, builder: Builder, command: tuple[str, ...]) -> None:
    """Stop 36 found: with the worktree and the ball's branch both deleted by hand, the hold
    named `git worktree add PATH BRANCH`, which git refuses (no such branch). The commands
    now make the branch again at the last round the ledger recorded, so the work recorded
    is back and the episode goes on from it."""
    set_config(diamond, builder=builder(ROUNDS))
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    (wt / "src/a.py").write_text("A = 'by hand'\n")
    assert leap("round", "dia", "A", "--outcome", "0", "--evidence", "half", cwd=wt).code == 3
    round_one = _receipts(diamond)[0].commit
    assert round_one is not None
    git("worktree", "remove", "--force", str(wt), cwd=diamond)
    git("branch", "-D", "leap/ball/dia/A", cwd=diamond)
    r = leap(*command, cwd=diamond)
    assert r.code == 3 and "its branch leap/ball/dia/A with it" in r.err, r
    found = re.search(r"recreate both at the ball's last recorded commit \(`([^`]+)`\)", r.err)
    assert found is not None, r.err
    subprocess.run(found.group(1), shell=True, cwd=diamond, check=True)  # the hint, exactly
    assert git("rev-parse", "HEAD", cwd=wt) == round_one
    assert (wt / "src/a.py").read_text() == "A = 'by hand'\n"
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond)
    assert r.code == 0, r
    assert [(x.round, x.outcome) for x in _receipts(diamond)] == [(1, 0), (2, 1)]
    _branch_is_its_receipts(diamond)


def test_a_resumed_balls_deleted_branch_comes_back_at_the_checkpointed_round(
        diamond: Path, builder: Builder) -> None:
    """Blind review: a resumed episode (`--resume` after a checkpoint) goes on with the
    earlier episode's branch; before its first round, the commands made the branch again
    at the red, and the checkpointed rounds were off it. They come back at the last one."""
    set_config(diamond, builder=builder(ROUNDS), round_limit=2)
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond, env={"HOLD_ON": "1,2"})
    assert r.code == 3 and "checkpoint written" in r.out, r
    last = _receipts(diamond)[-1].commit
    assert leap("throw", "dia", "--ball", "A", "--resume", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    git("worktree", "remove", "--force", str(wt), cwd=diamond)
    git("branch", "-D", "leap/ball/dia/A", cwd=diamond)
    r = leap("ball", "check", "dia", "A", cwd=diamond)
    found = re.search(r"recreate both at the ball's last recorded commit \(`([^`]+)`\)", r.err)
    assert r.code == 3 and found is not None, r
    subprocess.run(found.group(1), shell=True, cwd=diamond, check=True)  # the hint, exactly
    assert git("rev-parse", "HEAD", cwd=wt) == last
    assert (wt / "src/a.py").read_text() == "A = 2\n"  # round 2's work


def test_the_in_flight_refusal_names_the_run_that_continues(diamond: Path,
                                                            builder: Builder) -> None:
    set_config(diamond, builder=builder(ROUNDS))
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    r = leap("throw", "dia", "--ball", "A", cwd=diamond)
    assert r.code == 1 and "re-throwing a ball in flight is refused [L3]" in r.err, r
    assert "continue it with `leap throw dia --ball A --run`" in r.err
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond)  # the hint's command
    assert r.code == 0 and [x.round for x in _receipts(diamond)] == [1], r


def test_leap_round_of_a_ball_being_driven_holds_and_records_nothing(
        diamond: Path, builder: Builder, tmp_path: Path) -> None:
    """The dogfooding review: `leap round` while `leap throw --run` drove the ball recorded
    a round of its own (no commit) under the builder, which then closed round 2 with round
    1's log. It holds as a second driver does (L3), and nothing is recorded; once the run
    ends, its one round is the only receipt."""
    pids = tmp_path / "pids"
    pids.mkdir()
    set_config(diamond, builder=builder(ROUNDS))
    proc = _run(diamond, {"SLEEP_ON": "1", "PIDS": str(pids)})
    _wait_for(pids / "1", proc)
    r = leap("round", "dia", "A", "--outcome", "1", "--evidence", "mine", cwd=diamond)
    assert r.code == 3, r
    assert f"dia/A is being driven by another run of leapgit (pid {proc.pid})" in r.err, r
    assert _receipts(diamond) == []
    os.kill(proc.pid, signal.SIGTERM)
    proc.communicate(timeout=30)
    assert [(x.round, x.outcome) for x in _receipts(diamond)] == [(1, 0)]


def test_leap_round_from_inside_a_driven_round_says_the_run_closes_it(
        diamond: Path, builder: Builder) -> None:
    """A blind review: a builder that runs `leap round` itself was told another run of
    leapgit drove the ball, and to kill it: its own driver. It is told the run closes the
    round, and how to report it; the run records its one round."""
    set_config(diamond, builder=builder("""
        import subprocess
        pathlib.Path("src/a.py").write_text("A = 2\\n")
        said = subprocess.run([sys.executable, "-m", "leapgit", "round", "dia", "A",
                               "--outcome", "1", "--evidence", "mine"],
                              capture_output=True, text=True)
        print("LEAP ROUND SAID", said.returncode, said.stderr)
        pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 1\\nevidence: ok\\n")
    """))
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond)
    assert r.code == 0, r
    [receipt] = _receipts(diamond)
    log = Path(receipt.log or "").read_text()
    assert "LEAP ROUND SAID 3" in log and "that run closes it [L3]" in log, log
    assert "kill" not in log and "$LEAP_REPORT" in log, log
    assert (receipt.round, receipt.outcome) == (1, 1)


def test_a_second_run_of_a_ball_being_driven_holds_until_the_first_is_stopped(
        diamond: Path, builder: Builder, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    set_config(diamond, builder=builder(ROUNDS))
    proc = _run(diamond, {"SLEEP_ON": "1", "PIDS": str(pids)})
    _wait_for(pids / "1", proc)
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond)
    assert r.code == 3, r  # L3: never two builders in one worktree
    assert f"dia/A is being driven by another run of leapgit (pid {proc.pid})" in r.err
    assert f"`kill {proc.pid}`" in r.err
    os.kill(proc.pid, signal.SIGTERM)  # the hint's command: the run records its round, at 0
    proc.communicate(timeout=30)
    assert [(x.round, x.outcome) for x in _receipts(diamond)] == [(1, 0)]
    # said as it was (stop 35: a SIGTERM was recorded as a SIGINT)
    assert _receipts(diamond)[0].evidence.startswith("interrupted (SIGTERM): "), _receipts(diamond)
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond, env={"PIDS": str(pids)})
    assert r.code == 0, r
    assert [(x.round, x.outcome) for x in _receipts(diamond)] == [(1, 0), (2, 1)]
    _branch_is_its_receipts(diamond)


def test_a_round_of_a_ball_not_thrown_leads_on_to_its_throw(diamond: Path) -> None:
    """Every hint leads on: `leap round` on a ball never thrown names `leap throw S --ball
    B`; after exactly that, the round is recorded."""
    r = leap("round", "dia", "A", "--outcome", "0", "--evidence", "by hand", cwd=diamond)
    assert r.code == 2 and "run `leap throw dia --ball A` first" in r.err, r
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0  # the hint, exactly
    (worktree_of(diamond, "A") / "src" / "a.py").write_text("A = 2\n")
    r = leap("round", "dia", "A", "--outcome", "0", "--evidence", "by hand", cwd=diamond)
    assert r.code == 3 and [x.round for x in _receipts(diamond)] == [1], r


def test_a_round_of_a_ball_the_slice_does_not_hold_names_it_unknown(diamond: Path) -> None:
    """Not "not thrown; throw it" (fuzzing review): that throw would be refused too."""
    r = leap("round", "dia", "nope", "--outcome", "0", "--evidence", "x", cwd=diamond)
    assert r.code == 2 and "unknown ball 'nope' in slice 'dia'" in r.err, r
    assert "leap throw" not in r.err, r


def test_a_worktree_moved_elsewhere_is_named_where_it_is_and_moved_back(diamond: Path) -> None:
    """`git worktree move` took the ball's worktree, uncommitted edits and all: it is not
    "gone", and `git worktree add` would fail (the branch is checked out there); the hint
    moves it back, edits kept (blind review)."""
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    (wt / "src" / "a.py").write_text("A = 7  # not committed\n")
    moved = diamond.parent / "moved-A"
    git("worktree", "move", str(wt), str(moved), cwd=diamond)
    checked = leap("ball", "check", "dia", "A", cwd=diamond)
    assert checked.code == 3, checked  # a hold: the work stands on its branch
    assert f"its branch is checked out at {moved}" in checked.err, checked
    back = re.search(r"; `([^`]+)`, then run this again", checked.err)
    assert back is not None and back.group(1) == f"git worktree move {moved} {wt}", checked
    subprocess.run(back.group(1), shell=True, cwd=diamond, check=True)  # the hint, exactly
    assert (wt / "src" / "a.py").read_text() == "A = 7  # not committed\n"  # nothing lost
    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=wt) == "leap/ball/dia/A"
    again = leap("ball", "check", "dia", "A", cwd=diamond)  # checks the edit now, not where
    assert "is not at" not in again.err and "src/a.py" in again.out + again.err, again


def test_a_locked_worktree_whose_disk_is_away_is_not_removed_by_the_hint_unasked(
        diamond: Path) -> None:
    """A worktree git holds locked (a disk not mounted now) is not called gone: the hint
    says to mount it first, and only then names the unlock (blind review: `git worktree
    remove` of a locked worktree fails)."""
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    git("worktree", "lock", "--reason", "on the usb disk", str(wt), cwd=diamond)
    away = wt.rename(diamond.parent / "unmounted-A")
    checked = leap("ball", "check", "dia", "A", cwd=diamond)
    assert checked.code == 3 and "git holds it locked" in checked.err, checked
    assert "mount its disk; or, if it is gone for good," in checked.err, checked
    away.rename(wt)  # the disk is back: nothing to do
    assert leap("ball", "check", "dia", "A", cwd=diamond).code == 0


def test_a_worktree_moved_by_hand_is_found_again_by_the_repair_the_hint_names(
        diamond: Path) -> None:
    """`mv` of a ball's worktree: git still lists the old place, now missing. Removing that
    registration would strand the moved folder's edits, so the hint names `git worktree
    repair NEWPATH` beside the way back; after it the worktree is named where it is, and
    the move back keeps the edits (reversibility review)."""
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    (wt / "src" / "a.py").write_text("A = 7  # not committed\n")
    moved = wt.rename(diamond.parent / "moved-by-hand")
    checked = leap("ball", "check", "dia", "A", cwd=diamond)
    assert checked.code == 3 and "`git worktree repair NEWPATH` finds it instead" in \
        checked.err, checked
    git("worktree", "repair", str(moved), cwd=diamond)  # the hint, NEWPATH the moved folder
    checked = leap("ball", "check", "dia", "A", cwd=diamond)
    assert f"its branch is checked out at {moved}" in checked.err, checked
    back = re.search(r"; `([^`]+)`, then run this again", checked.err)
    assert back is not None, checked
    subprocess.run(back.group(1), shell=True, cwd=diamond, check=True)
    assert (wt / "src" / "a.py").read_text() == "A = 7  # not committed\n"


def test_a_worktree_git_no_longer_lists_is_moved_aside_and_recreated_as_the_hint_says(
        diamond: Path) -> None:
    """The folder is there, its admin entry gone: not "gone", and `git worktree add` would
    fail on the folder (nor can `git worktree repair` find its repository again); the hint
    moves it aside, keeping what it held, and recreates the worktree (boundary review)."""
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    (wt / "notes.txt").write_text("kept\n")
    shutil.rmtree(diamond / ".git" / "worktrees")
    checked = leap("ball", "check", "dia", "A", cwd=diamond)
    assert checked.code == 3 and "is not listed by git" in checked.err, checked
    fix = re.search(r"\(`(mv [^`]+)`;", checked.err)
    assert fix is not None, checked
    subprocess.run(fix.group(1), shell=True, cwd=diamond, check=True)  # the hint, exactly
    assert (wt.parent / "A.aside" / "notes.txt").read_text() == "kept\n"  # nothing lost
    assert leap("ball", "check", "dia", "A", cwd=diamond).code == 0


@pytest.mark.parametrize(("locked", "branch_gone"), [(False, False), (True, False),
                                                     (False, True)])
def test_a_worktree_folder_without_its_git_file_is_moved_aside_and_recreated(
        diamond: Path, locked: bool, branch_gone: bool) -> None:
    """A kill inside `git worktree remove` (a half-made worktree made again on resume) can
    leave the folder, git still listing it, with its `.git` file already deleted: that
    folder was taken for the ball's worktree, and the builder's round was spent on an L5
    refusal. It is named as no checkout, and the hint, run exactly, moves it aside (what
    it held kept) and makes the worktree again on the ball's branch; the work goes on."""
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    if locked:  # as a `git worktree add` a kill stopped leaves it
        git("worktree", "lock", str(wt), cwd=diamond)
    (wt / ".git").unlink()
    (wt / "notes.txt").write_text("kept\n")
    recorded = git("rev-parse", "leap/ball/dia/A", cwd=diamond).strip()
    if branch_gone:  # the hint makes it again where the ledger last left it (review)
        git("update-ref", "-d", "refs/heads/leap/ball/dia/A", cwd=diamond)
    set_config(diamond, builder=f"{sys.executable} -c pass")
    run = leap("throw", "dia", "--ball", "A", "--resume", "--run", cwd=diamond)
    assert run.code == 3 and "has no .git file: it is no checkout" in run.err, run
    assert "round" not in run.out, run  # no round of the builder's is spent on it
    assert leap("status", "dia", cwd=diamond).out.count("round 0/4") == 4  # nor recorded
    checked = leap("ball", "check", "dia", "A", cwd=diamond)
    assert checked.code == 3 and "has no .git file: it is no checkout" in checked.err, checked
    assert "[L5]" in checked.err, checked
    fix = re.search(r"\(`(mv [^`]+)`;", checked.err)
    assert fix is not None, checked
    subprocess.run(fix.group(1), shell=True, cwd=diamond, check=True)  # the hint, exactly
    assert (wt.parent / "A.aside" / "notes.txt").read_text() == "kept\n"  # nothing lost
    assert leap("ball", "check", "dia", "A", cwd=diamond).code == 0
    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=wt).strip() == "leap/ball/dia/A"
    assert git("rev-parse", "HEAD", cwd=wt).strip() == recorded


def test_a_balls_branch_deleted_under_its_worktree_is_put_back_as_the_hint_says(
        diamond: Path) -> None:
    """Its worktree is there, its branch deleted by hand (`git update-ref -d`): the worktree
    stands on a branch that is not there. `--run` failed without a hint; now the hold names
    the branch and the command that puts it back at the ball's last recorded commit, and
    that command, run exactly, lets the work go on, the worktree's edits kept."""
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    (wt / "notes.txt").write_text("kept\n")
    recorded = git("rev-parse", "leap/ball/dia/A", cwd=diamond).strip()
    git("update-ref", "-d", "refs/heads/leap/ball/dia/A", cwd=diamond)
    set_config(diamond, builder=f"{sys.executable} -c pass")
    run = leap("throw", "dia", "--ball", "A", "--resume", "--run", cwd=diamond)
    assert run.code == 3 and "the branch leap/ball/dia/A of dia/A is gone" in run.err, run
    assert "[L5]" in run.err, run
    fix = re.search(r"\(`(git update-ref [^`]+)`\)", run.err)
    assert fix is not None and recorded in fix.group(1), run
    subprocess.run(fix.group(1), shell=True, cwd=diamond, check=True)  # the hint, exactly
    assert leap("ball", "check", "dia", "A", cwd=diamond).code == 0
    assert (wt / "notes.txt").read_text() == "kept\n"  # nothing lost
    assert git("rev-parse", "HEAD", cwd=wt).strip() == recorded


def test_the_in_flight_refusal_names_the_round_that_closes_it(diamond: Path) -> None:
    """A hint-coverage hunt: the other way on the in-flight refusal names, `leap round S B
    --outcome N --evidence TEXT`, run exactly where the refused throw ran (N and TEXT
    filled in), records the ball's round."""
    import shlex

    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    (worktree_of(diamond, "A") / "src" / "a.py").write_text("A = 5\n")
    r = leap("throw", "dia", "--ball", "A", cwd=diamond)
    assert r.code == 1 and "re-throwing a ball in flight is refused [L3]" in r.err, r
    [command] = re.findall(r"close its round \(`(leap round [^`]+)`\)", r.err)
    assert command == "leap round dia A --outcome N --evidence TEXT", r.err
    args = shlex.split(command.replace(" N ", " 0 ").replace("TEXT", "'not there yet'"))
    done = leap(*args[1:], cwd=diamond)
    assert done.code == 3, done  # a hold (0), recorded
    assert [(x.round, x.outcome) for x in _receipts(diamond)] == [(1, 0)]


def test_a_worktree_switched_to_a_new_branch_is_not_told_its_ball_branch_is_gone(
        diamond: Path) -> None:
    """Blind review (e6e0b48): git lists a worktree on a branch with no commit yet (`git
    switch --orphan`) with an all-zero HEAD, which read as "the ball's branch is gone"; the
    hint then put the ball branch back at the recorded commit over a commit no round
    recorded, and said so again at every check. The ball branch is there: nothing says it
    is gone, and it keeps its commit; a put-back never overwrites a branch."""
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    (wt / "src" / "a.py").write_text("A = 3\n")
    git("-c", "core.hooksPath=/dev/null", "commit", "-qam", "wip, no trailers", cwd=wt)
    unrecorded = git("rev-parse", "HEAD", cwd=wt).strip()
    git("switch", "-q", "--orphan", "scratch", cwd=wt)
    checked = leap("ball", "check", "dia", "A", cwd=diamond)
    assert "is gone" not in checked.err and "update-ref" not in checked.err, checked
    assert git("rev-parse", "leap/ball/dia/A", cwd=diamond).strip() == unrecorded
