"""The click layer: options in, exit code out. No rule lives here.

A command is built only when it runs (click's "Lazily Loading Subcommands"): ``COMMANDS``
holds each command's builder and short help, so ``leap --help`` lists them all without
building one, and ``leap --version`` or ``leap status`` pay for no other command's options
or modules (issue 13). Each builder's callback imports its ``leapgit.commands`` module itself.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn

import click

from leapgit import __version__
from leapgit.commands import console
from leapgit.errors import (
    EXIT_HOLD,
    EXIT_INPUT,
    EXIT_OK,
    EXIT_RULE,
    UsageError,
)
from leapgit.errors import UsageError as LeapUsageError

if TYPE_CHECKING:
    from pathlib import Path


class Lazy(NamedTuple):
    """A command's builder, and the first sentence of its help for the listing (the text
    click shortens to fit; tests/test_cli.py holds it to the built command's own)."""

    build: Callable[[], click.Command]
    help: str


COMMANDS: dict[str, Lazy] = {}
# the ceilings of the float options (``Finite``): a run's --max-minutes, a heartbeat, a poll
MONTH_MINUTES, DAY_SECONDS, HOUR_SECONDS = 31 * 24 * 60, 24 * 3600, 3600


class Finite(click.FloatRange):
    """A float option's range, without NaN or infinity (README: refused wherever a number
    goes): NaN compares false with every bound, so ``--max-minutes nan`` passed
    ``FloatRange(min=0)`` and set no limit at all (a bad-input hunt). Every range has a
    ceiling too: ``--poll 1e10`` is finite, and no sleep takes it (an internal error)."""

    def __init__(self, min: float, max: float, **kwargs: Any) -> None:  # noqa: A002 -- click's names
        super().__init__(min=min, max=max, **kwargs)

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        got = super().convert(value, param, ctx)
        if got != got or got in (float("inf"), float("-inf")):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return got


def lazy(name: str, help: str) -> Callable[[Callable[[], click.Command]],
                                           Callable[[], click.Command]]:
    """Enter a command's builder in ``COMMANDS`` under ``name``."""
    def register(build: Callable[[], click.Command]) -> Callable[[], click.Command]:
        COMMANDS[name] = Lazy(build, help)
        return build
    return register


class LazyGroup(click.Group):
    """A group whose subcommands come from a table of builders, each run on first use."""

    def __init__(self, *args: Any, table: dict[str, Lazy], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.table = table

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.table})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.table:
            self.add_command(self.table[cmd_name].build(), cmd_name)
        return super().get_command(ctx, cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] not in self.table:
            # an unknown name: click suggests the near ones from the commands it holds
            for name in self.table:
                self.get_command(ctx, name)
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The listing click writes, from the table's help for the commands not built."""
        shown = [(name, self.commands.get(name) or click.Command(name, help=self.table[name].help))
                 for name in self.list_commands(ctx)]
        shown = [(name, cmd) for name, cmd in shown if not cmd.hidden]
        if not shown:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in shown)
        with formatter.section("Commands"):
            formatter.write_dl([(name, cmd.get_short_help_str(limit)) for name, cmd in shown])


def _emit(lines: list[str]) -> None:
    console.emit(lines)


def _emit_json(data: Any) -> None:
    console.emit_json(data)


# the version is leapgit.__version__ (tests/test_cli.py holds it to pyproject's): asking
# importlib.metadata would cost `leap --version` more than the rest of its start-up
@click.group(cls=LazyGroup, table=COMMANDS,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="leap")
def cli() -> None:
    """leapgit: cut a change into balls, throw them to builders, score them blind,
    and merge them through one write spine, with every step recorded in git."""


@lazy("init", "Write .leap/config.yaml and start the ledger branch (idempotent).")
def _init() -> click.Command:
    from pathlib import Path

    @click.command("init")
    @click.option("--spine", metavar="BRANCH",
                  help="the protected branch (default: current branch)")
    @click.option("--signing", is_flag=True, help="set up a signing key and the signer policy")
    @click.option("--key", type=click.Path(path_type=Path), help="--signing: an existing SSH key")
    @click.option("--new-key", type=click.Path(path_type=Path),
                  help="--signing: create an ed25519 key here (no passphrase; use an agent "
                       "and --key for a protected one)")
    @click.option("--name", help="--signing: your name in the policy (principals ROLE:NAME)")
    @click.option("--role", "roles", multiple=True,
                  type=click.Choice(["builder", "scorer", "integrator", "admin"]),
                  help="--signing: a role of this key (repeat; default admin and integrator)")
    @click.option("--require/--no-require", default=None,
                  help="--signing: make the server require signatures (signing.require)")
    def init_cmd(spine: str | None, signing: bool, key: Path | None, new_key: Path | None,
                 name: str | None, roles: tuple[str, ...], require: bool | None) -> None:
        """Write .leap/config.yaml and start the ledger branch (idempotent)."""
        from leapgit.commands import report
        from leapgit.commands.init import init

        choice = _signing_choice(key, new_key, name, roles, require) if signing else None
        _emit(report.init_lines(init(spine=spine, signing=choice)))
    return init_cmd


def _signing_choice(key: Path | None, new_key: Path | None, name: str | None,
                    roles: tuple[str, ...], require: bool | None) -> Any:
    """Ask for what the flags left out (an interactive walk-through on a terminal)."""
    from pathlib import Path

    from leapgit.commands.init import SigningChoice

    if key and new_key:
        raise click.UsageError("pass --key or --new-key, not both")
    if not key and not new_key:
        click.echo("leapgit signs every ledger record with your SSH key (README "
                   "\"Roles and signatures\").")
        path = Path(click.prompt("SSH private key to sign with",
                                 default=str(Path("~/.ssh/id_ed25519").expanduser())))
        if path.expanduser().exists():
            key = path
        elif click.confirm(f"{path} does not exist; create a new ed25519 key there?",
                           default=True):
            new_key = path
        else:
            raise click.UsageError("no key chosen")
    if not name:
        name = click.prompt("your name in the policy", default=os.environ.get("USER", "me"))
    if not roles:
        roles = tuple(click.prompt("roles of this key (comma-separated: builder, scorer, "
                                   "integrator, admin)", default="admin,integrator"
                                   ).replace(" ", "").split(","))
    return SigningChoice(key=(key or new_key), create=new_key is not None,  # type: ignore[arg-type]
                         name=str(name), roles=roles, require=require)


@lazy("slice", "Validate, cut and abandon slices.")
def _slice() -> click.Command:
    from pathlib import Path

    @click.group("slice")
    def slice_group() -> None:
        """Validate, cut and abandon slices."""

    @slice_group.command("check")
    @click.argument("file", type=click.Path(path_type=Path))
    @click.option("--base", default="HEAD", show_default=True,
                  help="commit the scope is read at")
    def slice_check_cmd(file: Path, base: str) -> None:
        """Validate a slice draft (L1, L2, L4); writes nothing."""
        from leapgit.commands import report
        from leapgit.commands.slice import check

        _emit(report.check_lines(check(file, base)))

    @slice_group.command("cut")
    @click.argument("file", type=click.Path(path_type=Path))
    @click.option("--base", default="HEAD", show_default=True,
                  help="commit the scope is stamped at")
    def slice_cut_cmd(file: Path, base: str) -> None:
        """Validate a draft, stamp every scope file's blob id, record the slice."""
        from leapgit.commands import report
        from leapgit.commands.slice import cut

        _emit(report.cut_lines(cut(file, base)))

    @slice_group.command("abandon")
    @click.argument("slice_id", metavar="SLICE")
    @click.option("--reason", required=True, help="why the slice is given up (recorded)")
    def slice_abandon_cmd(slice_id: str, reason: str) -> None:
        """Give up a slice that never merged: its balls are thrown no more (L3), its
        worktrees become prunable, its files are free for another slice (L4)."""
        from leapgit.commands.abandon import abandon, abandon_lines

        _emit(abandon_lines(abandon(slice_id, reason)))
    return slice_group


@lazy("status", "Each slice's balls in waves, with state and rounds used.")
def _status() -> click.Command:
    @click.command("status")
    @click.argument("slice_id", required=False, metavar="[SLICE]")
    @click.option("--json", "as_json", is_flag=True, help="machine-readable output")
    def status_cmd(slice_id: str | None, as_json: bool) -> None:
        """Each slice's balls in waves, with state and rounds used."""
        from leapgit.commands.status_cache import show

        show(slice_id, as_json)
    return status_cmd


@lazy("log", "The ledger's history, newest first.")
def _log() -> click.Command:
    @click.command("log")
    @click.option("-n", "limit", type=click.IntRange(min=1), help="show at most N entries")
    @click.option("--slice", "slice_id", help="only entries of this slice")
    @click.option("--json", "as_json", is_flag=True, help="machine-readable output")
    def log_cmd(limit: int | None, slice_id: str | None, as_json: bool) -> None:
        """The ledger's history, newest first."""
        from leapgit.commands import report
        from leapgit.commands.log import log

        entries = log(limit, slice_id)
        if as_json:
            _emit_json([e.to_json() for e in entries])
        else:
            _emit(report.log_lines(entries))
    return log_cmd


@lazy("throw", "Throw every ready ball (L5) into its own worktree; with --run, drive the "
               "builders.")
def _throw() -> click.Command:
    @click.command("throw")
    @click.argument("slice_id", metavar="SLICE")
    @click.option("--ball", "balls", multiple=True, metavar="ID", help="throw only this ball")
    @click.option("--resume", is_flag=True,
                  help="start a new episode after one that ended at 0 (a checkpoint, or a last "
                  "round its score held)")
    @click.option("--run", "drive", is_flag=True,
                  help="run the configured builder, round by round")
    @click.option("--jobs", type=click.IntRange(min=1), default=4, show_default=True,
                  help="builders running at once (with --run)")
    @click.option("--remote", metavar="REMOTE",
                  help="publish the balls on this shared remote for workers (`leap worker "
                       "--remote REMOTE`) to build (no worktree here)")
    @click.pass_context
    def throw_cmd(ctx: click.Context, slice_id: str, balls: tuple[str, ...], resume: bool,
                  drive: bool, jobs: int, remote: str | None) -> None:
        """Throw every ready ball (L5) into its own worktree; with --run, drive the builders.

        \b
        The builder (builder.command in .leap/config.yaml), with --run, once a round:
        run by `sh -c` with cwd: the ball's worktree, stdin /dev/null, stdout and stderr
        into the round's log (.git/leap/logs/SLICE/BALL/episode-E-round-R.log), in a
        process group of its own, stopped after builder.timeout seconds (default 1800).
        Its environment is leap's, without git's location variables (GIT_DIR,
        GIT_INDEX_FILE, GIT_WORK_TREE ...), plus:
          LEAP_HANDOFF        the handoff file (YAML): goal, spec, scope with blob ids,
                              proof, rollback, base, previous_receipt, checkpoint,
                              findings (reference data, L2: check it against the files)
          LEAP_REPORT         where it writes its receipt
          LEAP_SLICE, LEAP_BALL, LEAP_EPISODE, LEAP_ROUND, LEAP_ROUND_LIMIT,
          LEAP_BASE, LEAP_WORKTREE, LEAP_GOAL, LEAP_SPEC, LEAP_SPEC_VERSION, LEAP_PROOF
          LEAP_SCOPE          the scope's paths, one a line
          LEAP_FINDINGS       after a tribunal refusal: how many findings to answer
          LEAP_FOLDS_COMMITS  set to 1: commits it makes are folded into the round's one
                              commit, which leap makes with the receipt as trailers

        \b
        Its receipt: it writes YAML to $LEAP_REPORT: `outcome: -1|0|1` and `evidence: TEXT`;
        without that file, the Leap-Outcome and Leap-Evidence trailers of a commit it made;
        else exit 0 without a report is a claim of 1 (never a pass: `leap score` decides),
        any other exit a 0. A timeout or Ctrl-C ends the round at 0. A change outside the
        scope is refused (-1) and rolled back (L6, L9).

        \b
        Exit codes: 0 thrown (with --run: every ball's last round a 1, a claim);
        1 a rule refused the throw, or a round ended at -1; 2 bad input (the config, an
        unknown slice or ball); 3 a hold (a round ended at 0, the ledger was busy, or a
        worktree's setup failed); 130 interrupted (Ctrl-C).
        """
        from leapgit.commands import report
        from leapgit.commands.throw import drive_builders, run_exit_code, throw

        thrown = throw(slice_id, balls, resume, run=drive, remote=remote)
        _emit(report.throw_lines(thrown.result) + thrown.setup_lines())
        if drive:
            result = drive_builders(thrown, jobs, sys.stdout)
            _emit(report.run_lines(result))
            ctx.exit(run_exit_code(result))
        if thrown.setup_failed:  # L2: the thrown worktree lacks what its proof needs
            ctx.exit(EXIT_HOLD)
    return throw_cmd


@lazy("ball", "Check a ball's file map, print its base, or give a stuck ball a repaired "
              "spec.")
def _ball() -> click.Command:
    from pathlib import Path

    @click.group("ball")
    def ball_group() -> None:
        """Check a ball's file map, print its base, or give a stuck ball a repaired spec."""

    @ball_group.command("base")
    @click.argument("slice_id", metavar="SLICE")
    @click.argument("ball_id", metavar="BALL")
    def ball_base_cmd(slice_id: str, ball_id: str) -> None:
        """L5: print the commit the ball's red is built on (first line), and name it
        refs/leap/bases/SLICE/BALL; a dependent ball's is its stack base, which holds its
        dependencies' passed candidates (exit 3 until they passed)."""
        from leapgit.commands.ball import base, base_lines

        _emit(base_lines(slice_id, ball_id, *base(slice_id, ball_id)))

    @ball_group.command("check")
    @click.argument("slice_id", metavar="SLICE")
    @click.argument("ball_id", metavar="BALL")
    def ball_check_cmd(slice_id: str, ball_id: str) -> None:
        """L2: verify the ball's map in its worktree (exit 1 wrong map, 3 missing dependency)."""
        from leapgit.commands import report
        from leapgit.commands.ball import check

        result = check(slice_id, ball_id)
        _emit(report.ball_check_lines(result))
        failure = result.error()
        if failure is not None:
            raise failure

    @ball_group.command("respec")
    @click.argument("slice_id", metavar="SLICE")
    @click.argument("ball_id", metavar="BALL")
    @click.argument("file", type=click.Path(path_type=Path))
    @click.option("--reason", help="why the spec changed (recorded)")
    def ball_respec_cmd(slice_id: str, ball_id: str, file: Path, reason: str | None) -> None:
        """L3: record a repaired spec for a stuck ball as a new spec version."""
        from leapgit.commands import report
        from leapgit.commands.ball import respec

        _emit(report.respec_lines(respec(slice_id, ball_id, file, reason)))
    return ball_group


@lazy("run", "Drive a slice from its cut to the spine: reds, waves, scores, the merge, the "
             "live proof.")
def _run() -> click.Command:
    @click.command("run")
    @click.argument("slice_id", metavar="SLICE")
    @click.option("--jobs", type=click.IntRange(min=1), default=2, show_default=True,
                  help="steps at once (builders, scorings, test authors)")
    @click.option("--max-minutes", type=Finite(min=0, max=MONTH_MINUTES, min_open=True),
                  help="stop with a hold after this long; running rounds are recorded as 0")
    @click.option("--resume-holds", is_flag=True,
                  help="resume, once, a ball whose episode ended at 0 (a checkpoint)")
    @click.option("--json", "as_json", is_flag=True,
                  help="one JSON object per event per line (schemas/run-event.schema.json)")
    @click.option("--heartbeat", type=Finite(min=0, max=DAY_SECONDS), default=None, hidden=True,
                  help="seconds between heartbeat events (0: none)")
    @click.option("--remote", metavar="REMOTE",
                  help="publish each thrown ball on this shared remote and wait for "
                       "workers (`leap worker --remote REMOTE`) to build it; scoring and the "
                       "merge stay here")
    @click.option("--take-over", is_flag=True,
                  help="with --remote: take over the run lease of a run on another clone "
                       "that is gone for good (its machine lost)")
    @click.option("--holder", default="integrator", show_default=True, metavar="NAME",
                  help="the integrator taking the spine's lease for the merge (L9): where "
                       "the server's transport names the pusher, that name")
    @click.option("--poll", type=Finite(min=0.05, max=HOUR_SECONDS), default=1.0, hidden=True)
    @click.pass_context
    def run_cmd(ctx: click.Context, slice_id: str, jobs: int, max_minutes: float | None,
                resume_holds: bool, as_json: bool, heartbeat: float | None,
                remote: str | None, take_over: bool, holder: str, poll: float) -> None:
        """Drive a slice from its cut to the spine: reds, waves, scores, the merge, the
        live proof.

        \b
        Each turn reads the ledger and takes every ball one step on: a red from the test
        author (red.command) when it has none, a throw once its dependencies passed (L5),
        its builder's rounds (as `leap throw --run`), a score of each claim (`leap score`).
        A tribunal refusal goes back to the builder with its findings (T7.6); NEW findings
        flat or rising two rounds in a row stop the ball (T9). Any other -1 stops the ball
        with its respec command (L3). When every ball passed: `leap merge`, then the
        slice's live_proof on the landed spine tip (T9), recorded against the merge.
        Nothing is kept but the ledger: after Ctrl-C, kill -9 or a reboot, `leap run SLICE`
        again goes on where the ledger says. One run of a slice at a time: with --remote,
        on every clone of the remote (a run lease on its ledger, L3).

        \b
        Exit codes: 0 merged and its live proof held (or none declared: said so);
        1 a ball was refused, or the live proof failed; 2 bad input (config, unknown
        slice); 3 a hold (a ball stopped at 0, a T9 escalation, out of time).
        """
        from leapgit.commands.run import run_slice, table_lines
        from leapgit.loop.drive import Options
        from leapgit.worktrees.buildround import HEARTBEAT

        if take_over and remote is None:
            raise LeapUsageError("--take-over takes over a run lease on a shared remote: "
                                 "give it with --remote REMOTE", rule="L3")
        options = Options(jobs, max_minutes, resume_holds,
                          HEARTBEAT if heartbeat is None else heartbeat, remote, poll,
                          take_over, holder)
        end = run_slice(slice_id, sys.stdout, options, as_json)
        if not as_json:
            _emit(table_lines(end, options.given()))
        ctx.exit(end.exit_code)
    return run_cmd


@lazy("worker", "Build published balls from the shared remote: claim, build, push each "
                "round.")
def _worker() -> click.Command:
    @click.command("worker")
    @click.option("--remote", required=True, metavar="REMOTE",
                  help="the shared remote (a git remote's name) whose hooks hold the rules")
    @click.option("--slice", "slice_id", metavar="SLICE", help="serve only this slice")
    @click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True,
                  help="balls built at once")
    @click.option("--once", is_flag=True, help="take one ball, build it, and exit")
    @click.option("--name", metavar="NAME",
                  help="the name claims hold (default host-pid; behind an authenticating "
                       "server, your user name there)")
    @click.option("--poll", type=Finite(min=0.05, max=HOUR_SECONDS), default=1.0, hidden=True)
    @click.pass_context
    def worker_cmd(ctx: click.Context, remote: str, slice_id: str | None, jobs: int,
                   once: bool, name: str | None, poll: float) -> None:
        """Build published balls from the shared remote: claim, build, push each round.

        The balls are published by `leap throw --remote` or `leap run --remote`.

        \b
        Each turn fetches the remote's ledger and ball branches, claims a published ball no
        live claim holds (the remote's atomic ref update decides between racing workers),
        builds it round by round in its own worktree with builder.command, and pushes each
        round's commit and receipt in one atomic push. The claim's lease
        (workers.claim_seconds, default 600) is renewed while it builds; a worker that dies
        leaves it to run out, and another takes the ball over. Ctrl-C records the running
        round as 0 and gives the claim back. Without --once it serves until no ball of the
        served slices is left to build.

        \b
        Exit codes: 0 every ball taken was built; 1 the worker stopped (the remote
        refused or could not be reached); 2 bad input; 3 a ball stopped with an error;
        130 interrupted.
        """
        from leapgit.commands.worker import serve

        end = serve(remote, slice_id, jobs, once, name, poll)
        ctx.exit(end.exit_code)
    return worker_cmd


@lazy("round", "Close a round explicitly: commit the in-scope changes with the receipt (L6).")
def _round() -> click.Command:
    @click.command("round")
    @click.argument("slice_id", metavar="SLICE")
    @click.argument("ball_id", metavar="BALL")
    @click.option("--outcome", required=True, type=click.Choice(["-1", "0", "1"]),
                  help="-1 refuse, 0 hold, 1 pass (a 1 is only ever a claim)")
    @click.option("--evidence", required=True, help="what was run and seen")
    @click.pass_context
    def round_cmd(ctx: click.Context, slice_id: str, ball_id: str, outcome: str,
                  evidence: str) -> None:
        """Close a round explicitly: commit the in-scope changes with the receipt (L6)."""
        from leapgit.commands import report
        from leapgit.commands.round import close

        if not evidence.strip():
            raise click.BadParameter("evidence may not be empty", param_hint="--evidence")
        result = close(slice_id, ball_id, int(outcome), evidence)  # type: ignore[arg-type]
        _emit(report.round_lines(result))
        ctx.exit({1: EXIT_OK, 0: EXIT_HOLD, -1: EXIT_RULE}[result.recorded.receipt.outcome])
    return round_cmd


@lazy("audit-signatures", "Verify every ledger and spine-merge signature against the policy "
                          "of its time.")
def _audit_signatures() -> click.Command:
    @click.command("audit-signatures")
    @click.option("--require-signatures", "require", is_flag=True,
                  help="fail on any unsigned record or merge, too")
    @click.option("--json", "as_json", is_flag=True, help="machine-readable output")
    @click.pass_context
    def audit_signatures_cmd(ctx: click.Context, require: bool, as_json: bool) -> None:
        """Verify every ledger and spine-merge signature against the policy of its time."""
        from leapgit.commands import report
        from leapgit.commands.audit_signatures import audit_signatures_command

        result = audit_signatures_command(require=require)
        if as_json:
            _emit_json(result.to_json())
        else:
            _emit(report.signature_audit_lines(result))
        ctx.exit(EXIT_RULE if result.failed else EXIT_OK)
    return audit_signatures_cmd


@lazy("worktree", "Ball worktrees.")
def _worktree() -> click.Command:
    @click.group("worktree")
    def worktree_group() -> None:
        """Ball worktrees."""

    @worktree_group.command("prune")
    @click.argument("slice_id", required=False, metavar="[SLICE]")
    @click.option("--force", is_flag=True, help="also remove worktrees with uncommitted work")
    def worktree_prune_cmd(slice_id: str | None, force: bool) -> None:
        """Remove worktrees and branches of finished balls (merged, or refused and rolled
        back)."""
        from leapgit.commands import report
        from leapgit.commands.worktree import prune

        _emit(report.prune_lines(prune(slice_id, force)))
    return worktree_group


@lazy("hooks", "Install or remove leapgit's git hooks.")
def _hooks() -> click.Command:
    @click.group("hooks")
    def hooks_group() -> None:
        """Install or remove leapgit's git hooks."""

    @hooks_group.command("install")
    @click.option("--server", is_flag=True,
                  help="install pre-receive (on the shared, bare remote)")
    @click.option("--force", is_flag=True, help="install where core.hooksPath points")
    @click.option("--spine", default=None, help="with --server: the spine branch to protect "
                  "(pinned in the server's git config; default main)")
    @click.option("--ledger-ref", default=None, help="with --server: the ledger ref to protect "
                  "(default refs/heads/leap/ledger)")
    def hooks_install_cmd(server: bool, force: bool, spine: str | None,
                          ledger_ref: str | None) -> None:
        """Install post-commit and pre-push (or, with --server, pre-receive); chains foreign
        hooks."""
        from leapgit.commands.hooks import install_hooks, lines

        _emit(lines(install_hooks(server=server, force=force, spine=spine,
                                  ledger_ref=ledger_ref)))

    @hooks_group.command("uninstall")
    def hooks_uninstall_cmd() -> None:
        """Remove leapgit's hooks and put back the hooks they chained."""
        from leapgit.commands.hooks import lines, uninstall_hooks

        _emit(lines(uninstall_hooks()))
    return hooks_group


@lazy("sync", "Share the ledger: fetch REMOTE's, replay local records onto it, push; retry on "
              "a race.")
def _sync() -> click.Command:
    @click.command("sync")
    @click.argument("remote", default="origin")
    @click.option("--take-remote", "take_remote", is_flag=True,
                  help="let REMOTE decide a true conflict or a refusal: its records stand, "
                       "this clone's differing or refused ones are left out (kept under "
                       "refs/leap/kept/ledger/)")
    def sync_cmd(remote: str, take_remote: bool) -> None:
        """Share the ledger: fetch REMOTE's, replay local records onto it, push; retry on a
        race."""
        from leapgit.ledger.sync import sync

        r = sync(remote, take_remote=take_remote)
        if r.tip is None:  # a hunt: "up to date at nothing", and status named this again
            import shlex

            raise LeapUsageError(f"{remote} holds no ledger, and this clone has none: "
                                 "nothing to share", hint="`leap init` starts one here, then "
                                 f"`leap sync {shlex.quote(remote)}` puts it up there")
        what = "pushed" if r.pushed else "up to date"
        why = (f"{remote}'s records stand (it holds others, or refused them); this clone's "
               f"ledger as it was is kept as {r.kept} (L8)") if r.kept else \
            f"this clone's lease records that lost their number to {remote}'s (L9)"
        _emit([f"ledger {r.ref} on {remote}: {what} at {(r.tip or 'nothing')[:12]} "
               f"({r.records} records replayed, {r.skipped} already there, {r.rounds} "
               "round(s))"] + ([f"left out here: {', '.join(r.left_out)}: {why}"]
                              if r.left_out else []) +
              [f"taken along: {spec.partition(':')[2].removeprefix('refs/heads/')} at "
               f"{spec[:12]}, the round its receipt names (L7)" for spec in r.along] +
              ([f"rounds not taken along: {remote} refused them ({r.along_refused}); their "
                "receipts went up alone"] if r.along_refused else []))
    return sync_cmd


@lazy("quickstart", "Build a throwaway repository and run the whole flow on it (no network, no "
                    "model).")
def _quickstart() -> click.Command:
    from pathlib import Path

    @click.command("quickstart")
    @click.option("--dir", "directory", type=click.Path(path_type=Path),
                  help="where to build the demo repository (default: a new temporary folder)")
    def quickstart_cmd(directory: Path | None) -> None:
        """Build a throwaway repository and run the whole flow on it (no network, no model)."""
        from leapgit.commands.quickstart import quickstart

        quickstart(directory, echo=click.echo)
    return quickstart_cmd


@lazy("tribunal", "Grade a change blind: eight lenses, an author-redacted envelope (T1-T9).")
def _tribunal() -> click.Command:
    from pathlib import Path

    @click.group("tribunal")
    def tribunal_group() -> None:
        """Grade a change blind: eight lenses, an author-redacted envelope (T1-T9)."""

    @tribunal_group.command("convene")
    @click.option("--base", metavar="REV", help="the commit the change starts from")
    @click.option("--head", metavar="REV", help="the candidate commit")
    @click.option("--slice", "slice_id", metavar="S", help="grade a ball: its slice")
    @click.option("--ball", "ball_id", metavar="B", help="grade a ball: its id")
    @click.option("--intent", required=True, help="the change's intent, one line (T5)")
    @click.option("--criteria", required=True, metavar="FILE|TEXT", help="the pass criteria")
    @click.option("--builder", required=True, metavar="model=ID,family=F,session=S",
                  help="who built the candidate (T4)")
    @click.option("--out", type=click.Path(path_type=Path),
                  help="output folder (stamped, 0600)")
    @click.option("--round", "round_no", type=click.IntRange(min=1), default=None,
                  help="the round of the series (default: the next, one past the last "
                       "recorded summary; T9 measures NEW findings across rounds)")
    @click.option("--tests", metavar="COMMAND",
                  help="test command for the mechanical checks (T7)")
    @click.option("--red", metavar="REV", help="the red commit holding the contract tests (T7)")
    def tribunal_convene_cmd(**options: Any) -> None:
        """Convene the tribunal. Exit 0 unanimous pass, 1 refuse, 3 hold/HALT/escalation,
        2 bad input."""
        from leapgit.commands.tribunal import convene_command
        from leapgit.tribunal.report import outcome_lines

        result = convene_command(**options, echo=click.echo)
        _emit(outcome_lines(result))
        raise click.exceptions.Exit(result.decision.exit_code)

    @tribunal_group.command("rungs")
    @click.option("--probe", "run_probe", is_flag=True,
                  help="one canary call per rung first, recorded on the ledger")
    @click.option("--builder", metavar="model=ID,family=F,session=S",
                  help="who builds (default: builder.identity in the config; T4)")
    @click.option("--json", "as_json", is_flag=True, help="print JSON")
    def tribunal_rungs_cmd(run_probe: bool, builder: str | None, as_json: bool) -> None:
        """The rung matrix: per lens the ladder and why a rung is skipped. Exit 0 when every
        lens has a live rung, 3 when some lens has none, 2 bad input."""
        from leapgit.commands.tribunal_rungs import rungs_command
        from leapgit.tribunal.rungs_view import lines, to_json

        r = rungs_command(run_probe=run_probe, builder=builder)
        args = (r.matrix, r.probed, r.not_probed, r.commit)
        _emit_json(to_json(*args)) if as_json else _emit(lines(*args))
        raise click.exceptions.Exit(r.matrix.exit_code)

    @tribunal_group.command("report")
    @click.option("--json", "as_json", is_flag=True, help="print JSON")
    def tribunal_report_cmd(as_json: bool) -> None:
        """How independent the jurors were: agreement per pair of rungs and families, the
        effective number of independent jurors, refusals per lens (README, "Tribunal")."""
        from leapgit.commands.tribunal_report import report_command
        from leapgit.tribunal.independence_view import lines, to_json

        found = report_command()
        _emit_json(to_json(found)) if as_json else _emit(lines(found))
    return tribunal_group


@lazy("red", "T7.1: record COMMIT as the ball's red commit (its proof must fail there).")
def _red() -> click.Command:
    @click.command("red")
    @click.argument("slice_id", metavar="SLICE")
    @click.argument("ball_id", metavar="BALL")
    @click.argument("commit", metavar="COMMIT", required=False)
    @click.option("--carry", is_flag=True,
                  help="L5: carry the ball's red onto its fresh stack base (a restack: its "
                       "dependencies passed again with other bytes)")
    def red_cmd(slice_id: str, ball_id: str, commit: str | None, carry: bool) -> None:
        """T7.1: record COMMIT as the ball's red commit (its proof must fail there).

        With --carry and no COMMIT (L5, a restack): leapgit writes the commit itself, the
        ball's frozen tests byte for byte on its fresh stack base."""
        from leapgit.commands.red import carry as carry_red
        from leapgit.commands.red import lines, red

        if carry == (commit is not None):
            raise UsageError("give COMMIT, or --carry without one", field="COMMIT",
                             hint=f"`leap red {slice_id} {ball_id} COMMIT` records a red "
                                  f"before the build; `leap red {slice_id} {ball_id} --carry` "
                                  "carries a restacked ball's red (`leap ball base "
                                  f"{slice_id} {ball_id}` says which)")
        _emit(lines(carry_red(slice_id, ball_id) if carry else
                    red(slice_id, ball_id, str(commit))))
    return red_cmd


@lazy("score", "L7: derive the ball's outcome.")
def _score() -> click.Command:
    @click.command("score")
    @click.argument("slice_id", metavar="SLICE")
    @click.argument("ball_id", metavar="BALL")
    @click.option("--builder", metavar="model=ID,family=F,session=S",
                  help="who built the candidate (default: builder.identity in the config)")
    @click.option("--remote", metavar="REMOTE",
                  help="a ball published to workers: score the remote's copy of its "
                       "branch (ledger and branch fetched first, the score pushed after)")
    def score_cmd(slice_id: str, ball_id: str, builder: str | None,
                  remote: str | None) -> None:
        """L7: derive the ball's outcome. Exit 0 pass, 1 refuse, 3 hold, 2 bad input."""
        from leapgit.commands.score import exit_code, lines, score_ball

        result = score_ball(slice_id, ball_id, builder, echo=click.echo, remote=remote)
        _emit(lines(result))
        raise click.exceptions.Exit(exit_code(result))
    return score_cmd


@lazy("merge", "L8, L9: merge a complete slice onto the spine, as the one integrator.")
def _merge() -> click.Command:
    @click.command("merge")
    @click.argument("slice_id", metavar="SLICE")
    @click.option("--holder", default="integrator", show_default=True,
                  help="the integrator taking the spine's lease")
    @click.option("--builder", metavar="model=ID,family=F,session=S",
                  help="who built the balls (default: builder.identity in the config)")
    def merge_cmd(slice_id: str, holder: str, builder: str | None) -> None:
        """L8, L9: merge a complete slice onto the spine, as the one integrator."""
        from leapgit.commands.merge import lines, merge_slice

        _emit(lines(merge_slice(slice_id, holder, builder, echo=click.echo)))
    return merge_cmd


@lazy("lease", "The spine's integrator lease (L9).")
def _lease() -> click.Command:
    @click.group("lease")
    def lease_group() -> None:
        """The spine's integrator lease (L9)."""

    @lease_group.command("release")
    @click.option("--holder", default="integrator", show_default=True,
                  help="the integrator that holds the lease")
    @click.option("--reason", help="why, for the record")
    @click.option("--force", is_flag=True,
                  help="give back a lease another clone's merge took (that clone is gone)")
    def lease_release_cmd(holder: str, reason: str | None, force: bool) -> None:
        """Give back a lease whose merge died (killed outright); `leap sync` shares it."""
        from leapgit.commands.lease import release

        done = release(holder, reason, force=force)
        click.echo(f"lease {done.number} on {done.spine} released by {holder}")
    return lease_group


@lazy("presets", "The builder and juror presets: each one's command line, as leap runs it.")
def _presets() -> click.Command:
    @click.command("presets")
    @click.option("--json", "as_json", is_flag=True, help="machine-readable output")
    def presets_cmd(as_json: bool) -> None:
        """The builder and juror presets: each one's command line, as leap runs it.

        Each preset (`builder: {preset: NAME}`, a rung's `provider: command, preset: NAME`)
        with its expansion, its model flag, its stdin, and whether its program is on PATH."""
        from leapgit.commands import presets

        if as_json:
            _emit_json(presets.listing())
        else:
            _emit(presets.lines())
    return presets_cmd


@lazy("audit", "Re-derive every pass from plain git data.")
def _audit() -> click.Command:
    @click.command("audit")
    @click.option("--json", "as_json", is_flag=True, help="machine-readable output (README)")
    @click.option("--export", "export", type=click.Choice(["in-toto"]),
                  help="write the passes' provenance as in-toto statements (JSON lines)")
    @click.option("--slice", "slice_id", metavar="S", help="with --export: only this slice")
    @click.option("--require-signatures", "require", is_flag=True,
                  help="fail on any unsigned ledger commit or spine merge, too")
    def audit_cmd(as_json: bool, export: str | None, slice_id: str | None,
                  require: bool) -> None:
        """Re-derive every pass from plain git data. Exit 0 when all holds, 1 on a violation."""
        from leapgit.commands.audit import audit, export_in_toto, lines

        if export:
            for line in export_in_toto(slice_id):
                click.echo(line)
            return
        report = audit(require_signatures=require, keep=console.LEAVING.kept)
        if as_json:
            _emit_json(report.to_json())
        else:
            _emit(lines(report))
        raise click.exceptions.Exit(0 if report.ok else 1)
    return audit_cmd


def run(entry: click.Command, args: list[str] | None = None) -> NoReturn:
    """Run a click entry point with leapgit's one error handler around it."""
    console.finish(lambda: _invoke(entry, args))


def _invoke(entry: click.Command, args: list[str] | None) -> int:
    try:
        # with standalone_mode=False, click returns a command's ctx.exit(code) instead of exiting
        code = entry.main(args=args, prog_name="leap", standalone_mode=False)
    except click.exceptions.Abort:
        console.interrupted()
    except click.ClickException as exc:
        exc.show()
        return EXIT_INPUT
    except click.exceptions.Exit as exc:
        return exc.exit_code
    return code if isinstance(code, int) else 0
