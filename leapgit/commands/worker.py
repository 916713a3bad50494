"""`leap worker --remote R [--slice S] [--jobs N] [--once]`: build published balls from the
shared remote (``loop.worker``), one plain line per step."""

from __future__ import annotations

import re
import time
from pathlib import Path

import click

from leapgit.errors import UsageError, printable
from leapgit.ledger.sync import require_remote
from leapgit.ledger.workspace import open_workspace
from leapgit.loop.worker import Options, Worker, WorkerEnd, default_name
from leapgit.scoring.spine import require_round_cap_of_server
from leapgit.worktrees.builder import require_program

# a claim record's ``holder`` (schemas/records/claim.schema.json): the server refuses a take
# in any other name, which the worker would read as a race lost, and claim again for ever
_HOLDER = re.compile(r"[A-Za-z0-9][A-Za-z0-9@._-]{0,199}")


def require_name(name: str) -> None:
    if not _HOLDER.fullmatch(name):
        raise UsageError(
            f"{printable(name[:80])}{'…' if len(name) > 80 else ''} is no name a "
            "claim can hold: letters, digits, '@', '.', '_' and '-', starting with a letter "
            "or digit, at most 200; no claim was taken", field="--name", rule="L9",
            hint="give your user name on the shared remote, or leave --name out (host-pid)")


def serve(remote: str, slice_id: str | None = None, jobs: int = 1, once: bool = False,
          name: str | None = None, poll: float = 1.0, start: Path | str = ".") -> WorkerEnd:
    if name is not None:
        require_name(name)
    ws = open_workspace(start)
    require_remote(ws.paths.root, remote)  # bad input: said before the worker starts
    # L3: a builder that cannot start is said before any claim is taken (before: a claim
    # taken, the ball stopped on the error, "done: 1 ball(s) built")
    require_program(ws.config.builder_command, ws.paths.root, ws.config.builder_preset,
                    "no claim was taken", config_root=ws.main_top)
    # L6: its rounds are counted by the server's cap, before any claim is taken
    require_round_cap_of_server(ws.paths.root, ws.config.spine, ws.config, remote)
    options = Options(remote, name or default_name(), slice_id, jobs, once, poll)
    started = time.monotonic()

    def echo(line: str) -> None:
        click.echo(f"[{time.monotonic() - started:7.1f}s] leap worker {options.name}: "
                   f"{printable(line)}")

    end = Worker(ws, options, echo).serve()
    echo(f"done: {len(end.built)} ball(s) built"
         + (f"; stopped: {end.stopped}" if end.stopped else "")
         + ("; interrupted" if end.interrupted else ""))
    return end
