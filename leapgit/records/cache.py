"""Records already parsed and validated, kept by git blob id in the repository's git dir
(``leap-cache/records-<version>-<format>-<schemas>/``), so the post-commit hook reads a
ball's records without loading a YAML parser or a schema validator (together ~40 ms of a
hook's start).

An entry is keyed by content: the same bytes parse and validate the same way under the same
schemas, so an entry never goes stale; another leapgit version, or a schema file changed in
a development checkout, reads a folder of its own. An entry holds JSON, which carries every
value a record may hold (strings, numbers, booleans, null, lists, mappings) exactly. A
missing or damaged entry costs a parse, never correctness: the reader falls back to parsing
and validating the bytes. The cache is opt-in (``Ledger(..., cache_records=True)``): the
hook, and `leap throw`, which fills it for the hook.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import leapgit
from leapgit import __version__

if TYPE_CHECKING:
    from collections.abc import Container

FORMAT = 1
_stamp: str | None = None  # this process's schemas_stamp()
STALE_AFTER = 7 * 24 * 3600.0  # seconds: what other versions left and nothing wrote since
# what leapgit names in leap-cache: <kind>-<version>-<format>[-<stamp>][.json]
# (a pattern, compiled only by a sweep: the hook imports this module on every round)
_OURS = r"[a-z]+-[0-9][0-9A-Za-z.+!_]*-[0-9]+(-[0-9a-f]{12})?(\.json)?"


def blob_id(data: bytes) -> str:
    """The git blob id of ``data`` (what the ledger tree will name it by)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def schemas_stamp(where: str | None = None, code: str | None = None, also: str = "") -> str:
    """Which schemas, and which checks, validated an entry: the names, sizes and times of
    the schema files (``where``) and of the modules of ``code`` (``leapgit/records`` by
    default, where the checks a schema cannot say live, which a cached entry skips: a
    development checkout that changes one reads anew) and ``also`` (by default dulwich's
    version, whose ref-name check the config's checks call), hashed; stat calls only
    (reading them would cost the hook what the cache saves)."""
    if where is None and code is None:
        global _stamp
        if _stamp is None:
            import dulwich  # its package alone: the version of the ref-name check records use

            found = schemas_dir()
            _stamp = schemas_stamp(found or "", os.path.dirname(os.path.abspath(__file__)),
                                   ".".join(map(str, dulwich.__version__)))
        return _stamp
    parts = _stats(where, ".json") + _stats(code, ".py") + [also]
    return hashlib.sha1("\n".join(parts).encode(), usedforsecurity=False).hexdigest()[:12]


def _stats(where: str | None, suffix: str) -> list[str]:
    parts = [f"{suffix}@"]  # a schemas folder and a code folder never stamp alike
    for top, dirs, files in os.walk(where) if where else ():
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(suffix):
                path = os.path.join(top, name)
                try:
                    st = os.stat(path)
                except OSError:  # a dangling link (an editor's lock file): no module
                    continue
                parts.append(f"{os.path.relpath(path, where)}:{st.st_size}:{st.st_mtime_ns}")
    return parts


def schemas_dir() -> str | None:
    """Where the schema files are: in the package when installed, beside it when it is an
    editable checkout (``schemas/`` is shipped as ``leapgit._schemas``); what
    ``schema.schema_text`` reads, so the stamp names the files that validated."""
    package = os.path.dirname(os.path.abspath(leapgit.__file__))
    for where in (os.path.join(package, "_schemas"),
                  os.path.join(os.path.dirname(package), "schemas")):
        if os.path.isdir(where):
            return where
    return None


class RecordCache:
    def __init__(self, git_dir: Path, namespace: str = "records") -> None:
        folder = f"{namespace}-{__version__}-{FORMAT}-{schemas_stamp()}"
        self.root = Path(git_dir) / "leap-cache" / folder

    def _path(self, blob: str) -> str:
        return os.path.join(self.root, blob[:2], blob[2:] + ".json")

    def get(self, blob: str) -> dict[str, Any] | None:
        try:
            with open(self._path(blob), "rb") as fh:
                found = json.loads(fh.read())
        except (OSError, ValueError, RecursionError):  # nested past the parser's depth
            return None
        return found if isinstance(found, dict) else None

    def put(self, blob: str, record: dict[str, Any]) -> None:
        path = self._path(blob)
        try:
            if not os.path.isdir(self.root):  # a new version's or stamp's first entry
                os.makedirs(self.root, exist_ok=True)
                sweep(self.root.parent, keep={self.root.name})
        except OSError:
            return  # a read-only git dir still reads, only slower
        keep_json(path, record)


def keep_json(path: str | Path, data: Any) -> None:
    """``data`` as JSON at ``path``, written whole (aside, then renamed: a reader finds
    the old file or the new, never half), its folder made; best effort: a git dir that
    cannot keep it (read-only, a file where the folder goes) costs the next reader a
    computation, never an answer."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False, separators=(",", ":"))
        os.replace(tmp, path)
    except (OSError, TypeError, ValueError):
        try:
            os.unlink(tmp)
        except OSError:
            pass  # not there, or not removable either (a read-only mount)


def sweep(folder: Path, keep: Container[str], names: str = _OURS) -> None:
    """What other leapgit versions, or other stamps of a development checkout, left in
    ``folder`` (the git dir's ``leap-cache``, or the user's compiled validators; never a
    folder it links to; only ``names`` of leapgit's own making, none in ``keep``) and
    nothing wrote for a week: removed, so upgrades and edits do not pile entries up.
    Called when an entry of a new stamp is made, so rarely; best effort: an entry another
    process still reads costs it a parse or a compile (every reader falls back to one),
    never an answer."""
    import time

    cutoff = time.time() - STALE_AFTER
    if os.path.islink(folder):
        return  # the git dir's own folder only: never a folder of the user's it links to
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.name in keep or not re.fullmatch(names, entry.name) or \
                    entry.stat(follow_symlinks=False).st_mtime >= cutoff:
                continue
            if entry.is_dir(follow_symlinks=False):
                _remove_tree(entry.path)
            else:
                os.unlink(entry.path)
        except OSError:
            continue


def _remove_tree(top: str) -> None:
    """``shutil.rmtree`` without its import (bz2, lzma: the hook and `leap status` load
    neither), best effort: what cannot go stays."""
    for folder, dirs, files in os.walk(top, topdown=False):
        for name in files:
            try:
                os.unlink(os.path.join(folder, name))
            except OSError:
                pass
        for name in dirs:
            path = os.path.join(folder, name)
            try:
                os.unlink(path) if os.path.islink(path) else os.rmdir(path)
            except OSError:
                pass
    try:
        os.rmdir(top)
    except OSError:
        pass
