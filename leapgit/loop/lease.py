"""One `leap run` of a slice at a time (L3: one driver). The run lease is an exclusive lock
on ``<git common dir>/leap/runs/<slice>.lock`` held for the life of the run, beside a file
naming its holder (host, process, start). The operating system gives the lock back when the
holder dies, however it dies (``kill -9``, a reboot), so a stale lease never blocks the next
run; a second run while the first lives is refused, naming the first.

Nothing else is kept here: what the run decided is in the ledger and in git (L8), and the
per-ball drive locks (``worktrees.drivelock``) still hold every builder to its worktree."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from filelock import FileLock, Timeout

from leapgit.errors import Hold
from leapgit.records import yamlio
from leapgit.timeutil import now_iso


class RunLease:
    def __init__(self, common_dir: Path, slice_id: str) -> None:
        folder = common_dir / "leap" / "runs"
        folder.mkdir(parents=True, exist_ok=True)
        self.slice = slice_id
        self._lock = FileLock(str(folder / f"{slice_id}.lock"), thread_local=False)
        self._holder = folder / f"{slice_id}.holder.yaml"

    def __enter__(self) -> RunLease:
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            raise Hold(f"slice {self.slice} is already being run by {self._named()}; "
                       "one `leap run` drives a slice at a time", rule="L3",
                       hint="wait for that run to end (or stop it), then `leap run "
                            f"{self.slice}` continues where the ledger says") from None
        me = {"host": socket.gethostname(), "pid": os.getpid(), "started_at": now_iso()}
        tmp = self._holder.with_suffix(".tmp")
        tmp.write_bytes(yamlio.dumps(me))
        tmp.replace(self._holder)
        return self

    def __exit__(self, *exc: object) -> None:
        self._holder.unlink(missing_ok=True)
        self._lock.release()

    def _named(self) -> str:
        try:
            raw = yamlio.loads(self._holder.read_bytes(), str(self._holder))
        except (OSError, ValueError, Exception):  # noqa: BLE001 -- a holder mid-write
            return "another process"
        if not isinstance(raw, dict):
            return "another process"
        return (f"process {raw.get('pid')} on {raw.get('host')} (since "
                f"{raw.get('started_at')})")
