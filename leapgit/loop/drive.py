"""`leap run SLICE`: drive a slice from its cut to the spine (L3, L5-L9, T7, T9).

The run is a loop over the ledger. Each turn it reads where every ball stands and asks
``steps.next_step`` for each ball's next step; it hands up to ``jobs`` steps at once to worker
threads (a red by the test author, a throw, a builder's rounds, a scoring), and reads the
ledger again when one ends. A ball it cannot move on is stopped with the reason (a refuse,
a hold, a T9 escalation); the others go on. Once every ball passed it merges the slice as
the one integrator (`leap merge`), proves it live on the landed spine tip (``live``) and
shares the ledger with the spine's remote.

It keeps no state of its own (L8): a run killed at any moment is continued by the next
`leap run` of the slice from the ledger and git, which the building blocks already recover
(a builder's killed round is closed by its drive lock, a merge stopped after its push is
recorded from its intent). One run of a slice at a time (``lease``)."""

from __future__ import annotations

import os
import shlex
import signal
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from leapgit import git, procs
from leapgit.errors import (
    EXIT_HOLD,
    EXIT_INPUT,
    EXIT_OK,
    EXIT_RULE,
    Hold,
    LeapError,
    UsageError,
)
from leapgit.git import RemoteUnavailable
from leapgit.ledger import history, query
from leapgit.ledger import sync as syncing
from leapgit.ledger.leases import LeaseHeld
from leapgit.ledger.workspace import Workspace
from leapgit.loop import remote as rm
from leapgit.loop.author import author_finding_red, author_red, check_author
from leapgit.loop.events import Events, Heartbeat, stop_fields
from leapgit.loop.lease import RunLease
from leapgit.loop.live import Proved, prove_live
from leapgit.loop.presses import Deliveries
from leapgit.loop.progress import EventProgress
from leapgit.loop.remote import Reach
from leapgit.loop.steps import Step, next_step, no_verdict
from leapgit.records.types import INTEGRATOR
from leapgit.rules.episodes import current_episode, findings_to_answer
from leapgit.rules.landing import failed_hint
from leapgit.rules.readiness import BallStanding, assess
from leapgit.scoring import spine
from leapgit.scoring.aggregate import AggregateRefused
from leapgit.scoring.findingred import advance, pending
from leapgit.scoring.merge import MergeBusy, merge
from leapgit.scoring.red import carry_red
from leapgit.scoring.score import declared_builder, score, shared_remote
from leapgit.scoring.spine import spine_remote
from leapgit.tribunal.left import record_left
from leapgit.worktrees import drivelock, place
from leapgit.worktrees.builder import Stop, require_program, signal_name
from leapgit.worktrees.buildround import HEARTBEAT, EpisodeEnded
from leapgit.worktrees.closeround import admin_dir
from leapgit.worktrees.run import run_balls
from leapgit.worktrees.throw import RedBehind, RedToCarry, throw
from leapgit.worktrees.upstream import require_spine_pushable
from leapgit.worktrees.watch import Watch

if TYPE_CHECKING:
    from leapgit.scoring.merge import MergeResult

OUTCOME = {1: "pass", 0: "hold", -1: "refuse"}
# seconds a run waits for one integrator lease another holds (its merge reviews the whole
# slice: minutes); a lease whose merge died stays open until its holder gives it back
LEASE_PATIENCE = 30 * 60
EXIT_INTERRUPTED = 130


@dataclass
class BallEnd:
    ball: str
    wave: int
    state: str  # passed | stopped | waiting
    reason: str = ""
    exit_code: int = EXIT_OK
    hint: str | None = None
    rounds: int = 0
    episode: int = 0
    score: str | None = None
    usage: dict[str, Any] | None = None  # every scoring's juror spend (issue 15 item 9)


@dataclass
class RunEnd:
    slice: str
    balls: list[BallEnd] = field(default_factory=list)
    merged_tip: str | None = None
    merge_number: int | None = None
    live: Proved | None = None
    stopped: str | None = None  # why the run stopped before the spine (time, money, a stop)
    exit_code: int = EXIT_OK
    usage: dict[str, Any] | None = None  # the slice's juror spend
    interrupted: bool = False  # Ctrl-C or SIGTERM

    @property
    def outcome(self) -> str:
        if self.merged_tip is None:
            return "interrupted" if self.interrupted else "not merged"
        if self.live is None or self.live.record is None:
            return "landed, live proof not declared"
        return "landed, live proof held" if self.live.record.outcome == 1 else \
            "landed, live proof FAILED"


@dataclass(frozen=True)
class Options:
    jobs: int = 2
    max_minutes: float | None = None
    resume_holds: bool = False
    heartbeat: float = HEARTBEAT
    remote: str | None = None  # issue 16: publish there; `leap worker`s build the balls
    poll: float = 1.0  # with remote: seconds between looks at it while workers build
    take_over: bool = False  # with remote: take over the run lease of a run that is gone
    holder: str = INTEGRATOR  # L9: who takes the spine's lease (the pusher, where named)

    def given(self, remote: str | None = None, budget: bool = False) -> list[str]:
        """The options that change what a run does, as the words a hint to run it again
        names (``events.as_started``), with ``remote`` as its --remote (this run's when
        None); --take-over is done once it ran, never named again. ``budget``: with
        --max-minutes, for a run that has not started yet; a run that stopped on it goes on
        in a sitting of its own (the same budget again could stop a merge longer than it
        every time)."""
        remote = remote if remote is not None else self.remote
        return [*(["--jobs", str(self.jobs)] if self.jobs != Options.jobs else []),
                *(["--max-minutes", f"{self.max_minutes:g}"]
                  if budget and self.max_minutes else []),
                *(["--resume-holds"] if self.resume_holds else []),
                *(["--remote", remote] if remote else []),
                *(["--holder", self.holder] if self.holder != INTEGRATOR else [])]


class SliceRun:
    def __init__(self, ws: Workspace, slice_id: str, events: Events, options: Options) -> None:
        self.ws, self.slice, self.events, self.opt = ws, slice_id, events, options
        self.stop = Stop()  # Ctrl-C, SIGTERM, or time: builders stop their round
        self.lease: RunLease | None = None  # the run lease, once taken (``_open``)
        self.busy: dict[str, str] = {}
        self.stopped: dict[str, Step] = {}
        self.idle_builds: dict[str, int] = {}
        self.interrupted = False  # Ctrl-C or SIGTERM: exit 130, as `leap throw --run`
        self.presses = 0  # Ctrl-C and SIGTERM received since the run began
        self.deliveries = Deliveries()  # the same, as the kernel delivered them
        self.driving = False  # the ball loop runs: a later press only counts (``_drain``)
        # (ball, score): findings the test author could not turn into a test
        self.declined: set[tuple[str, int | None]] = set()

        self.watch = Watch(ws)  # L5, L9: one for every builder of the run
        self.awaiting: set[str] = set()  # with a remote: balls its workers build now
        self.not_before: dict[str, float] = {}  # a ball's step the remote cut off: when again

        self.reach = Reach(options.remote, options.poll,  # with a remote: whether it answers
                           lambda line: self.events.emit("log", line=line)) \
            if options.remote is not None else None
        self._looked = 0.0
        self._waited: set[tuple[str, str]] = set()  # (ball, why) a score waited for
        self._deadline = (time.monotonic() + options.max_minutes * 60
                          if options.max_minutes else None)

    # -- the loop ----------------------------------------------------------------------
    def run(self) -> RunEnd:
        restore = self._count_interrupts()
        try:
            return self._run()
        finally:
            _until_done(restore)

    def _run(self) -> RunEnd:
        with ExitStack() as held:
            self._open(held)
            self.events.emit("start", jobs=self.opt.jobs, resume_holds=self.opt.resume_holds,
                             max_minutes=self.opt.max_minutes)
            end = RunEnd(self.slice)
            with Heartbeat(self.events, self.opt.heartbeat,
                           lambda: [f"{b}:{s}" for b, s in sorted(self.busy.items())]):
                end.stopped = self._balls()
                # L8, T7.6: an aggregate refusal sends its findings back to the builders;
                # their next rounds are scored and the slice merges again
                try:
                    while end.stopped is None and all(
                            s.verdict == "passed" for s in self._standings().values()) \
                            and self._land(end):
                        end.stopped = self._balls()
                except KeyboardInterrupt:  # in the merge step: stopped as the ball loop stops
                    self.driving = True  # a later press only counts: the run ends whole
                    self.stop.halt("interrupted (SIGINT)")
                    self.interrupted = True
                    again = f"`leap run {self.slice}` goes on from here"
                    end.stopped = f"interrupted in the merge step; {again}"
                    self.events.emit("stop", reason="interrupted in the merge step",
                                     hint=again, exit_code=EXIT_INTERRUPTED)
            end.interrupted = self.interrupted
            end.balls = self._ends(self._standings())
            with self.ws.ledger() as ledger:
                end.usage = history.spent(ledger.require(), self.slice).to_dict()
            end.exit_code = self._exit_code(end)
            self._table(end)
        return end

    def _open(self, held: ExitStack) -> None:
        """The run's start: the remote's ledger here, the preflight, the run lease. With a
        remote out of reach, it waits as a look does (``Reach``), up to its patience or
        --max-minutes, then a hold naming this run again; nothing was taken meanwhile."""
        while True:
            try:
                if self.opt.remote is not None:  # any clone of the remote may drive

                    syncing.sync(self.opt.remote, start=self.ws.paths.root, push=False)
                self._preflight()
                self.lease = held.enter_context(RunLease(self.ws, self.slice,
                                                         self.opt.remote, self.opt.take_over))
                self._left()
            except RemoteUnavailable as exc:
                if self.reach is None:
                    raise
                gave_up = self.reach.lost(exc)
                if gave_up is None and self._deadline is not None and \
                        time.monotonic() + self.opt.poll >= self._deadline:
                    gave_up = (f"--max-minutes {self.opt.max_minutes:g} reached while "
                               f"{self.opt.remote} was out of reach ({exc.lines()[0]})")
                if gave_up is not None:
                    again = shlex.quote(self.opt.remote or "")
                    raise RemoteUnavailable(
                        f"{gave_up}; a hold", hint=f"`leap run {self.slice} --remote {again}` "
                        "again once it answers") from None
                time.sleep(self.opt.poll)
                continue
            if self.reach is not None:
                self.reach.back()
            return

    def _left(self) -> None:
        """T6: the verdicts a convening of a killed run left here are recorded before the
        first step, so run.max_usd counts what they cost (``tribunal.left``)."""
        with self.ws.ledger() as ledger:
            record_left(self.ws.paths.common_dir, ledger,
                        lambda line: self.events.emit("log", line=line))

    def _balls(self) -> str | None:
        self.driving = True
        try:
            return self._turns()
        finally:
            self.driving = False

    def _count_interrupts(self) -> Callable[[], object]:
        """Ctrl-C and SIGTERM, counted from the run's first step: the first raises
        KeyboardInterrupt (the run stops, each running round is recorded, the run lease is
        given back; SIGTERM too, which by default would leave the lease to a take-over).
        While the balls are driven a later one only counts (``_drain`` ends the run at once
        when no builder is at work): raised as well it could land inside the first one's
        handling. One raised in a finalizer is swallowed by Python; the count still holds
        and the ball loop raises it. Outside the ball loop a later press raises again, as
        Python's own handler does. Two SIGINTs sent within microseconds are one to the
        kernel (POSIX signals of one number do not queue): only the count of deliveries
        can be held, not of key presses. That count is also kept where no Python code can
        miss one (``presses.Deliveries``): a handler preempted before its first line by the
        next signal's never counts its own."""
        if threading.current_thread() is not threading.main_thread():
            return lambda: None

        def handler(signum: int, frame: object) -> None:
            self.presses += 1
            self.stop.halt(signal_name(signum))
            if self.presses == 1 or not self.driving:
                raise KeyboardInterrupt

        counting = self.deliveries.open()
        old: dict[int, Any] = {}
        try:
            for sig in (signal.SIGINT, signal.SIGTERM):
                old[sig] = signal.signal(sig, handler)
        except BaseException:  # a signal before the run began: nothing of it stays
            _put_back_handlers(old, counting)
            raise
        return lambda: _put_back_handlers(old, counting)

    def _twice(self) -> bool:
        """A second Ctrl-C or SIGTERM: counted by the handler, or (a handler preempted by
        the next one before its first line never counts) as the kernel delivered them."""
        return self.presses >= 2 or self.deliveries.count() >= 2

    def _turns(self) -> str | None:
        pool = ThreadPoolExecutor(max_workers=max(1, self.opt.jobs),
                                  thread_name_prefix="leap-run")
        running: dict[Future[None], Step] = {}
        why: str | None = None
        try:
            while True:
                if self.presses and not self.interrupted:  # its KeyboardInterrupt was lost
                    raise KeyboardInterrupt
                why = why or self._over()
                if why is None and self.opt.remote is not None:
                    self._look({s.ball for s in running.values()})
                away = self.reach is not None and self.reach.away  # no step starts till back
                if why is None and not away:
                    for step in self._next_steps(set(s.ball for s in running.values())):
                        if len(running) >= self.opt.jobs:
                            break
                        if step.kind == "score" and self._paying(running.values()):
                            continue  # run.max_usd: the spend is read before each scoring
                        self.busy[step.ball] = step.kind
                        running[pool.submit(self._perform, step)] = step
                # a call that met the outage (a publish, a claim) waits for it as a look
                # does: the next look may not be due yet, and the step is planned again
                unreached = self.reach is not None and bool(self.reach.since)
                if not running and (why is not None or not (self.awaiting or unreached)):
                    return why
                if not running:
                    time.sleep(self.opt.poll)  # workers build: look again in a moment
                    continue
                done, _ = wait(list(running), timeout=0.5, return_when=FIRST_COMPLETED)
                for fut in done:
                    step = running.pop(fut)
                    self.busy.pop(step.ball, None)
                    self._settle(step, fut)
        except KeyboardInterrupt:
            self.stop.halt("interrupted (SIGINT)")
            self.interrupted = True
            why = "interrupted: every builder stops and its round is recorded"
            self.events.emit("stop", reason=why, exit_code=EXIT_INTERRUPTED,
                             hint=f"`leap run {self.slice}` goes on from here")
            _drain(running, self.events, self._twice)
            return why
        finally:
            pool.shutdown(wait=True)

    def _paying(self, running: Iterable[Step]) -> bool:
        """Under ``run.max_usd`` scorings (the jurors' spend) run one at a time: each starts
        only once the last one's spend is recorded and under the cap, so two parallel
        scorings can no longer both start under it. The cap can still be passed by the one
        scoring that starts under it: a convening's price is known only after it."""
        return self.ws.config.run_max_usd is not None and \
            any(s.kind == "score" for s in running)

    def _over(self, then: bool = True) -> str | None:
        """Why no further step starts: time (--max-minutes), money (run.max_usd), or the
        remote out of reach for too long; ``then``: with what goes on from there (a hunt:
        the time budget's stop named nothing), unless the caller names it."""
        if self.reach is not None and self.reach.gave_up:
            again = shlex.quote(self.opt.remote or "")
            return (f"{self.reach.gave_up}; a hold, nothing lost: `leap run {self.slice} "
                    f"--remote {again}` again once it answers")
        if self._deadline is not None and time.monotonic() >= self._deadline:
            why = f"--max-minutes {self.opt.max_minutes:g} reached"
            self.stop.halt(why)  # running builders stop; each running round is recorded as 0
            return f"{why}: a hold, nothing lost" + (
                f"; `leap run {self.slice}` goes on from here" if then else "")
        cap = self.ws.config.run_max_usd
        if cap is None:
            return None
        with self.ws.ledger() as ledger:
            spent = history.spent(ledger.require(), self.slice)
        if spent.usd is None:  # honest outcomes: a cap it cannot hold stops the run
            return (f"run.max_usd is {cap:g} but the slice's juror spend is not fully priced "
                    f"({spent.unmeasured} call(s) without reported usage, or a rung without "
                    "usd_per_mtok_in/out): the cap cannot be held; a hold, nothing lost. "
                    f"Price every rung, or remove run.max_usd, then `leap run {self.slice}` again")
        if spent.usd >= cap:  # the slice's spend, every run's: the same cap stops it again
            return (f"run.max_usd {cap:g} reached: the slice spent {spent.usd:.6f} USD on "
                    "jurors; a hold, nothing lost. Raise run.max_usd in .leap/config.yaml "
                    f"above that, or remove it, then `leap run {self.slice}` again")
        return None

    def _standings(self) -> dict[str, BallStanding]:
        with self.ws.ledger() as ledger:
            view = ledger.require()
            return assess(view, query.load_slice(view, self.slice), self.ws.config.round_cap)

    def _look(self, running: set[str]) -> None:
        """Issue 16: the workers' rounds come home: the remote's ledger (ours replayed on
        it) and each published ball's branch, at most once per ``poll`` seconds. A ball with
        a step of this run in flight is left as it is: a fresh throw resets its branch to
        the base before it publishes it, and the remote's tip of the episode before, seen
        in between, would bring that episode's rounds back onto the new one (its own step
        fetches what it needs)."""
        if time.monotonic() - self._looked < self.opt.poll:
            return
        self._looked = time.monotonic()
        remote = self.opt.remote
        assert remote is not None and self.reach is not None
        try:
            rm.sync_with_balls(self.ws, remote)
            with self.ws.ledger() as ledger:
                rec = query.load_slice(ledger.require(), self.slice)
            tips = rm.ball_tips(self.ws, remote)
            for ball in rec.balls:
                if ball not in running:
                    rm.bring_home(self.ws, remote,
                                  self.ws.config.ball_branch(self.slice, ball), tips)
            # a ball published to the workers whose branch push was lost after its throw
            # record went up (none there, or an earlier episode's): pushed again
            for ball in sorted(self.awaiting - running - self.stopped.keys()):
                try:
                    rm.push_branches(self.ws, remote, self.slice, [ball])
                except RemoteUnavailable:
                    raise
                except LeapError as exc:
                    first = exc.problems[0] if exc.problems else None
                    self._stop(Step("stop", ball, self._standings()[ball].wave,
                                    f"publish: {exc.lines()[0]}", exc.exit_code,
                                    first.hint if first else None))
        except RemoteUnavailable as exc:
            self.reach.lost(exc)  # looked at again in ``poll``; ``_over`` says when to stop
            return
        self.reach.back()

    def _next_steps(self, running: set[str]) -> list[Step]:
        out: list[Step] = []
        self.awaiting = set()
        with self.ws.ledger() as ledger:
            view = ledger.require()
            rec = query.load_slice(view, self.slice)
            standings = assess(view, rec, self.ws.config.round_cap)
            for ball, s in standings.items():
                if ball in running or ball in self.stopped or \
                        time.monotonic() < self.not_before.get(ball, 0.0):
                    continue
                step = next_step(view, self.slice, s, self.ws.config.round_cap,
                                 bool(self.ws.config.red_command), self.opt.resume_holds)
                if step.kind == "finding_red" and (ball, step.score) in self.declined:
                    # the author found no finding it could test: the builder answers them
                    step = next_step(view, self.slice, s, self.ws.config.round_cap, False,
                                     self.opt.resume_holds)
                if step.kind == "stop" and s.verdict in ("blocked", "held") \
                        and s.by not in self.stopped:
                    continue  # L5: its ancestor is still at work; it waits, it is not stopped
                if step.kind == "build" and s.episode is not None and \
                        s.episode.throw.published:
                    self.awaiting.add(ball)  # a worker builds it (`leap worker`)
                    continue
                if step.kind == "stop":
                    self._stop(step)
                elif step.kind not in ("done", "wait"):
                    out.append(step)
        return out

    def _stop(self, step: Step, problems: list[dict[str, str]] | None = None,
              rule: str | None = None) -> None:
        """``problems``: each of an error's problems, when it has several; ``rule``: the
        first's rule id, in its own field as every stop carries it (``stop_fields``)."""
        self.stopped[step.ball] = step
        self.events.emit("stop", step.ball, step.wave, reason=step.reason, hint=step.hint,
                         exit_code=step.exit_code, escalated=step.escalated or None,
                         details=list(step.details) or None, problems=problems, rule=rule)

    def _settle(self, step: Step, fut: Future[None]) -> None:
        exc = fut.exception()
        if exc is None:
            if self.reach is not None:
                self.reach.back("step")
            return
        if isinstance(exc, RemoteUnavailable) and self.reach is not None:
            self.reach.lost(exc, "step")  # planned again; ``_over`` says when to stop
            self.not_before[step.ball] = time.monotonic() + self.opt.poll  # not at once
            return
        if isinstance(exc, LeapError):
            said = stop_fields(exc, f"{step.kind}: ")
            rule = said["rule"]
            self._stop(step._replace(kind="stop", exit_code=exc.exit_code, hint=said["hint"],
                                     reason=said["reason"] + (f" [{rule}]" if rule else ""),
                                     details=tuple(exc.detail_lines()[-12:])),
                       said.get("problems"), rule)
            return
        raise exc

    # -- one step of one ball ---------------------------------------------------------
    def _perform(self, step: Step) -> None:
        getattr(self, f"_do_{step.kind}")(step)

    def _do_red(self, step: Step) -> None:
        self.events.emit("red", step.ball, step.wave, step="author", detail=step.reason)
        done = author_red(self.ws, self.slice, step.ball, lambda line: self.events.emit(
            "log", step.ball, step.wave, line=line), self.stop)
        r = done.red.record
        self.events.emit("red", step.ball, step.wave, step="recorded", red=r.red,
                         commit=r.commit[:12], frozen=[t.path for t in r.tests],
                         seconds=round(done.seconds, 2))

    def _do_finding_red(self, step: Step) -> None:
        self.events.emit("red", step.ball, step.wave, step="findings", detail=step.reason)
        done = author_finding_red(self.ws, self.slice, step.ball, lambda line: self.events.emit(
            "log", step.ball, step.wave, line=line), self.stop)
        if done is None:
            self.declined.add((step.ball, step.score))
            self.events.emit("red", step.ball, step.wave, step="declined",
                             detail="the test author added no test: the builder gets the "
                                    "findings as they are")
            return
        r = done.red.record
        self.events.emit("red", step.ball, step.wave, step="recorded", red=r.red,
                         commit=r.commit[:12], frozen=[t.path for t in r.tests],
                         answers=r.answers, seconds=round(done.seconds, 2))
        self._advance(step.ball)

    def _published(self, ball: str) -> bool:
        """Whether the ball's current episode was thrown to workers (L9)."""
        with self.ws.ledger() as ledger:
            return current_episode(ledger.require(), self.slice, ball).throw.published

    def _advance(self, ball: str) -> None:
        """T7.6: the ball's branch stands on its latest finding red before the next round
        (also after a run killed between that red's record and this move)."""
        red = pending(self.ws, self.slice, ball)
        if red is None:
            return
        with self.ws.ledger() as ledger:
            thrown = current_episode(ledger.require(), self.slice, ball).throw
        if thrown.published and self.opt.remote is not None:
            self._advance_remote(thrown.branch, red.commit)
            return
        advance(self.ws, red, Path(thrown.worktree or ""))

    def _advance_remote(self, branch: str, red: str) -> None:
        """T7.6 on a published ball: its branch on the remote moves onto the finding red (no
        round: the server lets the thrower push a red the ledger it stores records)."""
        assert self.opt.remote is not None
        syncing.sync(self.opt.remote, start=self.ws.paths.root)  # the red's record first
        # the remote's first: a push cut off leaves the branch here as it was, and the step
        # is planned again (``_settle``)
        rm.push_branch(self.ws, self.opt.remote, branch, red, force=False)
        here = git.rev_parse(f"refs/heads/{branch}", self.ws.paths.root)
        if here != red:
            git.run(["update-ref", f"refs/heads/{branch}", red, here or ""],
                    self.ws.paths.root)

    def _do_throw(self, step: Step, resume: bool = False) -> None:
        remote = self.opt.remote
        try:
            result = throw(self.ws, self.slice, [step.ball], resume, run=remote is None,
                           publish=remote is not None, remote=remote)
        except RedToCarry:  # L5: a restack; its red goes onto the fresh stack first

            r = carry_red(self.ws, self.slice, step.ball).record
            self.events.emit("red", step.ball, step.wave, step="carried", red=r.red,
                             commit=r.commit[:12], carries=r.carries,
                             frozen=[t.path for t in r.tests])
            result = throw(self.ws, self.slice, [step.ball], resume, run=remote is None,
                           publish=remote is not None, remote=remote)
        except RedBehind:  # the spine moved since its red: the author writes it again there
            if not self.ws.config.red_command:
                raise
            self._do_red(step._replace(reason="the spine moved since its red: the test "
                                       "author writes it again where the throw starts"))
            result = throw(self.ws, self.slice, [step.ball], resume, run=remote is None,
                           publish=remote is not None, remote=remote)
        for skipped in result.skipped:
            raise skipped.error
        for t in result.thrown:  # recorded: said before its publish, which may be cut off
            self.events.emit("throw", step.ball, step.wave, episode=t.record.episode,
                             base=t.record.base[:12], resumed=resume or None,
                             detail=step.reason)
            for line in t.repairs():
                self.events.emit("log", step.ball, step.wave, line=line)
        if remote is not None:  # cut off, it is published again by a later look

            rm.publish(self.ws, remote, self.slice, [step.ball])

    def _do_resume(self, step: Step) -> None:
        self._do_throw(step, resume=True)

    def _do_build(self, step: Step) -> None:
        self._advance(step.ball)
        self._left_builder(step)
        before = self._rounds(step.ball)
        progress = EventProgress(self.events, self.slice, [(step.ball, step.wave)],
                                 self.ws.config.round_cap)
        done = run_balls(self.ws, self.slice, [(step.ball, step.wave)], 1, progress,
                         heartbeat=self.opt.heartbeat or float("inf"),  # 0: no heartbeat
                         stop=self.stop, watch=self.watch)
        ran = done.balls[0]
        if ran.error is not None:
            if isinstance(ran.error, EpisodeEnded):  # said by its round event: the ball's
                return  # standing says what comes next (a score, a resume, a stop)
            raise ran.error
        if ran.stuck:  # the receipt's evidence says how; its episode ended at 0
            raise Hold("its builder failed the same way twice in a row: the episode ended at "
                       f"0 (receipt {ran.last.round if ran.last else '-'} says how)",
                       rule="L6", hint=f"fix builder.command, then `leap run {self.slice} "
                       "--resume-holds` goes on in a new episode")
        if self._rounds(step.ball) == before and not self.stop.is_set():
            self.idle_builds[step.ball] = self.idle_builds.get(step.ball, 0) + 1
            if self.idle_builds[step.ball] >= 2:
                raise Hold("its builder ran twice without recording a round", rule="L6")

    def _left_builder(self, step: Step) -> None:
        """L3: a builder a killed run left in the ball's worktree (in a session of its own)
        still holds the ball: waited for, as a person would, at most builder.timeout; its
        round is then closed as any killed run's (``carry.close_killed_round``)."""
        with self.ws.ledger() as ledger:
            view = ledger.require()
            eps = query.episodes(view, self.slice, step.ball)
            t = query.throw(view, self.slice, step.ball, eps[-1]) if eps else None
        admin = admin_dir(self.ws.paths.common_dir, place.worktree_of(self.ws, t)) \
            if t is not None else None
        if admin is None:
            return
        timeout = self.ws.config.builder_timeout
        began = time.monotonic()
        said = False
        while drivelock.left_running(admin / "leap") and not self.stop.is_set() \
                and time.monotonic() < began + timeout:
            if not said:
                self.events.emit("log", step.ball, step.wave, line="a builder a killed run "
                                 "left still runs in the ball's worktree: waiting for it to "
                                 f"end (at most builder.timeout, {timeout:g} s), then its "
                                 "round is recorded (L3, L6)")
                said = True
            time.sleep(0.2)
        if said and not drivelock.left_running(admin / "leap"):
            self.events.emit("log", step.ball, step.wave, line="the builder a killed run left "
                             f"ended after {time.monotonic() - began:.0f} s: its round is "
                             "recorded now")

    def _round_landed(self, ball: str, tip: str | None, there: str | None) -> bool:
        """Whether the remote's copy of a published ball's branch holds the commit of its
        last receipt. Another pusher in the worker's clone (a `leap sync`, a second worker)
        can carry the receipt up before the worker's own push brings the commit (a blind
        review: the score then read the branch without the round and stopped the ball, exit
        1): the score waits for the commit, as it waits for any round."""
        with self.ws.ledger() as ledger:
            ep = current_episode(ledger.require(), self.slice, ball)
        last = ep.receipts[-1].commit if ep.receipts else None

        def holds(commit: str | None) -> bool:
            return commit is not None and last is not None and (
                commit == last or git.is_ancestor(self.ws.paths.root, last, commit))

        if last is None or holds(tip):
            return True
        why = (f"is on {self.opt.remote}, but the branch here could not move to it (another "
               "git holds it)") if holds(there) else f"has not reached {self.opt.remote} yet"
        if (ball, why) not in self._waited:
            self._waited.add((ball, why))
            self.events.emit("log", ball, line=f"round {len(ep.receipts)}'s commit "
                             f"{last[:12]} {why}: its score waits for it")
        time.sleep(self.opt.poll)
        return False

    def _do_score(self, step: Step) -> None:
        # a worker's round: its branch as the remote has it. A round of an episode thrown
        # here (a plain `leap run` stopped, then run with --remote) is on this clone's
        # branch alone, which no worker pushes: it was waited for forever (a chaos hunt)
        if self.opt.remote is not None and self._published(step.ball):

            rm.fetch_balls(self.ws, self.opt.remote)
            branch = self.ws.config.ball_branch(self.slice, step.ball)
            here = rm.bring_home(self.ws, self.opt.remote, branch)
            if not self._round_landed(step.ball, here, rm.remote_tip(self.ws, self.opt.remote,
                                                                      branch)):
                return

        for sitting in (1, 2):  # T6: a tribunal that gave no verdict sits once more
            self.events.emit("score", step.ball, step.wave, step="convening",
                             detail=step.reason if sitting == 1 else "the tribunal gave no "
                             "verdict: it sits again (T6)")
            scored = score(self.ws, self.slice, step.ball, None,
                           lambda line: self.events.emit("log", step.ball, line=line))
            r = scored.record
            self.events.emit("score", step.ball, step.wave, step=f"score {r.score}",
                             outcome=OUTCOME[r.outcome], rule=r.rule, run=r.run_id,
                             candidate=r.candidate[:12],
                             usage=r.usage.to_dict() if r.usage is not None else None,
                             detail=r.reason)
            if not no_verdict(r):
                break
        else:
            # no round of the builder's can answer a missing verdict, and rounds spent on it
            # would read as findings that stopped falling (T9): the claim waits for the
            # jurors (`leap run` again seats them again first: ``steps._unjudged``)
            raise Hold(f"score {r.score} held: the tribunal gave no verdict ({r.reason})",
                       rule="T6", hint="bring its rungs back (`leap tribunal rungs --probe` "
                       f"shows which answer), then `leap run {self.slice}` seats the tribunal "
                       "again on the same claim")
        self._findings(step)

    def _findings(self, step: Step) -> None:
        with self.ws.ledger() as ledger:
            found = findings_to_answer(ledger.require(), self.slice, step.ball)
        if found is None:
            return
        self.events.emit("findings", step.ball, step.wave, run=found.run_id,
                         round=found.round, open=len(found.findings),
                         unsupported=len(found.unsupported), resolved=len(found.resolved),
                         findings=[{k: f.get(k) for k in ("lens", "severity", "file",
                                                          "claim", "status")}
                                   for f in found.findings],
                         detail="the builder's next round answers them (T7.6)")

    def _rounds(self, ball: str) -> int:
        with self.ws.ledger() as ledger:
            view = ledger.require()
            eps = query.episodes(view, self.slice, ball)
            return sum(len(query.receipts(view, self.slice, ball, e)) for e in eps)

    # -- the spine ----------------------------------------------------------------------
    def _land(self, end: RunEnd) -> bool:
        """Merge the slice and prove it live. True when the aggregate review refused it and
        sent its findings back to the builders of the balls they name (L8, T7.6): the run
        goes on with their next rounds."""
        self.busy["slice"] = "merge"
        try:
            merged = self._merge(merge)
        except LeapError as exc:
            if isinstance(exc, AggregateRefused) and exc.blamed:
                self.events.emit("findings", step="aggregate", run=exc.run_id,
                                 balls=list(exc.blamed), detail=exc.lines()[0])
                return True
            # in a run, the merge goes on by the run, which proves the landed slice live
            # too (a hint hunt: `leap merge S` again landed it, and no proof ran)
            merge_again, run_again = f"`leap merge {self.slice}`", f"`leap run {self.slice}`"
            exc.problems = tuple(p._replace(hint=p.hint.replace(merge_again, run_again))
                                 if p.hint else p for p in exc.problems)
            end.stopped = f"merge: {exc.lines()[0]}"
            end.exit_code = exc.exit_code
            self.events.emit("stop", **stop_fields(exc, "merge: "))
            return False
        finally:
            self.busy.pop("slice", None)
        rec = merged.record
        end.merged_tip, end.merge_number = rec.tip, rec.number
        step = "merged" if not merged.already else \
            "published" if merged.published else "already merged"
        pub = merged.published
        self.events.emit("merge", step=step, lease=pub.lease if pub else None,
                         released=pub.released if pub else None,
                         hint=f"`leap sync {merged.remote}` gives the lease back there"
                         if pub and not pub.released else None,
                         tip=rec.tip[:12], spine=rec.spine, remote=merged.remote,
                         balls=[m.ball for m in rec.merges])
        self.busy["slice"] = "live proof"
        try:
            end.live = prove_live(self.ws, self.slice)
        finally:
            self.busy.pop("slice", None)
        live = end.live.record
        failed = live is not None and live.outcome == -1
        if failed:
            end.stopped = "the landed slice fails its live proof (T9)"
        self.events.emit("live_proof", outcome=None if live is None else OUTCOME[live.outcome],
                         step="not declared" if live is None else
                         ("ran" if end.live.ran else "recorded already"),
                         exit_code=None if live is None else live.exit_code,
                         attempt=None if live is None or live.attempt == 1 else live.attempt,
                         tip=None if live is None else live.tip[:12],
                         hint=failed_hint(self.slice) if failed else None,
                         details=live.output_tail.splitlines()[-8:] if failed and live
                         else None)
        self._share()
        return False

    def _merge(self, merge: Callable[..., MergeResult]) -> MergeResult:
        """`leap merge`, waiting while another integrator holds the spine's lease, or another
        merge of this clone runs (L9: one at a time; a slice run beside this one merges
        first): a look every ``poll`` seconds, at most ``LEASE_PATIENCE`` seconds for one
        holder, and never past --max-minutes or the spend cap."""
        waited: tuple[str, float] | None = None  # (what it waits for, since when)
        while True:
            try:
                merged = merge(self.ws, self.slice, self.opt.holder,
                               echo=lambda line: self.events.emit("log", line=line),
                               taken_over=self.lease.took_over if self.lease else None)
                if self.reach is not None:
                    self.reach.back("merge")
                return merged
            except RemoteUnavailable as exc:
                if self.reach is None:
                    raise
                self.reach.lost(exc, "merge")
                over = self._over()
                if over is not None:
                    raise Hold(over, rule="L9") from None
                time.sleep(self.opt.poll)
                continue
            except (LeaseHeld, MergeBusy) as exc:
                what = (f"lease {exc.lease.number}" if isinstance(exc, LeaseHeld) else
                        "this clone's other merge")
                if waited is None or waited[0] != what:
                    waited = (what, time.monotonic())
                    self.events.emit("merge", step=f"waits for {what}",
                                     holder=exc.lease.holder if isinstance(exc, LeaseHeld)
                                     else None, detail=exc.lines()[0])
                over = self._over(then=False)
                if over is not None:  # time or money, not the holder, ends the wait
                    raise Hold(f"{over}; the merge waited for {what}", rule="L9",
                               hint=f"`leap run {self.slice}` again") from None
                if time.monotonic() - waited[1] > LEASE_PATIENCE:
                    raise
                time.sleep(self.opt.poll)

    def _share(self) -> None:
        remote = spine_remote(self.ws.paths.root, self.ws.config.spine)
        if remote is None:
            return
        try:
            syncing.sync(remote, start=self.ws.paths.root)
        except LeapError as exc:
            self.events.emit("log", line=f"warning: the ledger did not reach {remote}: "
                                         f"{exc.lines()[0]}; `leap sync {remote}` carries it")

    # -- the end ------------------------------------------------------------------------
    def _ends(self, standings: dict[str, BallStanding]) -> list[BallEnd]:
        out = []
        with self.ws.ledger() as ledger:
            view = ledger.require()
            for ball, s in standings.items():
                ep = s.episode
                last = history.scores(view, self.slice, ball)[-1] \
                    if history.has(view, self.slice, ball, "scores") else None
                shown = None if last is None else f"{last.score}: {OUTCOME[last.outcome]}"
                rounds = len(ep.receipts) if ep else 0
                number = ep.throw.episode if ep else 0
                stop = self.stopped.get(ball)
                spend = history.ball_spent(view, self.slice, ball).to_dict()
                if s.verdict == "passed":
                    out.append(BallEnd(ball, s.wave, "passed", "", EXIT_OK, None, rounds,
                                       number, shown, spend))
                elif stop is not None:
                    out.append(BallEnd(ball, s.wave, "stopped", stop.reason, stop.exit_code,
                                       stop.hint, rounds, number, shown, spend))
                else:
                    out.append(BallEnd(ball, s.wave, "waiting", s.why(), EXIT_HOLD, None,
                                       rounds, number, shown, spend))
        return out

    def _exit_code(self, end: RunEnd) -> int:
        if self.interrupted:
            return EXIT_INTERRUPTED
        if end.live is not None and end.live.record is not None and \
                end.live.record.outcome == -1:
            return EXIT_RULE
        if end.merged_tip is not None:
            return EXIT_OK
        if end.exit_code not in (EXIT_OK,):
            return end.exit_code
        codes = [b.exit_code for b in end.balls if b.state != "passed"]
        for code in (EXIT_RULE, EXIT_INPUT):  # a refuse, then bad input, outrank a hold
            if code in codes:
                return code
        return EXIT_HOLD if codes or end.stopped else EXIT_OK

    def _table(self, end: RunEnd) -> None:
        rows: list[dict[str, Any]] = [
            {"ball": b.ball, "wave": b.wave, "state": b.state, "episode": b.episode,
             "rounds": b.rounds, "score": b.score, "reason": b.reason or None,
             "hint": b.hint, "usage": b.usage} for b in end.balls]

        live = end.live.record if end.live is not None else None
        self.events.emit("table", balls=rows, outcome=end.outcome, usage=end.usage,
                         hint=failed_hint(self.slice) if live is not None
                         and live.outcome == -1 else None,
                         tip=end.merged_tip[:12] if end.merged_tip else None,
                         stopped=end.stopped)
        self.events.emit("end", outcome=end.outcome, exit_code=end.exit_code)

    def _typed(self, remote: str | None) -> list[str]:
        """This run's command line as a hint names it (its slice and the options that
        change what it does), with ``remote`` as its --remote."""
        return [self.slice, *self.opt.given(remote, budget=True),
                *(["--take-over"] if self.opt.take_over else [])]

    def _require_unpublished(self) -> None:
        """L3: a slice with a ball published to workers runs with their remote (a hunt: a
        plain `leap run S`, as another clone's merge named it, waited for the workers'
        rounds for good, silently, and built the slice's other balls a second time)."""
        with self.ws.ledger() as ledger:
            view = ledger.require()
            for ball in query.load_slice(view, self.slice).balls:
                episodes = query.episodes(view, self.slice, ball)
                thrown = query.throw(view, self.slice, ball, episodes[-1]) if episodes \
                    else None
                if thrown is not None and thrown.published:
                    given = self._typed(shared_remote(self.ws, self.slice, ball,
                                                      self.ws.config.spine))
                    raise UsageError(
                        f"{self.slice}/{ball} is published to workers, whose rounds are on "
                        "the shared remote: a run of the slice goes with it", field="--remote",
                        rule="L3", hint=f"`leap run {shlex.join(given)}`")

    def _preflight(self) -> None:
        """What would stop every ball: refused before anything is thrown."""
        cfg = self.ws.config
        again = f"`leap run {shlex.join(self._typed(self.opt.remote))}` again"
        if self.opt.remote is None:  # with a remote, the workers' builders build
            require_program(cfg.builder_command, self.ws.paths.root, cfg.builder_preset,
                            config_root=self.ws.main_top, then=again)
        declared_builder(self.ws, None, then=again)
        if not cfg.tribunal.rungs:
            raise UsageError("no rungs are configured, so no juror can sit",
                             file=".leap/config.yaml", field="tribunal.rungs", rule="T2")
        check_author(self.ws, again)

        tracked = spine.spine_remote(self.ws.paths.root, cfg.spine)
        if self.opt.remote is not None and tracked is not None and tracked != self.opt.remote:
            # L9: one shared remote: its merges would land on the spine's, its ledger and
            # builds on --remote's (a walk-away hunt: `--remote` with no hook published
            # there, and the merge, the spine and the slice's records went to origin)
            q = shlex.quote
            raise UsageError(
                f"the spine {cfg.spine} tracks {tracked}, so the merge would land there, while "
                f"the ledger and the workers' builds would be on {self.opt.remote}: a run "
                "shares one remote", field="--remote", rule="L9",
                hint=f"`leap run {shlex.join(self._typed(tracked))}`, or make {cfg.spine} "
                     f"track {self.opt.remote}'s first (`git config "
                     f"{q(f'branch.{cfg.spine}.remote')} {q(self.opt.remote)}`), then {again}")
        if self.opt.remote is None:
            self._require_unpublished()
        remote = tracked or self.opt.remote
        if remote is not None:
            spine.require_round_cap_of_server(self.ws.paths.root, cfg.spine, cfg, remote)

        # L8, L9: no red, build or scoring is paid for on a spine no merge can push
        spine.require_shared_spine(self.ws, again, self.opt.remote)  # tracking no remote
        require_spine_pushable(self.ws, again)
        with self.ws.ledger() as ledger:
            view = ledger.require()
            query.load_slice(view, self.slice)  # an unknown slice is bad input
            query.require_not_abandoned(view, self.slice, "its balls are thrown no more")


def _until_done(restore: Callable[[], object]) -> None:
    """``restore`` again until it ran through (it may run twice): a signal landing as it
    starts, before its own ``try``, left the run's handlers and its wakeup fd in place (a
    reversibility review; in-process tests run many runs in one process). What a handler
    raised meanwhile is raised once it is done."""
    first: BaseException | None = None
    for _ in range(_RESTORE_TRIES):
        try:
            restore()
            break
        except BaseException as exc:  # noqa: BLE001 -- a press after the run: kept
            first = first or exc
    if first is not None:
        raise first


_RESTORE_TRIES = 64  # each failed try ran a handler that raised: a storm, no more


def _put_back_handlers(old: dict[int, Any], counting: Callable[[], None]) -> None:
    """The handlers a run replaced, back; and its count of deliveries ended, whatever a
    signal landing meanwhile raises (one left open kept the wakeup fd on a dead run's pipe,
    and in-process tests run many runs in one process)."""
    try:
        for sig, h in old.items():
            signal.signal(sig, h)
    finally:
        counting()


def _drain(running: dict[Future[None], Step], events: Events,
           twice: Callable[[], bool]) -> None:
    """After Ctrl-C: every builder records its round, then the run ends. A second Ctrl-C
    (``twice``) never leaves a round half-recorded; when only scorings, reds or the merge
    are at work, it ends the run at once: a convening stopped before its summary never
    happened (T2), a red or score not yet written is asked again by the next run (L8)."""
    while running:
        done, _ = wait(list(running), timeout=0.1)
        for fut in done:
            running.pop(fut)
        if running and twice() and not any(s.kind == "build" for s in running.values()):
            break
    if twice():  # now: no waiting for a stopped convening's seats to hang up either
        procs.end_groups()  # nor leaving them (a CLI juror), a test run or an author at work
        events.emit("end", outcome="interrupted", exit_code=EXIT_INTERRUPTED)
        os._exit(EXIT_INTERRUPTED)
