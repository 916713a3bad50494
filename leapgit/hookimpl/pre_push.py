"""git ``pre-push`` (client): the checks ``pre-receive`` would run, before the network.

The spine and ball branches are judged against the remote's ledger as the push names it
(its old tip, when this clone holds it), else the local ledger standing in for it: never
against a pushed ledger, as on the server (issue 18 F1). A remote tip this clone has never
fetched cannot be judged here, and the server will."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from leapgit.hookimpl.failclosed import hook_main, leave

if TYPE_CHECKING:
    from leapgit.git import RepoPaths

HOOK = "pre-push"


def check(data: bytes) -> int:
    from leapgit.git import discover
    from leapgit.records.cache import RecordCache
    from leapgit.records.config import load_config
    from leapgit.rules.context import PushContext, parse_push_lines
    from leapgit.rules.objects import Objects
    from leapgit.rules.push import NOTHING_SENT, check_push, report_lines

    updates = parse_push_lines(data)
    if not updates:
        return 0
    paths = discover(".")
    if not _leap_here(paths):
        return 0  # a hooks folder many repositories share (core.hooksPath): not this one's
    # the config through the record cache, as post-commit reads it: no YAML parser is
    # loaded for bytes found valid once (~10 ms of every push)
    config = load_config(paths.top, RecordCache(paths.common_dir, "config"))
    from leapgit.ledger.repo import open_repo

    with open_repo(str(paths.common_dir)) as repo:
        ctx = PushContext(Objects(repo), config, tuple(updates))
        refusals = check_push(ctx)
    for line in report_lines(HOOK, refusals, ctx.notes):
        print(line, file=sys.stderr)
    if refusals:
        print(f"leap {HOOK}: {NOTHING_SENT}", file=sys.stderr)
    return 1 if refusals else 0


def _leap_here(paths: RepoPaths) -> bool:
    """Whether leapgit works in this repository: its config is in the work tree, or a
    ledger is here, on its branch or as a remote's copy (a fresh clone, whose config is not
    committed, keeps the remote's ledger under ``refs/remotes/``). A repository with none
    of these has no rules to judge by."""
    from leapgit.git import run
    from leapgit.records.types import Config

    top = paths.top
    if top is not None and (top / ".leap" / "config.yaml").is_file():
        return True
    branch = Config().ledger_ref.removeprefix("refs/heads/")
    refs = run(["for-each-ref", "--format=%(refname)", f"refs/heads/{branch}",
                "refs/remotes/", "refs/leap/remotes/"], paths.root).stdout.decode(
        "utf-8", "surrogateescape").split()
    return any(r == f"refs/heads/{branch}" or r.endswith(f"/{branch}") for r in refs)


def main(argv: list[str] | None = None) -> int:
    return hook_main(HOOK, check, sys.argv if argv is None else argv)


if __name__ == "__main__":
    leave(main())
