"""`leap slice check FILE` (validate only) and `leap slice cut FILE` (validate, stamp, record)."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from leapgit import git
from leapgit.errors import LeapError, UsageError
from leapgit.gitobj import oid
from leapgit.ledger.repo import open_repo
from leapgit.ledger.store import Written
from leapgit.ledger.workspace import Workspace, open_workspace
from leapgit.records.config import CONFIG_PATH
from leapgit.records.types import SliceRecord
from leapgit.slices.check import CheckedSlice, check_slice, load_draft
from leapgit.slices.cut import check_against_ledger, record_cut
from leapgit.slices.scope import TreeResolver
from leapgit.worktrees.stack import spine_tip
from leapgit.worktrees.upstream import require_spine_pushable


@dataclass(frozen=True)
class CutResult:
    record: SliceRecord
    checked: CheckedSlice
    written: Written


def _base(ws: Workspace, rev: str) -> str:
    base = git.rev_parse(rev, ws.paths.root)
    if base is None:
        raise UsageError(
            f"base {rev!r} is not a commit in this repository", field="--base", rule="L2",
            hint="commit something first, or pass --base REV",
        )
    return base


def _check(ws: Workspace, file: Path, base: str, command: str, rev: str = "HEAD"
           ) -> CheckedSlice:
    draft = load_draft(file)
    given = f" --base {shlex.quote(rev)}" if rev != "HEAD" else ""
    require_spine_pushable(ws, f"`leap slice {command} {shlex.quote(str(file))}{given}` again")

    with open_repo(str(ws.paths.common_dir)) as repo:
        def at(commit: str) -> CheckedSlice:
            tree = repo.object_store[oid(commit)].tree
            return check_slice(draft, TreeResolver(repo, tree, ws.paths.top))

        checked = at(base)
        # L8: a slice cut against a spine that does not exist could never be thrown; before
        # `leap init` no spine is named yet (a blind review: a check there was refused for
        # the default's name, and its hint planted a branch the project does not use)
        named = ((ws.main_top or ws.paths.root) / CONFIG_PATH).exists()
        tip = spine_tip(ws.paths.root, ws.config.spine) if named else \
            git.rev_parse(f"refs/heads/{ws.config.spine}", ws.paths.root)
        # a base of another history is not judged here: a ledger commit is refused as one
        # (``slices.cut``), and a project's unrelated root has no tip to be thrown from
        if tip is not None and tip != base and git.run(
                ["merge-base", base, tip], ws.paths.root, check=False).returncode == 0:
            _stamps_hold_at_the_tip(ws, file, checked, at, (base, tip), command)
        return checked


def _stamps_hold_at_the_tip(ws: Workspace, file: Path, checked: CheckedSlice,
                            at: Callable[[str], CheckedSlice], commits: tuple[str, str],
                            command: str) -> None:
    """L2, L5: a ball is thrown from the spine's tip, and its file map is checked there
    against the stamps of the cut. A base whose scope files differ from the tip's (a
    checkout behind the spine) made every such ball's first round a refused stale map."""
    spine, (base, tip) = ws.config.spine, commits
    try:
        there = {s.path: s.blob for scope in at(tip).scopes.values() for s in scope}
    except LeapError as exc:
        stale = [f"the draft does not hold there: {exc.lines()[0]}"]
    else:
        stale = [s.path for scope in checked.scopes.values() for s in scope
                 if there.get(s.path) != s.blob]
    if stale:
        shown = ", ".join(stale[:5]) + (f" and {len(stale) - 5} more" if len(stale) > 5 else "")
        # git reads a name as a tag before a branch: name the spine so it reads as its tip
        named = spine if git.rev_parse(spine, ws.paths.root) == tip else f"refs/heads/{spine}"
        raise UsageError(
            f"{len(stale)} scope file(s) differ between the base {base[:12]} and "
            f"{spine}'s tip {tip[:12]}, where the balls are thrown: {shown}; each such ball "
            "would be refused at its throw (stale map)", file=str(file), field="base",
            rule="L2", hint=f"stamp the scope at the spine's tip: `leap slice {command} "
            f"{shlex.quote(str(file))} --base {shlex.quote(named)}`")


def check(file: Path, base: str = "HEAD", start: Path | str = ".") -> CheckedSlice:
    """Every check the cut makes, ``record_cut``'s against the ledger included when there
    is one; nothing is written."""
    ws = open_workspace(start)
    base_sha = _base(ws, base)
    checked = _check(ws, file, base_sha, "check", base)
    with ws.ledger() as ledger:
        view = ledger.view()
        if view.commit is not None:
            check_against_ledger(ledger, view, checked, base_sha)
    return checked


def cut(file: Path, base: str = "HEAD", start: Path | str = ".") -> CutResult:
    ws = open_workspace(start)
    base_sha = _base(ws, base)
    checked = _check(ws, file, base_sha, "cut", base)
    with ws.ledger() as ledger:
        record, written = record_cut(ledger, checked, base_sha)
    return CutResult(record=record, checked=checked, written=written)
