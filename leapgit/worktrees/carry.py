"""`leap throw --run` on a ball in flight (issue 14; L3, L6): after a round closed by hand,
a Ctrl-C, a crash of the run or of its builder, or a hold that did not end the episode, the
episode goes on at its next round in its own worktree, with the configured builder. No new
throw record is written and no round is repeated or skipped: the driver counts rounds from
the ledger, so round four still cannot create round five.

Checked before the throw changes anything: the ball's worktree must still be its own, and no
other run (or a builder a killed run left behind) may be driving it. A round a killed run
never recorded is recorded first, with what its builder left: its builder's word when it
ended after the kill (its exit status, beside the drive lock), else 0.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from leapgit import git
from leapgit.ledger import query
from leapgit.ledger.workspace import Workspace
from leapgit.records.types import ThrowRecord
from leapgit.rules.episodes import current_episode
from leapgit.rules.readiness import BallStanding
from leapgit.worktrees import handoff, place
from leapgit.worktrees.builder import BuilderExit, builder_word, left_exit
from leapgit.worktrees.closeround import RoundClosed, admin_dir, close_round
from leapgit.worktrees.drivelock import DriveLock, check_free


def carries_on(s: BallStanding, run: bool, score: str | None) -> bool:
    """A throw with --run continues the ball's episode: it is in flight, and its last round
    is no claim that waits for `leap score` (``score``: that hint)."""
    return run and s.own == "in-flight" and s.episode is not None and score is None


def carry_on(ws: Workspace, s: BallStanding) -> ThrowRecord:
    """The throw record of the episode that goes on, once nothing stands in its way."""
    assert s.episode is not None
    t = s.episode.throw
    path = place.worktree_of(ws, t)
    episode = s.episode
    place.require_worktree(ws.paths.root, path, t.branch, f"{t.slice}/{t.ball}",
                           lambda: place.recorded_in(ws, episode))
    admin = admin_dir(ws.paths.common_dir, path)
    check_free(admin / "leap" if admin else None, path, f"{t.slice}/{t.ball}")  # L3
    return t


def close_killed_round(ws: Workspace, slice_id: str, ball_id: str, round_no: int,
                       log: Path, lock: DriveLock | None = None) -> RoundClosed | None:
    """L6: a round always ends in a receipt. The run that drove ``round_no`` was killed
    before it recorded the round (the drive lock still names it): the round is recorded now,
    with what its builder left in the worktree (folded and scope-checked as any round),
    before the episode goes on; never a second builder on top of unrecorded work. A builder
    that ended after the kill, within builder.timeout, left its exit status
    (``builder.run_builder``): the round is its word, as if its run had lived (its report,
    trailers, or exit status); else 0. A round of an episode that has ended is not this
    episode's: nothing is recorded for it."""
    with ws.ledger() as ledger:
        view = ledger.require()
        ep = place.localized(ws, current_episode(view, slice_id, ball_id))
        if ep.closed or len(ep.receipts) + 1 != round_no or (
                lock is not None and lock.episode not in (None, ep.throw.episode)):
            return None  # recorded after all (the run died after the receipt), or ended
        ball = query.load_ball_version(view, slice_id, ball_id, ep.throw.spec_version)
        killed = (f"the run that drove round {round_no} ended before it recorded the round "
                  "(it was killed)")
        outcome: Literal[-1, 0, 1] = 0
        evidence = (f"{killed}; leapgit recorded it at 0 with what its builder left when the "
                    "ball was continued")
        claim, start = False, None
        word = _word_left(ws, ep.throw, lock)
        if word is not None:
            outcome, said, claim = word
            start = lock.start if lock is not None else None
            evidence = (f"{said} ({killed}; its builder ended after it, and leapgit recorded "
                        "its word when the ball was continued)")
        return close_round(
            ledger, ws.paths.common_dir, ball, ep, outcome=outcome, claim=claim,
            evidence=evidence, round_cap=ws.config.round_cap, recorded_by="leap throw --run",
            start=start or None, log=str(log) if log.exists() else None,
            env=handoff.environment({}))


def _word_left(ws: Workspace, t: ThrowRecord, lock: DriveLock | None
               ) -> tuple[Literal[-1, 0, 1], str, bool] | None:
    """What the builder of the lock's round said as it ended after its run was killed: its
    exit status, read with its report and trailers; None when it left none (it was killed
    too, or an older leapgit drove it). Past builder.timeout it is the 0 a living run gives
    a builder it stops."""
    exit_file = lock.exit_file() if lock is not None else None
    code = left_exit(exit_file) if exit_file is not None else None
    if code is None or lock is None or exit_file is None:
        return None
    timeout = ws.config.builder_timeout
    if lock.began is not None and exit_file.stat().st_mtime - lock.began > timeout:
        return 0, (f"its builder ran {exit_file.stat().st_mtime - lock.began:.0f} s, past "
                   f"builder.timeout ({timeout:g} s), and exited {code}; the round ended at "
                   "0"), False
    worktree = place.worktree_of(ws, t)
    report = handoff.read_report(handoff.private_dir(worktree) / "report.yaml")
    outcome, said = builder_word(BuilderExit(code), report, worktree,
                                 lock.start or git.out(["rev-parse", "HEAD"], worktree),
                                 timeout)
    return outcome, f"{said}; exit {code}", True
