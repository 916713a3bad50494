"""`leap hooks install [--server] [--force]` and `leap hooks uninstall`."""

from __future__ import annotations

import shlex
from pathlib import Path

from leapgit.hookimpl.install import CLIENT_HOOKS, HooksResult, husky_line, install, uninstall
from leapgit.rules.context import PIN_SPINE


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
         for s in result.settings] + husky_lines(result.husky) + _unpinned(result)


def _unpinned(result: HooksResult) -> list[str]:
    head = result.unpinned_head
    if head is None:
        return []
    spine = dict(result.pinned).get(PIN_SPINE)
    return [f"{'note':<12} this server holds no {spine}, the spine it protects, but holds "
            f"{head}, which is not protected: if {head} is the spine, run `leap hooks install "
            f"--server --spine {shlex.quote(head)}`"]


def husky_lines(folder: Path | None) -> list[str]:
    """What a project whose hooks husky runs must add: git runs husky's hooks, never the
    ones leapgit installed, until husky's hook files call them."""
    if folder is None:
        return []
    # husky v8 has git run its hook files itself: a new one needs a `#!` line and the
    # executable bit (v9's dispatcher runs them with `sh`)
    v8 = not (folder / "_" / "h").is_file()
    new = " (a new file: `#!/usr/bin/env sh` as its first line, and `chmod +x` it)" \
        if v8 else ""
    return ["husky runs this repository's git hooks (core.hooksPath): leapgit's run only "
            f"when husky's hook files call them; add this line to each{new}, then commit "
            "them"] + [f"  {folder / hook}: {husky_line(hook)}" for hook in CLIENT_HOOKS]
