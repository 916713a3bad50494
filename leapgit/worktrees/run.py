"""`leap throw --run`: drive each thrown ball's builder, one process per round (L3, L6).

Each round is ``buildround.RoundPlayer.play``: the L2 check of the map, the handoff, the
builder in the ball's worktree with a log file per round, then ``close_round`` (commit, scope
check, receipt, rollback on -1). A ball stops when its builder reports 1 (a claim) or -1,
when a round is refused, when the episode ends at 0 with a checkpoint, when its builder
failed the same way twice in a row, or when the run is interrupted. Independent balls run in
parallel, up to ``jobs`` at once. Ctrl-C stops every builder, records each running round as 0
with the reason, and leaves no round half-recorded.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from leapgit.errors import LeapError, UsageError
from leapgit.ledger import query
from leapgit.ledger.workspace import Workspace
from leapgit.records.types import OUTCOME_NAMES, BallRecord, Receipt
from leapgit.rules.episodes import Episode, current_episode
from leapgit.worktrees.builder import Stop, signal_name
from leapgit.worktrees.buildround import HEARTBEAT, EpisodeEnded, Played, RoundPlayer, log_path
from leapgit.worktrees.carry import close_killed_round
from leapgit.worktrees.closeround import RoundClosed, admin_dir
from leapgit.worktrees.drivelock import DriveLock
from leapgit.worktrees.place import localized, recorded_in, require_worktree
from leapgit.worktrees.progress import Progress
from leapgit.worktrees.watch import Watch


@dataclass
class BallRun:
    ball: str
    wave: int
    receipts: list[Receipt] = field(default_factory=list)
    checkpoint: bool = False
    rolled_back: str | None = None
    error: LeapError | None = None
    interrupted: bool = False
    lock: DriveLock | None = None
    stuck: bool = False  # stopped: its builder failed the same way twice in a row

    @property
    def last(self) -> Receipt | None:
        return self.receipts[-1] if self.receipts else None


@dataclass(frozen=True)
class RunResult:
    slice: str
    balls: tuple[BallRun, ...]
    interrupted: bool


def _episode(ws: Workspace, slice_id: str, ball_id: str) -> tuple[Episode, BallRecord]:
    with ws.ledger() as ledger:
        view = ledger.require()
        ep = current_episode(view, slice_id, ball_id)
        ball = query.load_ball_version(view, slice_id, ball_id, ep.throw.spec_version)
        return localized(ws, ep), ball




class _Driver:
    def __init__(self, ws: Workspace, command: str, progress: Progress,
                 stop: Stop, heartbeat: float = HEARTBEAT,
                 watch: Watch | None = None,
                 after_round: Callable[[str, RoundClosed], None] | None = None) -> None:
        self.ws, self.progress, self.stop = ws, progress, stop
        self.after_round = after_round
        self.limit = ws.config.round_cap
        self.player = RoundPlayer(ws, command, progress, stop, watch or Watch(ws), heartbeat)

    def drive(self, slice_id: str, ball_id: str, wave: int) -> BallRun:
        run = BallRun(ball_id, wave)
        try:
            with self._lock(slice_id, ball_id) as run.lock:
                self._drive(slice_id, ball_id, run)
        except LeapError as exc:
            run.error = exc
            rounds = len(run.receipts)
            if isinstance(exc, EpisodeEnded):  # the rounds its builder's commits recorded
                try:
                    rounds = len(_episode(self.ws, slice_id, ball_id)[0].receipts)
                except LeapError:
                    pass
                self.progress.update(ball_id, rounds, f"hold: {exc.lines()[0]}")
                return run
            self.progress.update(ball_id, rounds, f"error: {exc.lines()[0]}")
        return run

    def _lock(self, slice_id: str, ball_id: str) -> DriveLock:
        """L3: one driver, and one builder, a worktree (``drivelock``); L5: the worktree is
        there (a folder deleted by hand was met as "git is not installed", its round 0)."""
        ep, _ = _episode(self.ws, slice_id, ball_id)
        worktree = Path(ep.throw.worktree or "")
        if ep.throw.worktree:
            require_worktree(self.ws.paths.root, worktree, ep.throw.branch,
                             f"{slice_id}/{ball_id}", lambda: recorded_in(self.ws, ep))
        admin = admin_dir(self.ws.paths.common_dir, worktree)
        return DriveLock(admin / "leap" if admin else None, worktree, f"{slice_id}/{ball_id}")

    def _drive(self, slice_id: str, ball_id: str, run: BallRun) -> None:
        for closed in self._rounds(slice_id, ball_id, run):
            if self.after_round is not None:  # issue 16: a worker pushes each round
                self.after_round(ball_id, closed)
            r = closed.recorded.receipt
            run.receipts.append(r)
            run.checkpoint = closed.recorded.checkpoint is not None
            if closed.rolled_back:
                run.rolled_back = closed.rolled_back.summary()
            if closed.rollback_failed:
                run.error = closed.rollback_failed
            state = OUTCOME_NAMES[r.outcome] + (" (claim)" if r.claim and r.outcome == 1
                                               else "")
            if run.checkpoint:
                state += ", checkpoint"
            if closed.rolled_back:
                state += ", rolled back"
            self.progress.update(ball_id, r.round, state)

    def _rounds(self, slice_id: str, ball_id: str, run: BallRun) -> Iterator[RoundClosed]:
        lock = run.lock
        if lock is not None and lock.unclosed is not None:  # L6: a killed run's round first
            ep, _ = _episode(self.ws, slice_id, ball_id)
            left = close_killed_round(self.ws, slice_id, ball_id, lock.unclosed,
                                      log_path(self.ws, ep.throw, lock.unclosed), lock)
            lock.closed()
            if left is not None:
                yield left
                if left.recorded.checkpoint or left.recorded.receipt.outcome != 0:
                    return  # as any round: a claim waits for its score, a -1 ends the run
        failed: int | None = None
        while not self.stop.is_set():
            ep, ball = _episode(self.ws, slice_id, ball_id)
            if ep.closed or ep.spent(self.limit):
                return
            played = self._one_round(ep, ball, run, failed)
            run.interrupted, run.stuck, failed = played.interrupted, played.stuck, played.failure
            closed = played.closed
            yield closed
            receipt = closed.recorded.receipt
            if receipt.outcome != 0 or closed.recorded.checkpoint or run.interrupted or \
                    run.stuck:
                return

    def _one_round(self, ep: Episode, ball: BallRecord, run: BallRun,
                   failed: int | None) -> Played:
        worktree = Path(ep.throw.worktree or "")
        watch = self.player.watch
        watch.enter(worktree)
        try:
            played = self.player.play(ep, ball, run.lock, failed)
        except EpisodeEnded:  # no round is left to close: the lock names none
            if run.lock is not None:
                run.lock.closed()
            raise
        finally:
            watch.leave(worktree)
        if run.lock is not None:
            run.lock.closed()
        return played


def run_balls(ws: Workspace, slice_id: str, balls: list[tuple[str, int]], jobs: int,
              progress: Progress, command: str | None = None,
              heartbeat: float = HEARTBEAT, stop: Stop | None = None,
              watch: Watch | None = None,
              after_round: Callable[[str, RoundClosed], None] | None = None) -> RunResult:
    """``stop``: set from outside (`leap run` on Ctrl-C or its time limit), it stops every
    builder as Ctrl-C does here: each running round is recorded as 0 with the reason.
    ``watch``: one for every builder of the caller's run (`leap run` drives each ball with
    a call of its own): a tree a concurrent round works in is that round's, not foreign."""
    command = command or ws.config.builder_command
    if not command:
        raise UsageError("no builder command", file=".leap/config.yaml",
                         field="builder.command", hint="set builder.command, e.g. a script")
    stop = stop or Stop()
    driver = _Driver(ws, command, progress, stop, heartbeat, watch, after_round)
    interrupted = False
    restore = sigterm_as_interrupt(stop)
    pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="leap-ball")
    futures: list[Future[BallRun]] = [pool.submit(driver.drive, slice_id, b, w)
                                      for b, w in balls]
    try:
        _wait_all(futures)
    except KeyboardInterrupt:
        interrupted = True
        stop.halt("interrupted (SIGINT)")  # SIGTERM's handler said so first, if it was
        # the builders are stopped by their drivers; each running round is recorded
        progress.note("interrupted: stopping every builder and recording its round as 0")
        while True:
            try:
                _wait_all(futures)
                break
            except KeyboardInterrupt:
                continue  # a second Ctrl-C must not leave a round half-recorded
    finally:
        pool.shutdown(wait=True)
        restore()
    return RunResult(slice_id, tuple(f.result() for f in futures), interrupted)


def _wait_all(futures: list[Future[BallRun]]) -> None:
    pending = set(futures)
    while pending:
        _, pending = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)


def sigterm_as_interrupt(stop: Stop | None = None) -> Callable[[], object]:
    """SIGTERM raises KeyboardInterrupt, as Ctrl-C does; ``stop`` learns which it was."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def handler(signum: int, frame: object) -> None:
        if stop is not None:
            stop.why = stop.why or signal_name(signum)
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, handler)
    return lambda: signal.signal(signal.SIGTERM, old)

