"""`leap hooks install [--server] [--force]` and `leap hooks uninstall`."""

from __future__ import annotations

from pathlib import Path

from leapgit.hookimpl.install import HooksResult, install, uninstall


def install_hooks(start: Path | str = ".", *, server: bool = False, force: bool = False,
                  spine: str | None = None, ledger_ref: str | None = None) -> HooksResult:
    return install(start, server=server, force=force, spine=spine, ledger_ref=ledger_ref)


def uninstall_hooks(start: Path | str = ".") -> HooksResult:
    return uninstall(start)


def lines(result: HooksResult) -> list[str]:
    if not result.actions:
        return [f"no leapgit hooks in {result.hooks_dir}"]
    return [f"{a.hook:<12} {a.action} ({a.path})" for a in result.actions] + \
        [f"{'pinned':<12} {key} = {value} (the refs this server protects)"
         for key, value in result.pinned] + \
        [f"{'set':<12} {s.key} = {s.value} in this server's git config ({s.why})"
         for s in result.settings]
