"""git ``pre-receive`` (server, authoritative): one run sees every pushed ref and refuses
the whole push on any violation, listing each."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from leapgit.hookimpl.failclosed import hook_main

HOOK = "pre-receive"


def check(data: bytes) -> int:
    from leapgit.hookimpl.objects import Objects, open_receiving_repo
    from leapgit.hookimpl.pusher import BadPushCertificate, Pusher, pusher_from_env
    from leapgit.hookimpl.rules.context import PushContext, parse_receive_lines, server_config
    from leapgit.hookimpl.rules.push import check_push, report_lines

    updates = parse_receive_lines(data)
    pusher: Pusher | None = None
    problem = None
    try:
        pusher = pusher_from_env(os.environ)
    except BadPushCertificate as exc:
        problem = str(exc)
    with open_receiving_repo(Path(os.environ.get("GIT_DIR", ".")).resolve()) as repo:
        objects = Objects(repo)
        notes: list[str] = []
        config = server_config(objects, notes)
        ctx = PushContext(objects, config, tuple(updates), pusher, problem, authority=True,
                          notes=notes)
        refusals = check_push(ctx)
    for line in report_lines(HOOK, refusals, ctx.notes):
        print(line, file=sys.stderr)
    return 1 if refusals else 0


def main(argv: list[str] | None = None) -> int:
    return hook_main(HOOK, check, sys.argv if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())
