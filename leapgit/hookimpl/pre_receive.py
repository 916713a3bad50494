"""git ``pre-receive`` (server, authoritative): one run sees every pushed ref and refuses
the whole push on any violation, listing each."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from leapgit.hookimpl.failclosed import hook_main, leave

if TYPE_CHECKING:
    from leapgit.rules.refusal import Refusal

HOOK = "pre-receive"


def check(data: bytes) -> int:
    from leapgit.records.cache import RecordCache
    from leapgit.rules.context import PushContext, parse_receive_lines, server_config
    from leapgit.rules.objects import Objects, open_receiving_repo
    from leapgit.rules.push import check_push
    from leapgit.rules.pusher import BadPushCertificate, Pusher, pusher_from_env
    from leapgit.rules.trees import check_pushed_trees

    updates = parse_receive_lines(data)
    pusher: Pusher | None = None
    problem = None
    try:
        pusher = pusher_from_env(os.environ)
    except BadPushCertificate as exc:
        problem = str(exc)
    git_dir = Path(os.environ.get("GIT_DIR", ".")).resolve()
    repo = open_receiving_repo(git_dir)
    try:
        objects = Objects(repo, RecordCache(git_dir, "config"))
        bad_trees = check_pushed_trees(objects, tuple(updates), os.environ)
        if bad_trees:  # before any rule reads a tree: git and dulwich would read it apart
            return _report(bad_trees, [])
        notes: list[str] = []
        config = server_config(objects, notes)
        ctx = PushContext(objects, config, tuple(updates), pusher, problem, authority=True,
                          notes=notes)
        refusals = check_push(ctx)
    finally:
        repo.close()
    return _report(refusals, ctx.notes)


def _report(refusals: list[Refusal], notes: list[str]) -> int:
    from leapgit.rules.push import report_lines

    for line in report_lines(HOOK, refusals, notes):
        print(line, file=sys.stderr)
    return 1 if refusals else 0


def main(argv: list[str] | None = None) -> int:
    return hook_main(HOOK, check, sys.argv if argv is None else argv)


if __name__ == "__main__":
    leave(main())
