"""`leap throw --run`: drive each thrown ball's builder, one process per round (L3, L6).

Each round: the L2 check of the map, the handoff, the builder in the ball's worktree with a
log file per round, then ``close_round`` (commit, scope check, receipt, rollback on -1). A
ball stops when its builder reports 1 (a claim) or -1, when a round is refused, when the
episode ends at 0 with a checkpoint, or when the run is interrupted. Independent balls run in
parallel, up to ``jobs`` at once. Ctrl-C stops every builder, records each running round as 0
with the reason, and leaves no round half-recorded.
"""

from __future__ import annotations

import signal
import threading
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from leapgit import git
from leapgit.errors import LeapError, UsageError
from leapgit.ledger import query
from leapgit.ledger.workspace import Workspace
from leapgit.records.trailers import round_trailers
from leapgit.records.types import OUTCOME_NAMES, BallRecord, Receipt, ThrowRecord
from leapgit.rules.episodes import Episode, current_episode
from leapgit.worktrees import handoff
from leapgit.worktrees.builder import BuilderExit, run_builder
from leapgit.worktrees.carry import close_killed_round
from leapgit.worktrees.check import check_ball
from leapgit.worktrees.closeround import (
    RoundClosed,
    admin_dir,
    close_round,
    roll_back,
    worktree_problem,
)
from leapgit.worktrees.drivelock import DriveLock
from leapgit.worktrees.progress import Progress
from leapgit.worktrees.rounds import FOLDING_ENV, record_round
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

    @property
    def last(self) -> Receipt | None:
        return self.receipts[-1] if self.receipts else None


@dataclass(frozen=True)
class RunResult:
    slice: str
    balls: tuple[BallRun, ...]
    interrupted: bool


def log_path(ws: Workspace, t: ThrowRecord, round_no: int) -> Path:
    return (ws.paths.common_dir / "leap" / "logs" / t.slice / t.ball
            / f"episode-{t.episode}-round-{round_no}.log")


def _episode(ws: Workspace, slice_id: str, ball_id: str) -> tuple[Episode, BallRecord]:
    with ws.ledger() as ledger:
        view = ledger.require()
        ep = current_episode(view, slice_id, ball_id)
        ball = query.load_ball_version(view, slice_id, ball_id, ep.throw.spec_version)
        return ep, ball


def _builder_word(ex: BuilderExit, report: tuple[Literal[-1, 0, 1], str] | None,
                  worktree: Path, start: str, timeout: float) -> tuple[Literal[-1, 0, 1], str]:
    """What the builder says its round came to. Interrupt and timeout end the round at 0."""
    if ex.interrupted:
        return 0, "interrupted (SIGINT): leap stopped the builder; the round ended at 0"
    if ex.timed_out:
        return 0, f"the builder timed out after {timeout:g} s; the round ended at 0"
    if report is not None:
        return report
    head = git.out(["rev-parse", "HEAD"], worktree)
    if head != start:  # a builder that committed by itself carries its receipt as trailers
        msg = git.run(["log", "-1", "--format=%B", head], worktree).stdout
        said = round_trailers(msg)
        if said.outcome is not None:
            return said.outcome, said.evidence or "builder commit trailers"
    if ex.code == 0:
        return 1, "the builder exited 0 without a report (a claim, never a pass)"
    return 0, f"the builder exited {ex.code} without a report"


class _Driver:
    def __init__(self, ws: Workspace, command: str, progress: Progress,
                 stop: threading.Event) -> None:
        self.ws, self.command, self.progress, self.stop = ws, command, progress, stop
        self.limit = ws.config.round_cap
        self.watch = Watch(ws)

    def drive(self, slice_id: str, ball_id: str, wave: int) -> BallRun:
        run = BallRun(ball_id, wave)
        try:
            with self._lock(slice_id, ball_id) as run.lock:
                self._drive(slice_id, ball_id, run)
        except LeapError as exc:
            run.error = exc
            self.progress.update(ball_id, len(run.receipts), f"error: {exc.lines()[0]}")
        return run

    def _lock(self, slice_id: str, ball_id: str) -> DriveLock:
        """L3: one driver, and one builder, a worktree (``drivelock``)."""
        ep, _ = _episode(self.ws, slice_id, ball_id)
        worktree = Path(ep.throw.worktree or "")
        admin = admin_dir(self.ws.paths.common_dir, worktree)
        return DriveLock(admin / "leap" if admin else None, worktree, f"{slice_id}/{ball_id}")

    def _drive(self, slice_id: str, ball_id: str, run: BallRun) -> None:
        for closed in self._rounds(slice_id, ball_id, run):
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
                                      log_path(self.ws, ep.throw, lock.unclosed))
            lock.closed()
            if left is not None:
                yield left
                if left.recorded.checkpoint:
                    return
        while not self.stop.is_set():
            ep, ball = _episode(self.ws, slice_id, ball_id)
            if ep.closed or ep.spent(self.limit):
                return
            closed = self._one_round(ep, ball, run)
            yield closed
            receipt = closed.recorded.receipt
            if receipt.outcome != 0 or closed.recorded.checkpoint or run.interrupted:
                return

    def _one_round(self, ep: Episode, ball: BallRecord, run: BallRun) -> RoundClosed:
        worktree = Path(ep.throw.worktree or "")
        self.watch.enter(worktree)
        try:
            closed = self._round_in(ep, ball, run, worktree)
        finally:
            self.watch.leave(worktree)
        if run.lock is not None:
            run.lock.closed()
        return closed

    def _round_in(self, ep: Episode, ball: BallRecord, run: BallRun,
                  worktree: Path) -> RoundClosed:
        t = ep.throw
        round_no = len(ep.receipts) + 1
        moved = worktree_problem(self.ws.paths.common_dir, worktree, t.branch)
        if moved is not None:  # never hand a builder a tree that is not the ball's own
            return self._close(ep, ball, -1, "checked before the round", None, {},
                               claim=False)
        self.progress.update(t.ball, round_no, "checking map (L2)")
        checked = check_ball(self.ws.paths.common_dir, worktree, ball, t)
        if checked.outcome != 1:  # L2: wrong map -1, missing dependency 0; no build
            return self._close(ep, ball, checked.outcome, checked.evidence(), None, {},
                               claim=False)
        previous = ep.receipts[-1] if ep.receipts else None
        checkpoint = None
        if t.resumed_from is not None and not ep.receipts:
            with self.ws.ledger() as ledger:
                view = ledger.require()
                checkpoint = query.checkpoint(view, t.slice, t.ball, t.resumed_from)
                if checkpoint is None:  # its score ended it (a held last round): what that
                    # round tried is its receipt
                    done = query.receipts(view, t.slice, t.ball, t.resumed_from)
                    previous = done[-1] if done else None
        hand = handoff.write(worktree, ball, t, round_no, self.limit, previous, checkpoint)
        env = handoff.environment(hand.env)
        start = git.out(["rev-parse", "HEAD"], worktree)
        log = log_path(self.ws, t, round_no)
        self.progress.update(t.ball, round_no, "building")
        watched = self.watch.snapshot(worktree)
        lock = run.lock
        ex = run_builder(self.command, worktree, {**env, FOLDING_ENV: "1"}, log,
                         self.ws.config.builder_timeout, self.stop,
                         lock_fd=lock.fd if lock else None,
                         started=(lambda group: lock.started(group, round_no)) if lock
                         else None)
        run.interrupted = ex.interrupted
        try:
            outcome, evidence = _builder_word(ex, handoff.read_report(hand.report), worktree,
                                              start, self.ws.config.builder_timeout)
            claim = not (ex.interrupted or ex.timed_out)
            foreign = self.watch.changed(watched)
            if foreign:  # a hold, derived: the work may be fine, but it reached elsewhere
                outcome = min(outcome, 0)
                claim = claim and outcome == -1
                evidence = (f"{', '.join(foreign)} changed while the builder of {t.ball} ran "
                            f"(L5, L9: a tree that is not the ball's own); builder said: "
                            f"{evidence}")
            return self._close(ep, ball, outcome, evidence, log, env, start=start,
                               claim=claim)
        except Exception as exc:  # noqa: BLE001 -- the cause becomes the round's evidence
            return self._failed(ep, ball, exc, log, env)

    def _failed(self, ep: Episode, ball: BallRecord, exc: Exception, log: Path,
                env: dict[str, str]) -> RoundClosed:
        """L6: a round that started always ends in a receipt. When closing it failed (the
        builder broke its worktree, git failed, a bug), leapgit records a derived -1 with the
        cause, the traceback going to the round's log, and rolls back what it can."""
        t = ep.throw
        if isinstance(exc, LeapError):
            cause = exc.lines()[0]
        else:
            cause = f"{type(exc).__name__}: {exc}"
            with open(log, "a", encoding="utf-8") as fh:
                fh.write("\n[leap] closing the round failed:\n")
                traceback.print_exception(exc, file=fh)
        evidence = f"leapgit could not close the round: {cause}"
        with self.ws.ledger() as ledger:
            try:
                recorded = record_round(ledger, t.slice, t.ball, outcome=-1, evidence=evidence,
                                        round_cap=self.limit, claim=False, log=str(log),
                                        recorded_by="leap throw --run")
            except LeapError as again:
                raise LeapError(f"{evidence}; the round was not recorded either: "
                                f"{again.lines()[0]}") from exc
            view = ledger.require()
        rolled, failed = roll_back(view, self.ws.paths.common_dir, Path(t.worktree or ""), ball,
                                   t, env)
        return RoundClosed(recorded, None, (), rolled, failed)

    def _close(self, ep: Episode, ball: BallRecord, outcome: Literal[-1, 0, 1],
               evidence: str, log: Path | None, env: dict[str, str], *,
               start: str | None = None, claim: bool = True) -> RoundClosed:
        with self.ws.ledger() as ledger:
            return close_round(
                ledger, self.ws.paths.common_dir, ball, ep, outcome=outcome, evidence=evidence,
                round_cap=self.limit, recorded_by="leap throw --run", start=start,
                log=str(log) if log else None, env=env, claim=claim,
            )


def run_balls(ws: Workspace, slice_id: str, balls: list[tuple[str, int]], jobs: int,
              progress: Progress, command: str | None = None) -> RunResult:
    command = command or ws.config.builder_command
    if not command:
        raise UsageError("no builder command", file=".leap/config.yaml",
                         field="builder.command", hint="set builder.command, e.g. a script")
    stop = threading.Event()
    driver = _Driver(ws, command, progress, stop)
    interrupted = False
    restore = _sigterm_as_interrupt()
    pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="leap-ball")
    futures: list[Future[BallRun]] = [pool.submit(driver.drive, slice_id, b, w)
                                      for b, w in balls]
    try:
        _wait_all(futures)
    except KeyboardInterrupt:
        interrupted = True
        stop.set()  # builders are stopped by their drivers; each running round is recorded
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


def _sigterm_as_interrupt() -> Callable[[], object]:
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, handler)
    return lambda: signal.signal(signal.SIGTERM, old)

