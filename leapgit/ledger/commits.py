"""Building one ledger commit in-process with dulwich: its blobs and only the trees on the
changed paths (an append costs the same at ten records or ten thousand), its message with
trailers, its committer (``GIT_COMMITTER_*`` or git's config) and its signature. Nothing here
moves a ref: ``writer.swap`` does, by compare-and-swap."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

from dulwich.objects import Blob, Commit, Tree

from leapgit.errors import UsageError
from leapgit.gitobj import oid
from leapgit.ledger.view import TREE_MODE, cached_tree

if TYPE_CHECKING:
    from leapgit.gitobj import GitRepo
    from leapgit.signing.sign import Signer

BLOB_MODE = 0o100644


def _ident(value: str | None) -> str:
    """A name or email git accepts in a commit header: no angle brackets, no control
    characters (a newline there would forge header lines; git fsck refuses the commit)."""
    return "".join(c for c in (value or "") if c not in "<>" and c >= " ").strip()


def pinned_date(value: str | None) -> tuple[int, int] | None:
    """``GIT_COMMITTER_DATE`` as git reads it (``gitdates``), or None when unset. The time a
    signature is judged at (S2) is this committer time."""
    if not value:
        return None
    from leapgit.gitdates import read_git_date

    found = read_git_date(value)
    if found is None:
        raise UsageError(f"GIT_COMMITTER_DATE={value!r} is not a date leapgit reads",
                         hint="use git's raw '<seconds> <+hhmm>' (a zone within +-23:59), "
                              "ISO 8601 ('2024-01-02T03:04:05+01:00') or RFC 2822 ('Tue, 2 "
                              "Jan 2024 03:04:05 +0100'); unset it to use the clock")
    return found


class Committer:
    """Writes ledger commits into one repository: who commits (read once), and the key that
    signs (``signing.sign``: ``LEAP_SIGNING_KEY``, git's ``leap.signingKey``, or
    ``user.signingKey`` with ``gpg.format=ssh``); ``signer`` overrides that: a ``Signer``,
    or ``None`` for unsigned."""

    def __init__(self, repo: GitRepo, signer: Signer | None | bool = True) -> None:
        self.repo = repo
        self._signer_choice = signer
        self._ident: bytes | None = None
        self._config_stack: Any = None

    def commit(self, parent: str | None, records: dict[str, bytes], message: bytes) -> bytes:
        """A commit of ``records`` (path -> bytes) on ``parent``, stored; its id."""
        store = self.repo.object_store
        nested: dict[bytes, object] = {}
        for path, data in sorted(records.items()):
            blob = Blob.from_string(data)
            store.add_object(blob)
            *dirs, name = path.encode().split(b"/")
            level = nested
            for part in dirs:
                level = level.setdefault(part, {})  # type: ignore[assignment]
            level[name] = blob.id
        base = None if parent is None else store[oid(parent)].tree  # type: ignore[attr-defined]
        commit = Commit()
        commit.tree = self._put_tree(base, nested)
        commit.parents = [oid(parent)] if parent else []
        ident, when, tz = self.identity()
        commit.author = commit.committer = ident
        commit.author_time = commit.commit_time = when
        commit.author_timezone = commit.commit_timezone = tz
        commit.encoding = b"UTF-8"
        commit.message = message
        signer = self.signer()
        if signer is not None:
            signer.sign(commit)  # the signature is part of the id: sign before storing
        store.add_object(commit)
        return commit.id

    def signer(self) -> Signer | None:
        """The acting key, resolved once from the environment and git's config."""
        from leapgit.signing.sign import Signer, configured_signer

        if self._signer_choice is True:
            self._signer_choice = configured_signer(self._config())
        choice = self._signer_choice
        return choice if isinstance(choice, Signer) else None

    def _put_tree(self, base: bytes | None, changes: dict[bytes, object]) -> bytes:
        """Write a new tree: ``base`` plus ``changes`` (name -> blob id, or a nested dict).
        Only the trees on changed paths are rewritten; parsed trees are cached by id, so an
        append reads nothing it read before (trees are immutable)."""
        tree = Tree()
        if base is not None:
            for entry in cached_tree(self.repo, base).iteritems():
                tree.add(entry.path, entry.mode, entry.sha)
        for name, change in changes.items():
            if isinstance(change, dict):
                child = tree[name][1] if name in tree else None
                tree.add(name, TREE_MODE, oid(self._put_tree(child, change)))
            else:
                tree.add(name, BLOB_MODE, change)  # type: ignore[arg-type]
        self.repo.object_store.add_object(tree)
        return tree.id

    def identity(self) -> tuple[bytes, int, int]:
        """(``name <email>``, seconds, zone) of the commit written now."""
        if self._ident is None:
            name = os.environ.get("GIT_COMMITTER_NAME")
            email = os.environ.get("GIT_COMMITTER_EMAIL")
            name = name or self._config_value(b"name")
            email = email or self._config_value(b"email")
            self._ident = (f"{_ident(name) or 'leapgit'} "
                           f"<{_ident(email) or 'leapgit@localhost'}>").encode()
        pinned = pinned_date(os.environ.get("GIT_COMMITTER_DATE"))
        if pinned is not None:
            return self._ident, *pinned
        when = int(time.time())
        tz = -time.timezone if not time.localtime(when).tm_isdst else -time.altzone
        return self._ident, when, tz

    def _config_value(self, key: bytes) -> str | None:
        """``user.<key>`` from git's config, or None (each on its own: a name without an
        email, or the reverse, still counts)."""
        try:
            return str(self._config().get((b"user",), key).decode("utf-8", "replace"))
        except KeyError:
            return None

    def _config(self) -> Any:
        """git's config as this repository sees it (read once: every file of the stack)."""
        if self._config_stack is None:
            self._config_stack = self.repo.get_config_stack()
        return self._config_stack

    def reflog(self, message: bytes) -> dict[str, Any]:
        """The reflog entry's fields, ours: left to dulwich, it looks up a default identity
        (and imports ``socket``) on every ref move."""
        who, when, tz = self.identity()
        return {"committer": who, "timestamp": when, "timezone": tz, "message": message}
