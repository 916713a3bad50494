"""One `leap run` of a slice at a time (L3: one driver). The run lease is an exclusive lock
on ``<git common dir>/leap/runs/<slice>.lock`` held for the life of the run, beside a file
naming its holder (host, process, start). The operating system gives the lock back when the
holder dies, however it dies (``kill -9``, a reboot), so a stale lease never blocks the next
run of this clone; a second run while the first lives is refused, naming the first.

With a shared remote (`leap run --remote`, issue 15 item 7), the run also holds the slice's
run lease on the remote's ledger (``rules.runs``): taken by the remote's compare-and-swap
before the run starts, given back when it ends. A run on another clone is refused, naming
it; a run of this clone, in this boot, whose process is gone is taken over at once (this
clone's lock being free says so); one of another clone, or of this clone before a reboot,
only when asked (``--take-over``).

Nothing else is kept here: what the run decided is in the ledger and in git (L8), and the
per-ball drive locks (``worktrees.drivelock``) still hold every builder to its worktree."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

from filelock import FileLock, Timeout

from leapgit.errors import Hold, LeapError, LedgerConflict, RuleViolation
from leapgit.ledger import layout
from leapgit.ledger import sync as syncing
from leapgit.ledger.sync import push_records
from leapgit.ledger.workspace import Workspace
from leapgit.records import trailers as tr
from leapgit.records import yamlio
from leapgit.records.runs import RunLeaseRecord
from leapgit.rules.runs import RULE, open_run, run_leases
from leapgit.timeutil import now_iso

_TAKE_ATTEMPTS = 5  # a lost race for the next number looks again


_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def clone_id(common_dir: Path) -> str:
    """Who holds a run lease: ``host:git-dir``, and on Linux the boot it runs in
    (``boot 1a2b3c4d``). Only a holder of this very name is this clone's own, whose run is
    gone when this clone's file lock is free. The boot keeps that true where host and path
    are not enough: two machines started from one disk image (same host name, same path)
    never take each other's lease as their own, and after a reboot the lease of the run
    before is another boot's, taken over only when asked (``--take-over``)."""
    name = f"{socket.gethostname()}:{Path(os.path.realpath(common_dir))}"
    try:
        boot = _BOOT_ID.read_text("ascii").strip().replace("-", "")[:8]
    except OSError:
        return name
    return f"{name} (boot {boot})" if boot else name


def clone_of(holder: str) -> tuple[str, str] | None:
    """The (host, git dir) of a run lease's holder (``clone_id``); None for another form."""
    host, sep, where = holder.split(" (boot ")[0].partition(":")
    return (host, where) if sep and host and where else None


def _ours(holder: str, clone: str) -> bool:
    """Whether a lease's holder is this clone in this boot. A holder written before the
    boot was part of the name (``host:git-dir`` alone) is taken as this clone's when host
    and path match, as it was then, so an upgrade does not strand this clone's own lease."""
    return holder == clone or holder == clone.split(" (boot ")[0]


class RunLease:
    def __init__(self, ws: Workspace, slice_id: str, remote: str | None = None,
                 take_over: bool = False) -> None:
        common_dir = ws.paths.common_dir
        folder = common_dir / "leap" / "runs"
        folder.mkdir(parents=True, exist_ok=True)
        self.slice = slice_id
        self._lock = FileLock(str(folder / f"{slice_id}.lock"), thread_local=False)
        self._holder = folder / f"{slice_id}.holder.yaml"
        self.ws, self.remote, self.take_over = ws, remote, take_over
        self._root = ws.paths.root
        self.clone = clone_id(common_dir)
        self.number: int | None = None  # the run lease taken on the remote
        # the (host, git dir) of the clone whose run lease --take-over took over
        self.took_over: tuple[str, str] | None = None

    def __enter__(self) -> RunLease:
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            raise Hold(f"slice {self.slice} is already being run by {self._named()}; "
                       "one run drives a slice at a time", rule="L3",
                       hint="wait for that run to end (or stop it), then `leap run "
                            f"{self.slice}` continues where the ledger says") from None
        try:
            if self.remote is not None:
                self._take(self.remote)
            me = {"host": socket.gethostname(), "pid": os.getpid(), "started_at": now_iso()}
            tmp = self._holder.with_suffix(".tmp")
            tmp.write_bytes(yamlio.dumps(me))
            tmp.replace(self._holder)
        except BaseException:  # Ctrl-C on the way in: nothing held is left behind
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self.remote is not None and self.number is not None and \
                    self._records_up(self.remote, self.number):
                self._give_back(self.remote, self.number)
        finally:
            self._holder.unlink(missing_ok=True)
            self._lock.release()

    # -- the remote's run lease ---------------------------------------------------------
    def _take(self, remote: str) -> None:
        seen: int | None = None  # the foreign lease --take-over was asked to take over
        for _ in range(_TAKE_ATTEMPTS):
            # ours up first (the slice's cut, a remote without a ledger yet), then theirs
            syncing.sync(remote, start=self._root)
            with self.ws.ledger() as ledger:
                view = ledger.require()
                leases, found = run_leases(view, self.slice), open_run(view, self.slice)
            over, foreign = None, None
            if found is not None and found.take is not None:
                mine = _ours(found.take.holder, self.clone)  # this clone's lock is free
                if not mine and (not self.take_over or seen not in (None, found.number)):
                    raise Hold(f"slice {self.slice} is being run by {found.named()} on "
                               f"{remote}; one run drives a slice at a time",
                               rule=RULE, hint=f"wait for that run to end; if it is gone "
                               f"for good, `leap run {self.slice} --remote {remote} "
                               "--take-over` takes its lease over")
                if not mine:
                    seen = found.number  # a later look takes over this one only
                foreign = None if mine else clone_of(found.take.holder)
                over = found.number
            number = len(leases) + 1
            rec = RunLeaseRecord(self.slice, number, "take", self.clone, os.getpid(),
                                 now_iso(), takes_over=over,
                                 reason=None if over is None else "its run is gone")
            try:
                push_records(remote, {layout.run_path(self.slice, number, "take"):
                                      yamlio.dumps(rec.to_dict())},
                             f"run lease {number} of {self.slice}: taken"
                             + (f" over from run lease {over}" if over else ""),
                             [(tr.SLICE, self.slice)], start=self._root)
            except KeyboardInterrupt:  # Ctrl-C while the take went up: it may have landed
                self._give_back_if_taken(remote, rec)
                raise
            except LedgerConflict:
                continue  # another run took that number first: look again
            except RuleViolation as exc:
                if "was not open before it" in " ".join(exc.lines()):
                    continue  # the lease it took over was given back meanwhile: look again
                raise
            self.number, self.took_over = number, foreign
            return
        raise Hold(f"the run lease of {self.slice} on {remote} kept moving", rule=RULE,
                   hint=f"run `leap run {self.slice} --remote {remote}` again")

    def _give_back_if_taken(self, remote: str, rec: RunLeaseRecord) -> None:
        """Only the remote knows whether an interrupted take landed: one that did is given
        back at once (a second Ctrl-C, or a remote out of reach, leaves it to this clone's
        next run, which takes it over)."""
        try:
            syncing.sync(remote, start=self._root, push=False)
            with self.ws.ledger() as ledger:
                taken = ledger.require().record(layout.run_path(self.slice, rec.run, "take"),
                                                RunLeaseRecord)
        except LeapError as exc:  # whether it landed is unknown: said, never silently
            self._left_open(remote, rec.run, exc.lines()[0])
            return
        except KeyboardInterrupt:
            self._left_open(remote, rec.run, "interrupted while it was given back")
            return
        if taken is not None and taken.to_dict() == rec.to_dict():
            try:
                self._give_back(remote, rec.run)
            except KeyboardInterrupt:
                pass  # ``_give_back`` said it may stay open; the first press goes on

    def _records_up(self, remote: str, number: int) -> bool:
        """Whether every record this run wrote is on the remote: pushed now, before the
        lease goes back (a walk-away hunt: a score recorded after the run's last look at
        the remote stayed here alone, another clone scored the ball again, and this clone's
        every sync stopped on a true conflict). Not up: the lease stays open, said, for
        this clone's next run, which takes it over."""
        try:
            syncing.sync(remote, start=self._root)
        except LeapError as exc:
            self._left_open(remote, number, "this clone's records did not all go up: "
                            + exc.lines()[0])
            return False
        except KeyboardInterrupt:
            self._left_open(remote, number, "interrupted while its records went up")
            raise
        return True

    def _give_back(self, remote: str, number: int) -> None:
        rec = RunLeaseRecord(self.slice, number, "release", self.clone, os.getpid(),
                             now_iso())
        try:
            push_records(remote, {layout.run_path(self.slice, number, "release"):
                                  yamlio.dumps(rec.to_dict())},
                         f"run lease {number} of {self.slice}: given back",
                         [(tr.SLICE, self.slice)], start=self._root)
        except LeapError as exc:  # left open: this clone's next run takes it over at once
            self._left_open(remote, number, exc.lines()[0])
        except KeyboardInterrupt:  # a press while it went up: it may stay open, said
            self._left_open(remote, number, "interrupted while it was given back")
            raise

    def _left_open(self, remote: str, number: int, why: str) -> None:
        print(f"leap: warning: run lease {number} of {self.slice} may stay open on {remote} "
              f"({why}); the next `leap run {self.slice} --remote {remote}` of this clone "
              "takes it over", file=sys.stderr)

    def _named(self) -> str:
        try:
            raw = yamlio.loads(self._holder.read_bytes(), str(self._holder))
        except (OSError, ValueError, Exception):  # noqa: BLE001 -- a holder mid-write
            return "another process"
        if not isinstance(raw, dict):
            return "another process"
        return (f"process {raw.get('pid')} on {raw.get('host')} (since "
                f"{raw.get('started_at')})")
