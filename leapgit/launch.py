"""The `leap` process's entry point.

`leap status` is what a person, a prompt or a watching loop runs over and again, so it is
answered without loading click (a fifth of its start-up, issue 13 item 7) when its
arguments are plain: ``status``, an optional slice id and an optional ``--json``; so is
`leap --version` (click's parse of it would be two fifths of its start-up). Every
other command line, `leap status --help` and any option it does not know among them, goes
to the click layer (``leapgit.cli``), which parses it as ever; both print and end through
``leapgit.commands.console``, the one error handler.
"""

from __future__ import annotations

import sys
from typing import NoReturn

from leapgit import __version__
from leapgit.commands import console


def main() -> NoReturn:
    args = sys.argv[1:]
    if args[:1] in console.LEAVE_AT_ONCE:
        import gc

        gc.disable()
        console.LEAVING.kept = []
    try:
        run(args)
    except SystemExit as exc:
        if args[:1] in console.LEAVE_AT_ONCE:
            # read-only (a records cache entry is written whole, by rename, before it is
            # used), every file closed, its report printed: freeing what it read (~10 s of
            # a 10,000-ball audit, ~20 ms of CPU of `leap status`'s ~115) would only delay
            # the exit, so leave at once
            console.leave_at_once(exc.code)
        raise


def run(args: list[str]) -> NoReturn:
    """Run the command line ``args``: the fast path when it is a plain `leap status`, else
    click's parse of it."""
    if args == ["--version"]:  # as click's version option says it, without loading click
        console.finish(lambda: console.echo(f"leap, version {__version__}"))
    plain = plain_status(args)
    if plain is not None:
        console.finish(lambda: _status(*plain))
    try:  # a Ctrl-C while click and the command table load ends as any other (a soak)
        from leapgit.cli import cli
        from leapgit.cli import run as run_click
    except KeyboardInterrupt:
        console.interrupted()
    run_click(cli, args)


def _status(slice_id: str | None, as_json: bool) -> None:
    # imported inside the error handler: a Ctrl-C or a broken install while the ledger's
    # modules load ends as every command's does
    from leapgit.commands.status_cache import show

    show(slice_id, as_json)


def plain_status(args: list[str]) -> tuple[str | None, bool] | None:
    """``(slice id or None, --json)`` when ``args`` is `status` with at most one slice id
    and at most one ``--json``, in any order, and nothing else; None for any other line,
    which click parses (and explains, when it is wrong)."""
    if args[:1] != ["status"]:
        return None
    words = [a for a in args[1:] if a != "--json"]
    if len(args) - 1 - len(words) > 1 or len(words) > 1 or any(w.startswith("-") for w in words):
        return None
    return (words[0] if words else None), len(words) < len(args) - 1
