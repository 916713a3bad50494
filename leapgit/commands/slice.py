"""`leap slice check FILE` (validate only) and `leap slice cut FILE` (validate, stamp, record)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from leapgit import git
from leapgit.errors import UsageError
from leapgit.gitobj import oid
from leapgit.ledger.store import Written
from leapgit.ledger.workspace import Workspace, open_workspace
from leapgit.records.types import SliceRecord
from leapgit.slices.check import CheckedSlice, check_slice, load_draft
from leapgit.slices.cut import record_cut
from leapgit.slices.scope import TreeResolver


@dataclass(frozen=True)
class CutResult:
    record: SliceRecord
    checked: CheckedSlice
    written: Written


def _base(ws: Workspace, rev: str) -> str:
    base = git.rev_parse(rev, ws.paths.root)
    if base is None:
        raise UsageError(
            f"base {rev!r} is not a commit in this repository",
            hint="commit something first, or pass --base REV",
        )
    return base


def _check(ws: Workspace, file: Path, base: str) -> CheckedSlice:
    draft = load_draft(file)
    from leapgit.ledger.repo import open_repo

    with open_repo(str(ws.paths.common_dir)) as repo:
        tree = repo.object_store[oid(base)].tree
        resolver = TreeResolver(repo, tree, ws.paths.top)
        return check_slice(draft, resolver)


def check(file: Path, base: str = "HEAD", start: Path | str = ".") -> CheckedSlice:
    ws = open_workspace(start)
    return _check(ws, file, _base(ws, base))


def cut(file: Path, base: str = "HEAD", start: Path | str = ".") -> CutResult:
    ws = open_workspace(start)
    base_sha = _base(ws, base)
    checked = _check(ws, file, base_sha)
    with ws.ledger() as ledger:
        record, written = record_cut(ledger, checked, base_sha)
    return CutResult(record=record, checked=checked, written=written)
