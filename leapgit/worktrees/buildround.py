"""One round of one ball under `leap throw --run` (L2, L3, L6): the L2 check of the map, the
handoff, the builder in the ball's worktree (the round's log path shown as it starts, a
heartbeat with the log's last line while it runs), what the builder says its round came to,
then ``close_round`` (fold, commit, scope check, receipt, rollback on -1).

A builder that failed and changed nothing, the same way as in the round before (the same exit
code, the worktree as it was), would fail the same way in every round left: that round is
recorded at 0 saying so, and the run stops driving the ball, which keeps its remaining rounds
for `leap throw --run` once the builder is repaired.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from leapgit import git
from leapgit.errors import Hold, LeapError
from leapgit.ledger import query
from leapgit.ledger.repo import open_repo
from leapgit.ledger.store import Ledger
from leapgit.ledger.workspace import Workspace
from leapgit.records.types import BallRecord, ThrowRecord
from leapgit.rules.episodes import Episode, current_episode, findings_to_answer
from leapgit.worktrees import handoff
from leapgit.worktrees.builder import Stop, builder_word, run_builder
from leapgit.worktrees.check import check_ball
from leapgit.worktrees.closeround import RoundClosed, close_round, roll_back, worktree_problem
from leapgit.worktrees.drivelock import DriveLock
from leapgit.worktrees.evidence import keep
from leapgit.worktrees.progress import Progress, last_line
from leapgit.worktrees.rewind import untracked_paths
from leapgit.worktrees.rounds import FOLDING_ENV, record_round
from leapgit.worktrees.setup import set_up, setup_evidence
from leapgit.worktrees.watch import Watch, tree_state

HEARTBEAT = 15.0  # seconds between the lines that show a running builder is alive


@dataclass(frozen=True)
class Played:
    closed: RoundClosed
    interrupted: bool = False
    failure: int | None = None  # the exit code of a builder that failed and changed nothing
    stuck: bool = False  # it failed that way in the round before too: stop driving the ball


def log_path(ws: Workspace, t: ThrowRecord, round_no: int) -> Path:
    return (ws.paths.common_dir / "leap" / "logs" / t.slice / t.ball
            / f"episode-{t.episode}-round-{round_no}.log")


def next_step(t: ThrowRecord, round_no: int, round_cap: int) -> str:
    """What leads on after this round held and the run stopped driving the ball."""
    if round_no < round_cap:
        return f"`leap throw {t.slice} --ball {t.ball} --run` continues at round {round_no + 1}"
    return (f"`leap throw {t.slice} --ball {t.ball} --resume --run` starts a new episode from "
            "its checkpoint")


def _stuck_evidence(code: int, then: str, said: str) -> str:
    return (f"the builder failed the same way twice in a row (exit {code}, no change in the "
            f"worktree): the episode ends at 0 rather than spend the rounds left (L6); "
            f"repair the builder, then {then}; builder said: {said}")


class EpisodeEnded(Hold):
    """L6: the builder's own commits ended (or spent) the episode under its round: what
    the ball's standing says comes next, as for any episode that ended."""


class RoundPlayer:
    def __init__(self, ws: Workspace, command: str, progress: Progress,
                 stop: Stop, watch: Watch, heartbeat: float = HEARTBEAT) -> None:
        self.ws, self.command, self.progress, self.stop = ws, command, progress, stop
        self.watch, self.heartbeat = watch, heartbeat
        self.limit = ws.config.round_cap

    def play(self, ep: Episode, ball: BallRecord, lock: DriveLock | None,
             failed_before: int | None) -> Played:
        """``failed_before``: the ``failure`` of this ball's round before, in this run."""
        t = ep.throw
        worktree = Path(t.worktree or "")
        round_no = len(ep.receipts) + 1
        moved = worktree_problem(self.ws.paths.common_dir, worktree, t.branch)
        if moved is not None:  # never hand a builder a tree that is not the ball's own
            return Played(self._close(ep, ball, -1, "checked before the round", None, {},
                                      claim=False))
        log = log_path(self.ws, t, round_no)
        setup = set_up(self.ws, worktree, log)  # a fresh worktree: before anything else
        if setup is not None and not setup.ok:
            evidence = setup_evidence(setup, next_step(t, round_no, self.limit))
            return Played(self._held(ep, evidence, log), stuck=True)
        self.progress.update(t.ball, round_no, "checking map (L2)")
        checked = check_ball(self.ws.paths.common_dir, worktree, ball, t)
        if checked.outcome != 1:  # L2: wrong map -1, missing dependency 0; no build
            return Played(self._close(ep, ball, checked.outcome, checked.evidence(), None, {},
                                      claim=False))
        hand = self._handoff(ep, ball, worktree, round_no)
        env = handoff.environment(hand.env)
        start = git.out(["rev-parse", "HEAD"], worktree)
        self.progress.update(t.ball, round_no, f"building; log {log}")
        watched = self.watch.snapshot(worktree)
        before = tree_state(worktree)
        untracked = untracked_paths(worktree)  # a refused round leaves them alone (L6)
        if lock is not None:  # a kill from here on leaves this round for the next driver
            lock.starting(round_no, t.episode, start)
        ex = run_builder(
            self.command, worktree, {**env, FOLDING_ENV: "1"}, log,
            self.ws.config.builder_timeout, self.stop, lock_fd=lock.fd if lock else None,
            started=(lambda group: lock.started(group, round_no)) if lock else None,
            beat=lambda seconds: self.progress.beat(t.ball, round_no, seconds, last_line(log)),
            every=self.heartbeat, exit_file=lock.exit_file() if lock else None)
        try:
            outcome, evidence = builder_word(ex, handoff.read_report(hand.report), worktree,
                                              start, self.ws.config.builder_timeout)
            failure = ex.code if (outcome == 0 and ex.code and not ex.interrupted
                                  and not ex.timed_out and tree_state(worktree) == before) \
                else None
            stuck = failure is not None and failure == failed_before
            if stuck:
                evidence = _stuck_evidence(ex.code or 0, next_step(t, self.limit,
                                                                   self.limit), evidence)
            claim = not (ex.interrupted or ex.timed_out)
            foreign = self.watch.changed(watched)
            if foreign:  # a hold, derived: the work may be fine, but it reached elsewhere
                outcome = min(outcome, 0)
                claim = claim and outcome == -1
                evidence = (f"{', '.join(foreign)} changed while the builder of {t.ball} ran "
                            f"(L5, L9: a tree that is not the ball's own); builder said: "
                            f"{evidence}")
            closed = self._close(ep, ball, outcome, evidence, log, env, start=start,
                                 claim=claim, stuck=stuck, untracked=untracked,
                                 stopped=(ex.why or "interrupted") if ex.interrupted
                                 else None)
            return Played(closed, ex.interrupted, failure, stuck)
        except Exception as exc:  # noqa: BLE001 -- the cause becomes the round's evidence
            return Played(self._failed(ep, ball, exc, log, env), ex.interrupted)

    def _handoff(self, ep: Episode, ball: BallRecord, worktree: Path,
                 round_no: int) -> handoff.Handoff:
        t = ep.throw
        previous = ep.receipts[-1] if ep.receipts else None
        checkpoint = None
        with self.ws.ledger() as ledger:
            view = ledger.require()
            if t.resumed_from is not None and not ep.receipts:
                checkpoint = query.checkpoint(view, t.slice, t.ball, t.resumed_from)
                if checkpoint is None:  # its score ended it (a held last round): what that
                    # round tried is its receipt
                    done = query.receipts(view, t.slice, t.ball, t.resumed_from)
                    previous = done[-1] if done else None
            findings = findings_to_answer(view, t.slice, t.ball)  # T7.6
        return handoff.write(worktree, ball, t, round_no, self.limit, previous, checkpoint,
                             findings)

    def _held(self, ep: Episode, evidence: str, log: Path) -> RoundClosed:
        """A 0 leapgit derived before the builder ran, recorded without a commit: nothing in
        the worktree is the round's work."""
        t = ep.throw
        with self.ws.ledger() as ledger:
            recorded = record_round(ledger, t.slice, t.ball, outcome=0, evidence=evidence,
                                    round_cap=self.limit, claim=False, log=str(log),
                                    recorded_by="leap throw --run",
                                    expect_round=len(ep.receipts) + 1)
        return RoundClosed(recorded, None, (), None)

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
                ended = self._ended_under(ledger, ep)
                if ended is not None:
                    raise ended from exc
                raise LeapError(f"{evidence}; the round was not recorded either: "
                                f"{again.lines()[0]}") from exc
            view = ledger.require()
        rolled, failed = roll_back(view, self.ws.paths.common_dir, Path(t.worktree or ""), ball,
                                   t, env)
        return RoundClosed(recorded, None, (), rolled, failed)

    def _ended_under(self, ledger: Ledger, ep: Episode) -> EpisodeEnded | None:
        """L6: the builder's own commits, recorded by the post-commit hook, spent or ended
        the episode while its round ran (five rounds committed in one call, say): no round
        is left to record. A commit past them is kept as evidence, never lost."""
        t = ep.throw
        now = current_episode(ledger.require(), t.slice, t.ball)
        if now.throw.episode != t.episode or len(now.receipts) <= len(ep.receipts) or \
                not (now.closed or now.spent(self.limit)):
            return None
        kept = ""
        head = git.run(["rev-parse", "HEAD"], Path(t.worktree or ""), check=False)
        last = now.receipts[-1].commit
        sha = head.stdout.decode().strip()
        if head.returncode == 0 and last is not None and sha != last:
            with open_repo(str(self.ws.paths.common_dir)) as repo:
                name = keep(repo, t.slice, t.ball, t.episode, len(now.receipts) + 1, sha)
            # kept: the branch goes back where its last round left it (a commit no receipt
            # records is no round, L6: a claim there is scored, a resume starts from there)
            back = name is not None and git.run(
                ["reset", "-q", "--keep", last], Path(t.worktree or ""),
                check=False).returncode == 0
            kept = (f"; its commit past them, {sha[:12]}, is kept as {name}"
                    + (f" and the branch is back at round {len(now.receipts)}'s" if back
                       else "")) if name else ""
        return EpisodeEnded(
            f"its builder's own commits recorded rounds {len(ep.receipts) + 1}-"
            f"{len(now.receipts)} while its round ran, and the episode "
            f"{'ended' if now.closed else 'used its rounds'}: no round is left to record"
            f"{kept}", rule="L6")

    def _close(self, ep: Episode, ball: BallRecord, outcome: Literal[-1, 0, 1],
               evidence: str, log: Path | None, env: dict[str, str], *,
               start: str | None = None, claim: bool = True, stuck: bool = False,
               untracked: frozenset[str] | None = None, stopped: str | None = None
               ) -> RoundClosed:
        with self.ws.ledger() as ledger:
            return close_round(
                ledger, self.ws.paths.common_dir, ball, ep, outcome=outcome, evidence=evidence,
                round_cap=self.limit, recorded_by="leap throw --run", start=start,
                log=str(log) if log else None, env=env, claim=claim, stuck=stuck,
                untracked=untracked, stopped=stopped,
            )
