"""What `leap status` prints, and its last answer kept until something it reads moves.

`leap status` is what a person, a prompt or a watching loop runs over and again, and its
answer is a function of a few things only: the ledger's tip, the spine's tip (a spine
commit outside an integration reopens a merged ball, L8), the config (leapgit's, and git's
by its time: the remote a published slice's hints name), the argument and leapgit's own
code and schemas. When none of them moved since the last run, the answer
that run printed is printed again, and the ledger is never opened: no dulwich, no record,
no rule is loaded (issue 13 item 7: the start-up of `leap status` under half of
`pre-commit --version`'s). The spine is read as git stores it whatever this clone's git
config or grafts say (``reopen.spine_hits``), and an answer computed while a merge it
looks after is not in this clone (a fetch alone may bring it), or while the spine's lease
is open (a stopped merge's files here say what ends it), is not kept. Anything else
(a shallow clone, whose answer names a fetch from its remotes; a ref name this reader
does not take as is; a kept answer unreadable or from another key) is computed afresh.
Only a cache: an answer that cannot be kept costs the next run a computation, never
correctness.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

import leapgit
from leapgit import __version__, git
from leapgit.commands import console
from leapgit.ledger.workspace import Workspace, open_workspace
from leapgit.records.cache import keep_json, schemas_dir, schemas_stamp

FORMAT = 1
_SLICE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")  # slice.schema.json's ids


def show(slice_id: str | None, as_json: bool, start: Path | str = ".") -> None:
    """What `leap status` prints: the click command and the entry point's fast path
    (``leapgit.launch``) both call this."""
    ws = open_workspace(start)
    key = _key(ws, slice_id)
    said = None if key is None else _kept(ws, slice_id, key)
    if said is None:
        said, keepable = _answer(ws, slice_id)
        if key is not None and keepable:
            _keep(ws, slice_id, key, said)
    if as_json:
        console.emit_json(said["json"])
    else:
        console.emit(said["lines"])


def _answer(ws: Workspace, slice_id: str | None) -> tuple[dict[str, Any], bool]:
    """The answer computed, and whether it may be kept (``Status.keepable``)."""
    from leapgit.commands import report
    from leapgit.commands.status import status

    result = status(slice_id, ws=ws)
    return {"lines": report.status_lines(result), "json": report.status_json(result)}, \
        result.keepable


def _key(ws: Workspace, slice_id: str | None) -> str | None:
    """What the answer is computed from, hashed; None when it is not kept."""
    if slice_id is not None and not _SLICE_ID.fullmatch(slice_id):
        return None  # said wrong: the computation says how
    common = ws.paths.common_dir
    if os.path.lexists(common / "shallow"):
        return None  # its answer names a fetch from the remotes the config lists
    tips = _tips(ws.paths.common_dir, ws.config.ledger_ref, f"refs/heads/{ws.config.spine}")
    if tips is None:
        return None
    package = os.path.dirname(os.path.abspath(leapgit.__file__))
    try:  # git's config names the spine's remote, which a published slice's hints name
        config = str(os.stat(common / "config").st_mtime_ns)
    except OSError:
        config = ""
    parts = [str(FORMAT), __version__, schemas_stamp(schemas_dir() or "", package),
             repr(ws.config), *tips, slice_id or "", config]
    return hashlib.sha1("\0".join(parts).encode("utf-8", "surrogateescape"),
                        usedforsecurity=False).hexdigest()


def _tips(common: Path, *refs: str) -> list[str] | None:
    """The commit each of ``refs`` points at ("" for a ref that is not there), in one `git
    for-each-ref`; None when a name is not a plain ``refs/...`` one."""
    if not all(r.startswith("refs/") and not any(c in r for c in "*?[\\") for r in refs):
        return None
    proc = git.run(["for-each-ref", "--format=%(objectname) %(refname)", *refs], common,
                   check=False)
    if proc.returncode != 0:
        return None
    found = {}
    for line in proc.stdout.decode("utf-8", "surrogateescape").splitlines():
        commit, _, name = line.partition(" ")
        found[name] = commit
    return [found.get(r, "") for r in refs]


def _path(ws: Workspace, slice_id: str | None) -> Path:
    name = f"slice-{slice_id}.json" if slice_id else "every.json"
    return ws.paths.common_dir / "leap-cache" / f"status-{__version__}-{FORMAT}" / name


def _kept(ws: Workspace, slice_id: str | None, key: str) -> dict[str, Any] | None:
    try:
        with open(_path(ws, slice_id), "rb") as fh:
            found = json.loads(fh.read())
    except (OSError, ValueError, RecursionError):  # nested past the parser's depth
        return None
    if not isinstance(found, dict) or found.get("key") != key or \
            not isinstance(found.get("lines"), list) or \
            not all(isinstance(line, str) for line in found["lines"]) or "json" not in found:
        return None  # another key's, or damaged from outside: computed afresh
    return found


def _keep(ws: Workspace, slice_id: str | None, key: str, said: dict[str, Any]) -> None:
    """One answer a command line, replaced whole."""
    keep_json(_path(ws, slice_id), {"key": key, **said})
