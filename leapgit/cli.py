"""The click layer: options in, exit code out. No rule lives here."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any, Callable, NoReturn

import click

from leapgit.errors import EXIT_INPUT, LeapError


def _emit(lines: list[str]) -> None:
    for line in lines:
        click.echo(line)


def _emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=False))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="leapgit", prog_name="leap")
def cli() -> None:
    """leapgit: cut a change into balls, throw them to builders, score them blind,
    and merge them through one write spine, with every step recorded in git."""


@cli.command("init")
@click.option("--spine", metavar="BRANCH", help="the protected branch (default: current branch)")
def init_cmd(spine: str | None) -> None:
    """Write .leap/config.yaml and start the ledger branch (idempotent)."""
    from leapgit import report
    from leapgit.commands.init import init

    _emit(report.init_lines(init(spine=spine)))


@cli.group("slice")
def slice_group() -> None:
    """Validate and cut slices."""


@slice_group.command("check")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--base", default="HEAD", show_default=True, help="commit the scope is read at")
def slice_check_cmd(file: Path, base: str) -> None:
    """Validate a slice draft (L1, L2, L4); writes nothing."""
    from leapgit import report
    from leapgit.commands.slice import check

    _emit(report.check_lines(check(file, base)))


@slice_group.command("cut")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--base", default="HEAD", show_default=True, help="commit the scope is stamped at")
def slice_cut_cmd(file: Path, base: str) -> None:
    """Validate a draft, stamp every scope file's blob id, record the slice."""
    from leapgit import report
    from leapgit.commands.slice import cut

    _emit(report.cut_lines(cut(file, base)))


@cli.command("status")
@click.argument("slice_id", required=False, metavar="[SLICE]")
@click.option("--json", "as_json", is_flag=True, help="machine-readable output")
def status_cmd(slice_id: str | None, as_json: bool) -> None:
    """Each slice's balls in waves, with state and rounds used."""
    from leapgit import report
    from leapgit.commands.status import status

    result = status(slice_id)
    if as_json:
        _emit_json(result.to_json())
    else:
        _emit(report.status_lines(result))


@cli.command("log")
@click.option("-n", "limit", type=click.IntRange(min=1), help="show at most N entries")
@click.option("--slice", "slice_id", help="only entries of this slice")
@click.option("--json", "as_json", is_flag=True, help="machine-readable output")
def log_cmd(limit: int | None, slice_id: str | None, as_json: bool) -> None:
    """The ledger's history, newest first."""
    from leapgit import report
    from leapgit.commands.log import log

    entries = log(limit, slice_id)
    if as_json:
        _emit_json([e.to_json() for e in entries])
    else:
        _emit(report.log_lines(entries))


@cli.group("hooks")
def hooks_group() -> None:
    """Install or remove leapgit's git hooks."""


@hooks_group.command("install")
@click.option("--server", is_flag=True, help="install pre-receive (on the shared, bare remote)")
@click.option("--force", is_flag=True, help="install where core.hooksPath points")
def hooks_install_cmd(server: bool, force: bool) -> None:
    """Install post-commit and pre-push (or, with --server, pre-receive); chains foreign hooks."""
    from leapgit.commands.hooks import install_hooks, lines

    _emit(lines(install_hooks(server=server, force=force)))


@hooks_group.command("uninstall")
def hooks_uninstall_cmd() -> None:
    """Remove leapgit's hooks and put back the hooks they chained."""
    from leapgit.commands.hooks import lines, uninstall_hooks

    _emit(lines(uninstall_hooks()))


@cli.command("sync")
@click.argument("remote", default="origin")
def sync_cmd(remote: str) -> None:
    """Share the ledger: fetch REMOTE's, replay local records onto it, push; retry on a race."""
    from leapgit.commands.sync import sync

    r = sync(remote)
    what = "pushed" if r.pushed else "up to date"
    _emit([f"ledger {r.ref} on {remote}: {what} at {(r.tip or 'nothing')[:12]} "
           f"({r.records} records replayed, {r.skipped} already there, {r.rounds} round(s))"])


@cli.command("quickstart")
@click.option("--dir", "directory", type=click.Path(path_type=Path),
              help="where to build the demo repository (default: a new temporary folder)")
def quickstart_cmd(directory: Path | None) -> None:
    """Build a throwaway repository and run the whole flow on it (no network, no model)."""
    from leapgit.commands.quickstart import quickstart

    quickstart(directory, echo=click.echo)


def _crash_log(exc: BaseException) -> Path:
    folder = Path(os.environ.get("XDG_STATE_HOME", Path.home() / ".local" / "state")) / "leapgit"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        folder = Path(tempfile.gettempdir())
    fd, name = tempfile.mkstemp(prefix="crash-", suffix=".log", dir=folder)
    with os.fdopen(fd, "w") as fh:
        fh.write("".join(traceback.format_exception(exc)))
    return Path(name)


def run(entry: Callable[..., Any], args: list[str] | None = None) -> NoReturn:
    """Run a click entry point with leapgit's one error handler around it."""
    try:
        entry.main(args=args, prog_name="leap", standalone_mode=False)
    except LeapError as exc:
        for line in exc.lines():
            click.echo(f"leap: {line}", err=True)
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("leap: interrupted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_INPUT)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("leap: interrupted", err=True)
        sys.exit(130)
    except Exception as exc:  # the one place an unexpected error is caught, logged, reported
        path = _crash_log(exc)
        click.echo(f"leap: internal error: {type(exc).__name__}: {exc}", err=True)
        click.echo(f"leap: the traceback is in {path}; please report it", err=True)
        sys.exit(70)
    sys.exit(0)


def main() -> NoReturn:
    run(cli)
