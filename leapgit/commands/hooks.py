"""`leap hooks install [--server] [--force]` and `leap hooks uninstall`."""

from __future__ import annotations

from pathlib import Path

from leapgit.hookimpl.install import HooksResult, install, uninstall


def install_hooks(start: Path | str = ".", *, server: bool = False,
                  force: bool = False) -> HooksResult:
    return install(start, server=server, force=force)


def uninstall_hooks(start: Path | str = ".") -> HooksResult:
    return uninstall(start)


def lines(result: HooksResult) -> list[str]:
    if not result.actions:
        return [f"no leapgit hooks in {result.hooks_dir}"]
    return [f"{a.hook:<12} {a.action} ({a.path})" for a in result.actions]
