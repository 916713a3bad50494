"""`leap throw SLICE [--ball ID]... [--resume] [--run] [--jobs N]`."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from leapgit.errors import EXIT_HOLD, EXIT_OK, EXIT_RULE, UsageError, printable
from leapgit.ledger.workspace import Workspace, open_workspace
from leapgit.loop import remote as rm
from leapgit.scoring import spine
from leapgit.worktrees.builder import require_program
from leapgit.worktrees.progress import Progress
from leapgit.worktrees.run import HEARTBEAT, RunResult, run_balls
from leapgit.worktrees.setup import set_up
from leapgit.worktrees.throw import ThrowResult
from leapgit.worktrees.throw import throw as throw_balls
from leapgit.worktrees.upstream import require_spine_pushable

if TYPE_CHECKING:
    from leapgit.tribunal.worktree import SetupRun

EXIT_INTERRUPTED = 130


@dataclass(frozen=True)
class SetUp:
    """``worktrees.setup`` in a worktree a plain throw created (--run: its first round)."""

    ball: str
    run: SetupRun
    log: Path


@dataclass(frozen=True)
class Thrown:
    workspace: Workspace
    result: ThrowResult
    setups: tuple[SetUp, ...] = ()

    @property
    def setup_failed(self) -> bool:
        return any(not s.run.ok for s in self.setups)

    def setup_lines(self) -> list[str]:
        out = []
        for s in self.setups:
            if s.run.ok:
                out.append(f"  setup in {s.ball}: ok ({s.run.seconds:.1f} s); log {s.log}")
                continue
            out.append(f"  setup in {s.ball}: hold (0): {s.run.describe()}; log {s.log}")
            out += [f"    {printable(line)}" for line in s.run.shown()]
            out.append(f"    fix worktrees.setup in .leap/config.yaml; `leap throw "
                       f"{self.result.slice} --ball {s.ball} --run` runs it again first")
        return out


def throw(slice_id: str, balls: Sequence[str] = (), resume: bool = False,
          start: Path | str = ".", run: bool = False, remote: str | None = None) -> Thrown:
    """``run``: the builders are driven next (`--run`): a ball in flight carries on, and
    each round sets up its fresh worktree itself. ``remote`` (issue 16): the balls are
    published there for `leap worker`s to build; nothing is built here."""
    ws = open_workspace(start)
    shared = remote or spine.spine_remote(ws.paths.root, ws.config.spine)
    # L8: nothing is built on a spine its remote's server would refuse; the command as given
    typed = [slice_id, *(a for b in balls for a in ("--ball", b)),
             *(["--resume"] if resume else []), *(["--run"] if run else []),
             *(["--remote", remote] if remote else [])]
    require_spine_pushable(ws, f"`leap throw {shlex.join(typed)}` again")
    if shared is not None:  # L6: episodes end by the server's round cap
        spine.require_round_cap_of_server(ws.paths.root, ws.config.spine, ws.config, shared)
    if remote is not None:
        if run:
            raise UsageError("--remote publishes the balls to workers; --run builds them "
                             "here: choose one")
        rm.take_home(ws, remote, slice_id)
        result = throw_balls(ws, slice_id, balls, resume, publish=True, remote=remote)
        rm.publish(ws, remote, slice_id, [t.record.ball for t in result.thrown])
        return Thrown(ws, result)
    if run:  # before any worktree, branch or round: a builder that cannot start
        require_program(ws.config.builder_command, ws.paths.root, ws.config.builder_preset,
                        config_root=ws.main_top)
    result = throw_balls(ws, slice_id, balls, resume, run=run)
    return Thrown(ws, result, () if run else _set_up(ws, result))


def _set_up(ws: Workspace, result: ThrowResult) -> tuple[SetUp, ...]:
    out = []
    for t in result.thrown:
        rec = t.record
        if not t.created or not rec.worktree:
            continue
        log = (ws.paths.common_dir / "leap" / "logs" / rec.slice / rec.ball
               / f"episode-{rec.episode}-setup.log")
        done = set_up(ws, Path(rec.worktree), log)
        if done is not None:
            out.append(SetUp(rec.ball, done, log))
    return tuple(out)


def drive_builders(thrown: Thrown, jobs: int, stream: TextIO, live: bool | None = None,
                   builder: str | None = None, heartbeat: float = HEARTBEAT) -> RunResult:
    """``heartbeat``: seconds between the lines that show a running builder is alive."""
    ws, result = thrown.workspace, thrown.result
    balls = [(t.record.ball, t.record.wave or 0) for t in result.thrown]
    progress = Progress(stream, result.slice, balls, ws.config.round_cap, live)
    return run_balls(ws, result.slice, balls, jobs, progress, builder, heartbeat)


def run_exit_code(r: RunResult) -> int:
    if r.interrupted:
        return EXIT_INTERRUPTED
    codes = [b.error.exit_code for b in r.balls if b.error]
    if any(b.last is not None and b.last.outcome == -1 for b in r.balls):
        codes.append(EXIT_RULE)
    if any(b.last is None or b.last.outcome == 0 for b in r.balls if not b.error):
        codes.append(EXIT_HOLD)
    return min(codes) if codes else EXIT_OK
