"""`leap worker --remote R`: build published balls from the shared remote (issue 16, L9).

A worker keeps no state of its own: each turn it fetches the remote's ledger and ball
branches, picks a published episode that is still being built and that no live claim holds,
and claims it by a record the remote's compare-and-swap decides (a loser picks another).
It builds in its own worktree from the ball branch as the remote has it, one round at a
time (``worktrees.run``), and pushes each round's commit with its receipt in one atomic
push. While it builds, a thread renews the claim's lease; when the ball's rounds stop (a
claim for the scorer, a refuse, a checkpoint, Ctrl-C) it gives the claim back. A worker
killed outright leaves its claim to run out (``workers.claim_seconds``); then another
worker takes the ball over from the branch's tip, and the rounds already pushed count.

The worker never scores: the thrower does (the builder never grades itself).
"""

from __future__ import annotations

import hashlib
import io
import os
import shlex
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from leapgit import git, procs
from leapgit.errors import (
    EXIT_HOLD,
    EXIT_INPUT,
    EXIT_OK,
    EXIT_RULE,
    Hold,
    LeapError,
    LedgerConflict,
    RuleViolation,
    UsageError,
)
from leapgit.git import RemoteUnavailable
from leapgit.ledger import layout, query
from leapgit.ledger import sync as syncing
from leapgit.ledger.sync import drop_local, push_records
from leapgit.ledger.workspace import Workspace
from leapgit.loop import remote as rm
from leapgit.records import yamlio
from leapgit.records.claims import ClaimRecord
from leapgit.records.trailers import BALL, SLICE
from leapgit.rules.claims import LEASE_PAST, LEASE_TOO_LONG, Claim, claims, live_claim
from leapgit.rules.episodes import current_episode, unscored_claim
from leapgit.rules.readiness import assess
from leapgit.timeutil import epoch_of, iso_at, now_iso
from leapgit.worktrees import drivelock
from leapgit.worktrees.builder import Stop
from leapgit.worktrees.closeround import RoundClosed, admin_dir
from leapgit.worktrees.place import target
from leapgit.worktrees.progress import Progress
from leapgit.worktrees.rounds import WORKER_ENV
from leapgit.worktrees.run import run_balls, sigterm_as_interrupt


@dataclass(frozen=True)
class Options:
    remote: str
    name: str
    slice: str | None = None
    jobs: int = 1
    once: bool = False
    poll: float = 1.0  # seconds between looks at the remote when nothing is free

    def again(self) -> str:
        """This worker's command with every option it was given, shell-quoted: a hint that
        names it runs this worker again, not another one (a hint hunt: --slice and --once
        were dropped, and the worker so started built every published ball)."""
        words = ["leap", "worker", "--remote", self.remote, "--name", self.name]
        words += ["--slice", self.slice] if self.slice else []
        words += ["--jobs", str(self.jobs)] if self.jobs != 1 else []
        words += ["--once"] if self.once else []
        words += ["--poll", f"{self.poll:g}"] if self.poll != 1.0 else []
        return shlex.join(words)


@dataclass(frozen=True)
class Open:
    """A published episode a worker may claim now."""

    slice: str
    ball: str
    wave: int
    episode: int
    claims: int  # claims the episode holds so far
    own: Claim | None = None  # a live claim of this worker's name a killed run of it left


@dataclass
class Built:
    slice: str
    ball: str
    episode: int
    claim: int
    rounds: list[int] = field(default_factory=list)
    error: str | None = None
    interrupted: bool = False


@dataclass
class WorkerEnd:
    built: list[Built] = field(default_factory=list)
    interrupted: bool = False
    stopped: str | None = None  # an error that stopped the worker (the remote gone ...)
    held: bool = False  # that error was a hold (the remote out of reach too long)
    bad_input: bool = False  # that error was bad input (a --slice the ledger does not have)

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return 130
        if self.stopped is not None:
            return EXIT_HOLD if self.held else EXIT_INPUT if self.bad_input else EXIT_RULE
        return EXIT_HOLD if any(b.error for b in self.built) else EXIT_OK


def default_name() -> str:
    return f"{socket.gethostname().split('.')[0]}-{os.getpid()}"


class Worker:
    def __init__(self, ws: Workspace, options: Options, echo: Callable[[str], None]) -> None:
        self.ws, self.opt, self.echo = ws, options, echo
        self.stop = Stop()
        # the local ledger's sync and a round's push, one at a time (claims go up on their
        # own: the remote's compare-and-swap orders them, and a renewal never waits here)
        self._push = threading.Lock()
        self.skip: set[tuple[str, str, int]] = set()  # balls this clone cannot build
        self.said_left: set[tuple[str, str]] = set()  # balls a left builder holds, said once
        self.leases: dict[tuple[str, str], float] = {}  # when each held claim runs out
        self.renewals: dict[tuple[str, str], int] = {}  # renewals of each held claim
        self.held: dict[tuple[str, str], int] = {}  # the claim this worker holds on a ball
        self.lapsed: set[tuple[str, str, int]] = set()  # own claims not taken up in time
        self._renewing = threading.Lock()
        self.claim_seconds = ws.config.claim_seconds
        self._past = 0  # claims refused in a row for a lease run out by the server's clock

    # -- the loop ----------------------------------------------------------------------
    def serve(self) -> WorkerEnd:
        os.environ[WORKER_ENV] = self.opt.name  # the receipts name the claim's holder (L9)
        end = WorkerEnd()
        restore = sigterm_as_interrupt(self.stop)
        pool = ThreadPoolExecutor(max_workers=max(1, self.opt.jobs),
                                  thread_name_prefix="leap-worker")
        running: dict[Future[Built], tuple[str, str]] = {}
        taken = 0
        reach = rm.Reach(self.opt.remote, self.opt.poll, self.echo)  # a look may go unanswered
        adopted = False
        idle = False  # said that it waits for a ball to build
        try:
            while True:
                if (self.opt.once and taken) or len(running) >= self.opt.jobs:
                    free: list[Open] = []  # no room for another ball: no look at the remote
                else:
                    try:
                        if not adopted:
                            rm.adopt_ledger(self.ws, self.opt.remote)
                            adopted = True
                        free, busy = self._look()
                    except RemoteUnavailable as exc:  # looked at again after ``poll``
                        self._away(reach, exc)
                        free, busy = [], True
                    else:
                        reach.back()
                    if not free and not busy and not running:
                        return end  # nothing thrown is left to build
                    if free or running:
                        idle = False
                    elif not idle:  # said once a wait, so a silent worker is never a stuck one
                        idle = True
                        self.echo(f"waiting: no ball on {self.opt.remote} is free to build yet "
                                  "(the thrower's `leap run SLICE --remote "
                                  f"{self.opt.remote}` publishes them); looking every "
                                  f"{self.opt.poll:g} s")
                for found in free:
                    if len(running) >= self.opt.jobs or (self.opt.once and taken):
                        break
                    if (found.slice, found.ball) in running.values():
                        continue
                    try:
                        number = self._claim(found)
                    except RemoteUnavailable as exc:  # looked at again after ``poll``
                        self._away(reach, exc, "claim")
                        break
                    reach.back("claim")
                    if number is None:
                        continue
                    taken += 1
                    running[pool.submit(self._build, found, number)] = (found.slice,
                                                                        found.ball)
                if not running and self.opt.once and taken:
                    return end
                if not running:
                    time.sleep(self.opt.poll)
                    continue
                done, _ = wait(list(running), timeout=self.opt.poll,
                               return_when=FIRST_COMPLETED)
                for fut in done:
                    running.pop(fut)
                    end.built.append(fut.result())
        except KeyboardInterrupt:
            end.interrupted = True
            self.stop.halt("interrupted (SIGINT)")  # or SIGTERM, which said so first
            # each running round is recorded as 0, pushed, and released
            self.echo("interrupted: each running round is recorded as 0 and its claim "
                      "given back")
            while running:
                try:
                    done, _ = wait(list(running), timeout=0.2)
                    for fut in done:
                        running.pop(fut)
                        end.built.append(fut.result())
                except KeyboardInterrupt:
                    continue
            return end
        except LeapError as exc:
            end.stopped, end.held = exc.lines()[0], exc.exit_code == EXIT_HOLD
            end.bad_input = isinstance(exc, UsageError)
            self.stop.halt(f"the worker stopped ({exc.lines()[0]})")
            self.echo(f"stopped: {end.stopped}")
            for fut in list(running):
                end.built.append(fut.result())
            return end
        finally:
            pool.shutdown(wait=True)
            restore()

    def _away(self, reach: rm.Reach, exc: RemoteUnavailable, kind: str = "look") -> None:
        """The remote did not answer a look or a claim: said once, looked at again after
        ``poll``; past ``remote.REMOTE_PATIENCE`` the worker stops (a hold)."""
        gave_up = reach.lost(exc, kind)
        if gave_up is not None:
            raise Hold(f"{gave_up}; nothing lost", rule="L9",
                       hint=f"`{self.opt.again()}` again once it answers") from None

    def _look(self) -> tuple[list[Open], bool]:
        """(the published episodes free to claim, whether any ball is still to be built)."""
        with self._push:
            try:
                # fetch only: a round's receipt goes up with its commit (``_push_round``)
                rm.sync_with_balls(self.ws, self.opt.remote, push=False)
            except (RuleViolation, LedgerConflict) as exc:
                self._drop_refused(exc)  # the ball branches came with the fetch (if their
                # own fetch failed, the next look raises it: the refusal goes first)
        free: list[Open] = []
        busy = False
        now = time.time()
        with self.ws.ledger() as ledger:
            view = ledger.require()
            ids = [self.opt.slice] if self.opt.slice else query.slice_ids(view)
            for sid in ids:
                if not query.open_slice(view, sid):
                    continue
                rec = query.load_slice(view, sid)
                for ball, s in assess(view, rec, self.ws.config.round_cap).items():
                    if s.verdict in ("ready", "waiting") or (s.stuck and s.episode is not None
                                                             and s.spec_version >
                                                             s.episode.throw.spec_version):
                        busy = True  # the thrower throws it next (respecced: a new episode)
                    if s.verdict != "in-flight" or s.episode is None:
                        continue
                    busy = True
                    ep = current_episode(view, sid, ball)
                    t = ep.throw
                    if not t.published or ep.closed or ep.spent(self.ws.config.round_cap):
                        continue
                    if unscored_claim(view, ep) is not None:
                        continue  # its last round claims a pass: the scorer's turn
                    # a builder a killed worker of this clone left is said first: its own
                    # claim is live still, and the restarted worker said nothing till it ran
                    # out (a walk-away hunt)
                    if self._left_here(sid, ball) or (sid, ball, t.episode) in self.skip:
                        continue
                    live = live_claim(view, sid, ball, t.episode, now)
                    if live is not None and not self._own_left(live, sid, ball):
                        continue
                    if rm.remote_tip(self.ws, self.opt.remote, t.branch) is None:
                        continue  # its branch is not on the remote yet
                    free.append(Open(sid, ball, s.wave, t.episode,
                                     len(claims(view, sid, ball, t.episode)), live))
        return sorted(free, key=self._order), busy

    def _left_here(self, slice_id: str, ball: str) -> bool:
        """L3: a builder that a killed worker of this clone left still runs in the ball's
        worktree here (in a session of its own). Claimed now, the build would stop on it at
        once and give the claim back, every turn (a blind review: 89 take and release pairs
        in 150 s on the shared ledger): the ball is left to other workers till it ends."""
        path = target(self.ws, slice_id, ball)
        admin = admin_dir(self.ws.paths.common_dir, path) if path.exists() else None
        if admin is None or not drivelock.left_running(admin / "leap"):
            return False
        if (slice_id, ball) not in self.said_left:
            self.said_left.add((slice_id, ball))
            self.echo(f"{slice_id}/{ball}: a builder a killed worker left still runs in "
                      f"{path}: not claimed here till it ends")
        return True

    def _own_left(self, live: Claim, slice_id: str, ball: str) -> bool:
        """L9: ``live`` is this worker's own claim, which a killed run of it under the same
        name left in this clone (its worktree here, no driver or builder in it now): taken
        up again at once, not waited out till its lease runs out and built again under a
        new claim (a walk-away hunt). The server takes its rounds: their holder is this
        name. Only a claim this clone's mark says a process now gone took (``_mark``): a
        name is no machine (a blind review: two machines' workers named alike, and one
        took the other's live claim up: two builders on one ball)."""
        if live.holder != self.opt.name or (slice_id, ball) in self.held or \
                (slice_id, ball, live.number) in self.lapsed or \
                live.take is None or live.take.key != self._key():
            return False
        if not self._left_by_the_dead(slice_id, ball, live.take.episode, live.number):
            return False
        path = target(self.ws, slice_id, ball)
        admin = admin_dir(self.ws.paths.common_dir, path) if path.exists() else None
        return admin is not None and not drivelock.held(admin / "leap")

    def _mark_path(self, slice_id: str, ball: str) -> Path:
        return self.ws.paths.common_dir / "leap" / "claims" / slice_id / ball

    def _mark(self, found: Open, number: int) -> None:
        """The claim this clone's worker process took on a ball, written as it is taken
        (and taken up): the episode, the claim, and the process (its id and start)."""
        path = self._mark_path(found.slice, found.ball)
        path.parent.mkdir(parents=True, exist_ok=True)
        pid = os.getpid()
        tmp = path.with_name(f".{found.ball}.{pid}")
        tmp.write_text(f"{found.episode} {number} {pid} {procs.started_at(pid) or 0}\n")
        os.replace(tmp, path)

    def _unmark(self, found: Open, number: int) -> None:
        path = self._mark_path(found.slice, found.ball)
        try:
            if path.read_text().split()[:3] == [str(found.episode), str(number),
                                               str(os.getpid())]:
                path.unlink()
        except (OSError, IndexError):
            pass

    def _left_by_the_dead(self, slice_id: str, ball: str, episode: int, number: int) -> bool:
        """Whether this clone's mark names that claim, taken by a process gone now."""
        try:
            said = self._mark_path(slice_id, ball).read_text().split()
            marked, pid, began = (int(said[0]), int(said[1])), int(said[2]), float(said[3])
        except (OSError, IndexError, ValueError):
            return False
        if marked != (episode, number):
            return False
        if not procs.alive(pid):
            return True
        now = procs.started_at(pid)  # alive: the same process, unless its id was reused
        if now is None or not began:  # no /proc to tell them apart: taken as the same
            return False
        return abs(now - began) > 1.0

    def _order(self, found: Open) -> tuple[int, str]:
        """Earlier waves first; within a wave an order of this worker's own (a hash of its
        name), so workers that look at once reach for different balls, not all the same."""
        mine = hashlib.sha1(f"{self.opt.name}/{found.slice}/{found.ball}".encode())
        return found.wave, mine.hexdigest()

    def _drop_refused(self, exc: LeapError, ball: tuple[str, str] | None = None) -> None:
        """The remote refused records this clone holds and it lacks (a round whose claim ran
        out, another worker took the ball over; a true conflict): the remote's ledger is
        the truth. The local ledger goes back onto it by compare-and-swap without the
        records the refusal names and ``ball``'s, whose round was refused; every other
        local record stays, to go up with its own round (``--jobs``: another ball's round
        waits here for its push; L9, nothing valid lost). The old commits stay in git's
        reflog."""
        ref = self.ws.config.ledger_ref
        track = git.leap_tracking(self.opt.remote, ref)
        there = git.rev_parse(track, self.ws.paths.root)
        if there is None or git.rev_parse(ref, self.ws.paths.root) is None:
            raise exc
        said = " ".join(exc.lines())
        mine = f"{layout.ball_dir(*ball)}/" if ball is not None else None
        dropped = drop_local(self.ws.paths.root, there, lambda path: path in said or (
            mine is not None and path.startswith(mine)))
        self.echo(f"the remote refused records recorded here ({exc.lines()[0]}); this "
                  f"clone's ledger goes back onto {self.opt.remote}'s, {there[:12]}, without "
                  f"{', '.join(dropped) or 'any record of its own'}")

    # -- one claim ---------------------------------------------------------------------
    def _record(self, rec: ClaimRecord, subject: str) -> None:
        path = layout.claim_path(rec.slice, rec.ball, rec.episode, rec.claim, rec.action,
                                 rec.renewal)
        push_records(self.opt.remote, {path: yamlio.dumps(rec.to_dict())}, subject,
                     [(SLICE, rec.slice), (BALL, rec.ball)], start=self.ws.paths.root)
        if rec.claimed_until is not None:
            self.leases[(rec.slice, rec.ball)] = epoch_of(rec.claimed_until) or 0.0

    def _key(self) -> str | None:
        """S3, L9 (issue 16 item 4): with signing on, a claim names the key that signs it,
        and the server takes the rounds of the claim only signed by that key."""
        if not hasattr(self, "_fingerprint"):
            with self.ws.ledger() as ledger:
                signer = ledger.signer()
            self._fingerprint = signer.fingerprint() if signer is not None else None
        return self._fingerprint

    def _claim(self, found: Open) -> int | None:
        key = (found.slice, found.ball)
        if found.own is not None:  # ``_own_left``: its lease and renewals go on from here
            own = found.own.number
            self.renewals[key] = len(found.own.renewals)
            self.leases[key] = found.own.until
            # renewed first: a lease that runs out before the renewal lands is no claim to
            # build under (the server refuses its rounds); the next look claims afresh
            if not self._renew_now(found, own) or \
                    self.renewals[key] != len(found.own.renewals) + 1:
                self.lapsed.add((found.slice, found.ball, own))  # waited out, then claimed
                return None
            self._mark(found, own)
            self.echo(f"{found.slice}/{found.ball}: claim {own} of {self.opt.name}, which a "
                      f"killed run of this worker left live, taken up again, episode "
                      f"{found.episode}")
            return own
        self.renewals[key] = 0
        number = found.claims + 1
        rec = ClaimRecord(found.slice, found.ball, found.episode, number, "take",
                          self.opt.name, now_iso(),
                          claimed_until=iso_at(time.time() + self.claim_seconds),
                          key=self._key())
        try:
            self._record(rec, f"claim {number} of {found.slice}/{found.ball} episode "
                         f"{found.episode}: taken by {self.opt.name}")
        except KeyboardInterrupt:
            self._give_back_if_taken(found, rec)
            raise
        except (LedgerConflict, RuleViolation) as exc:
            said = exc.lines()[0]

            # a lease that ran out on its way up (a push slower than the lease) is asked
            # again, fresh; three in a row say this machine's clock is behind the server's
            self._past = self._past + 1 if LEASE_PAST in said else 0
            if LEASE_TOO_LONG in said or self._past >= 3:  # no race: refused again (L9)
                why = said[said.find("a lease until"):].split("; do:")[0]
                raise RuleViolation(
                    f"{self.opt.remote} refuses the lease this worker asks "
                    f"({self.claim_seconds:g} s): {why}", file=".leap/config.yaml",
                    field="workers.claim_seconds", rule="L9",
                    hint="use the spine's workers.claim_seconds here, and check this "
                    "machine's clock against the server's") from None
            self.echo(f"{found.slice}/{found.ball}: another worker claimed it first "
                      f"({said}); picking another")
            return None
        self._past = 0
        self._mark(found, number)
        self.echo(f"{found.slice}/{found.ball}: claim {number} taken by {self.opt.name}, "
                  f"episode {found.episode}, lease {self.claim_seconds:g} s")
        return number

    def _give_back_if_taken(self, found: Open, rec: ClaimRecord) -> None:
        """Ctrl-C while a take was on its way up: only the remote knows whether it landed.
        One that did is given back at once, not left to hold the ball until its lease runs
        out; a second Ctrl-C, or a remote out of reach, leaves that to the lease (L9)."""
        path = layout.claim_path(rec.slice, rec.ball, rec.episode, rec.claim, "take")
        try:
            syncing.sync(self.opt.remote, start=self.ws.paths.root, push=False)
            with self.ws.ledger() as ledger:
                taken = ledger.require().record(path, ClaimRecord)
            if taken is not None and taken.to_dict() == rec.to_dict():  # ours, not a twin's
                self._release(found, rec.claim, "interrupted while claiming")
        except (LeapError, KeyboardInterrupt):
            self.echo(f"{found.slice}/{found.ball}: claim {rec.claim} may have landed; if "
                      "so, its lease runs out by itself")

    def _renew(self, found: Open, number: int, done: threading.Event) -> None:
        """Renew once half the lease is gone: a quick build needs none, and a renewal's
        own push (through the server's hook, behind every other writer's) takes a while."""
        key = (found.slice, found.ball)
        while not done.wait(max(0.2, self.claim_seconds / 10)):
            if self.leases.get(key, 0.0) - time.time() > self.claim_seconds / 2:
                continue
            if not self._renew_now(found, number):
                return

    def _renew_now(self, found: Open, number: int) -> bool:
        with self._renewing:
            key = (found.slice, found.ball)
            number = self.held.get(key, number)  # claimed again after a lapse
            k = self.renewals[key] = self.renewals.get(key, 0) + 1
            rec = ClaimRecord(found.slice, found.ball, found.episode, number, "renew",
                              self.opt.name, now_iso(),
                              claimed_until=iso_at(time.time() + self.claim_seconds),
                              renewal=k)
            try:
                self._record(rec, f"claim {number} of {found.slice}/{found.ball}: "
                             f"renewed by {self.opt.name}")
            except LeapError as exc:
                self.renewals[key] = k - 1
                self.echo(f"{found.slice}/{found.ball}: could not renew claim {number}: "
                          f"{exc.lines()[0]}")
                # out of reach: the renewer tries again at its next turn; else it stops
                return isinstance(exc, RemoteUnavailable)
            return True

    def _release(self, found: Open, number: int, why: str) -> None:
        number = self.held.pop((found.slice, found.ball), number)
        self._unmark(found, number)
        rec = ClaimRecord(found.slice, found.ball, found.episode, number, "release",
                          self.opt.name, now_iso(), reason=why)
        try:
            self._record(rec, f"claim {number} of {found.slice}/{found.ball}: given back "
                         f"by {self.opt.name}")
        except LeapError as exc:  # it runs out by itself (workers.claim_seconds)
            self.echo(f"{found.slice}/{found.ball}: claim {number} not given back "
                      f"({exc.lines()[0]}); its lease runs out by itself")

    # -- building ----------------------------------------------------------------------
    def _build(self, found: Open, number: int) -> Built:
        built = Built(found.slice, found.ball, found.episode, number)
        self.held[(found.slice, found.ball)] = number
        done = threading.Event()
        renewer = threading.Thread(target=self._renew, args=(found, number, done),
                                   daemon=True)
        renewer.start()
        why = "its rounds stopped"
        try:
            branch = self.ws.config.ball_branch(found.slice, found.ball)
            tip = rm.remote_tip(self.ws, self.opt.remote, branch)
            if tip is None:
                raise RuleViolation(f"{branch} is not on {self.opt.remote}", rule="L9")
            try:
                rm.ensure_worktree(self.ws, target(self.ws, found.slice, found.ball), branch,
                                   tip, (found.slice, found.ball, found.episode))
            except LeapError:
                self.skip.add((found.slice, found.ball, found.episode))  # never again here
                raise

            def pushed(ball: str, closed: RoundClosed) -> None:
                self._push_round(found, number, branch, closed)
                built.rounds.append(closed.recorded.receipt.round)

            progress = _Echo(self.echo, found.slice, [(found.ball, found.wave)],
                             self.ws.config.round_cap)
            ran = run_balls(self.ws, found.slice, [(found.ball, found.wave)], 1, progress,
                            stop=self.stop, after_round=pushed).balls[0]
            built.interrupted = ran.interrupted
            if ran.error is not None:
                built.error = ran.error.lines()[0]
                why = f"stopped: {built.error}"
                self.echo(f"{found.slice}/{found.ball}: {built.error}")
        except LeapError as exc:
            built.error = exc.lines()[0]
            why = f"stopped: {built.error}"
            self.echo(f"{found.slice}/{found.ball}: {built.error}")
        finally:
            done.set()
            renewer.join()
            self._release(found, number, why)
        return built

    def _keep_refused(self, found: Open, branch: str, tip: str, there: str) -> None:
        """A round the remote refused stays as evidence under a ref of this clone, and the
        ball's worktree goes back to the remote's tip (it was clean: the round was
        committed), so this clone can build the ball again once it claims it."""
        keep = f"refs/leap/evidence/refused/{found.slice}/{found.ball}/{tip[:12]}"
        git.run(["update-ref", keep, tip], self.ws.paths.root, check=False)
        path = target(self.ws, found.slice, found.ball)
        status = git.run(["status", "--porcelain", "--untracked-files=all"], path,
                         check=False)
        if status.returncode == 0 and not status.stdout.strip():
            git.run(["reset", "--quiet", "--hard", there], path, check=False)
        self.echo(f"{found.slice}/{found.ball}: the refused round {tip[:12]} is kept as "
                  f"{keep}; the worktree is back at {there[:12]}")

    def _push_round(self, found: Open, number: int, branch: str, closed: RoundClosed
                    ) -> None:
        """The round's commit on the ball branch and its receipt on the ledger, in one
        atomic push (both land, or neither)."""
        tip = git.rev_parse(f"refs/heads/{branch}", self.ws.paths.root)
        there = rm.remote_tip(self.ws, self.opt.remote, branch)
        left = self.leases.get((found.slice, found.ball), 0.0) - time.time()
        if left < self.claim_seconds / 2:  # renew before the round goes up, not after
            self._renew_now(found, number)  # out of reach: the push below waits for it
        mine = [f"{tip}:refs/heads/{branch}"] if tip is not None and tip != there else []
        said = False
        while True:  # the remote out of reach: the same push again while the claim lasts
            try:
                others = self._push_once(found, branch, tip, there, mine)
                break
            except RemoteUnavailable as exc:
                if self.stop.is_set() or time.time() >= self.leases.get(
                        (found.slice, found.ball), 0.0):
                    raise
                if not said:
                    why = exc.problems[0].message if exc.problems else str(exc)
                    self.echo(f"{found.slice}/{found.ball}: round {closed.recorded.receipt.round}"
                              f" waits for {self.opt.remote} to answer ({why}); its claim "
                              "lasts till then")
                    said = True
                time.sleep(self.opt.poll)
        for moved, sha in ([(branch, tip)] if tip is not None else []) + others:
            git.run(["update-ref", rm.tracking(self.opt.remote, moved), sha],
                    self.ws.paths.root, check=False)
        receipt = closed.recorded.receipt
        claimed = " claim" if receipt.claim and receipt.outcome == 1 else ""
        self.echo(f"{found.slice}/{found.ball}: round {receipt.round} pushed "
                  f"({receipt.outcome}{claimed})")

    def _push_once(self, found: Open, branch: str, tip: str | None, there: str | None,
                   mine: list[str]) -> list[tuple[str, str]]:
        """One atomic push of the round with any earlier round still here; returns the other
        balls' branches that went with it."""
        with self._push:
            others = self._recorded_rounds(found)
            also = mine + [f"{sha}:refs/heads/{other}" for other, sha in others]
            try:
                try:
                    syncing.sync(self.opt.remote, start=self.ws.paths.root, also=also)
                except (RuleViolation, LedgerConflict) as exc:
                    if not self._refused_others_only(exc, found, also):
                        raise
                    # another ball's stale record rode along (a round that never went up):
                    # it goes, this ball's round goes up again on its own (L9)
                    self._drop_refused(exc)
                    others = []
                    syncing.sync(self.opt.remote, start=self.ws.paths.root, also=mine)
            except (RuleViolation, LedgerConflict) as exc:
                # the authority said no: its ledger is the truth for this ball's records
                self._drop_refused(exc, (found.slice, found.ball))
                if tip is not None and there is not None:
                    self._keep_refused(found, branch, tip, there)
                raise
        return others

    def _refused_others_only(self, exc: LeapError, found: Open, also: list[str]) -> bool:
        """Whether the refusal names records only, none of ``found``'s and no branch."""
        said = " ".join(exc.lines())
        mine = f"{layout.ball_dir(found.slice, found.ball)}/"
        return "slices/" in said and mine not in said and "refs/heads/" + \
            self.ws.config.ball_branch_prefix not in said and not \
            any(spec.split(":", 1)[1] in said for spec in also)

    def _recorded_rounds(self, found: Open) -> list[tuple[str, str]]:
        """(branch, commit) of each other ball this worker builds whose last round is
        recorded here and its commit not yet on the remote (``--jobs``: it waits for its
        own push). The ledger push carries that round's receipt, so the commit goes with
        it in the one atomic push: a receipt never reaches the remote before its commit,
        where the thrower would score the ball's branch without the round (L7, L9)."""
        out = []
        with self.ws.ledger() as ledger:
            view = ledger.require()
            for sid, bid in list(self.held):
                if (sid, bid) == (found.slice, found.ball):
                    continue
                branch = self.ws.config.ball_branch(sid, bid)
                ep = current_episode(view, sid, bid)
                last = query.receipts(view, sid, bid, ep.throw.episode)[-1:]
                sha = git.rev_parse(f"refs/heads/{branch}", self.ws.paths.root)
                there = rm.remote_tip(self.ws, self.opt.remote, branch)
                if sha is None or sha == there or not last or last[0].commit != sha:
                    continue
                if there is None or git.is_ancestor(self.ws.paths.root, there, sha):
                    out.append((branch, sha))
        return out


class _Echo(Progress):
    """The builders' progress as the worker's plain lines."""

    def __init__(self, echo: Callable[[str], None], slice_id: str,
                 balls: list[tuple[str, int]], round_cap: int) -> None:
        super().__init__(io.StringIO(), slice_id, balls, round_cap, live=False)
        self._echo, self._slice = echo, slice_id

    def update(self, ball: str, round_no: int, state: str) -> None:
        self._echo(f"{self._slice}/{ball}: round {round_no}: {state}")

    def beat(self, ball: str, round_no: int, seconds: float, line: str) -> None:
        self._echo(f"{self._slice}/{ball}: round {round_no}: building for {seconds:.0f} s")

    def note(self, text: str) -> None:
        self._echo(text)
