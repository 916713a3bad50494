"""Run the foreign hook leapgit found at install time (moved to ``<hook>.leap-legacy``),
first, with the same arguments and stdin; its refusal stands."""

from __future__ import annotations

import errno
import os

LEGACY_SUFFIX = ".leap-legacy"


def run_chained(hook_path: str | None, args: list[str], stdin: bytes | None) -> int:
    if not hook_path:
        return 0
    legacy = hook_path + LEGACY_SUFFIX
    if not (os.path.isfile(legacy) and os.access(legacy, os.X_OK)):
        return 0  # git, too, skips a hook file that is not executable
    import subprocess

    try:
        return subprocess.run([legacy, *args], input=stdin, check=False).returncode
    except OSError as exc:
        if exc.errno != errno.ENOEXEC:
            raise
    # a script with no `#!` line: git runs it through the shell (run-command.c, ENOEXEC),
    # and so does the chain (blind review r2)
    return subprocess.run(["/bin/sh", legacy, *args], input=stdin, check=False).returncode
