"""The ledger store: the only code that writes the ledger ref.

A write adds files and never edits or deletes one (L8: written truth). It is one commit on
top of the current tip, built in-process with dulwich (only the trees on the changed paths
are rewritten, so an append costs the same at ten records or ten thousand), and the ref
moves only by compare-and-swap under a process-wide file lock. When the swap loses a race
(another writer, or a plain ``git update-ref``), the additions are replayed on the new tip:
additions to distinct paths commute.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from leapgit.errors import InvalidRecord, LeapError, LedgerBusy, LedgerConflict, UsageError
from leapgit.gitobj import oid, refname
from leapgit.ledger.layout import ROOT_RECORD
from leapgit.ledger.lock import LockTimeout, WriterLock

if TYPE_CHECKING:
    from dulwich.object_store import BaseObjectStore
    from dulwich.objects import Tree

    from leapgit.gitobj import GitRepo
    from leapgit.records.cache import RecordCache
    from leapgit.records.kinds import Loadable
    from leapgit.signing.sign import Signer

DEFAULT_REF = "refs/heads/leap/ledger"
LOCK_TIMEOUT = 60.0
MAX_ATTEMPTS = 200
EMPTY_LOCK_GRACE = 0.1  # seconds: git writes its ref lock's content right after creating it
WRITING_MARKER = "leap-ledger.writing"  # present only while a leapgit writer is mid-write
_TREE_MODE = 0o040000
_BLOB_MODE = 0o100644

_T = TypeVar("_T")
R = TypeVar("R", bound="Loadable")
_locks: dict[str, WriterLock] = {}  # one lock object per path per process
# Parsed trees by id, one cache per object store: a tree is immutable, so an entry never goes
# stale, and keeping stores apart never lets one repository "see" another's objects.
_tree_caches: dict[str, dict[bytes, Tree]] = {}
_TREE_CACHE_MAX = 4096


def cached_tree(repo: GitRepo, sha: bytes) -> Tree:
    return cached_tree_in(repo.object_store, sha)


def cached_tree_in(store: BaseObjectStore, sha: bytes) -> Tree:
    cache = _tree_caches.setdefault(str(getattr(store, "path", id(store))), {})
    tree = cache.pop(sha, None)
    if tree is not None:
        cache[sha] = tree  # most recently used last: the root and folder trees stay hot
    else:
        try:
            tree = store[oid(sha)]  # type: ignore[assignment]
        except KeyError:
            raise LedgerCorrupt(
                f"object {sha.decode()} is missing from {store}",
                hint="the repository is damaged: run `git fsck` and restore it from a clone",
            ) from None
        if len(cache) >= _TREE_CACHE_MAX:
            # evict the least recently used; clearing all would re-parse the big folder
            # trees on every later read, and a walk of the whole ledger would go quadratic
            del cache[next(iter(cache))]
        cache[sha] = tree  # type: ignore[assignment]
    return tree  # type: ignore[return-value]


class LedgerMissing(UsageError):
    pass


class LedgerCorrupt(LeapError):
    pass


class Written(NamedTuple):
    commit: str
    paths: tuple[str, ...]
    attempts: int


class Replayed(NamedTuple):
    tip: str  # the local ledger ref now
    replayed: int  # local commits rebuilt on the base
    records: int  # records they added that the base lacked
    skipped: int  # records the base already held, byte for byte


def _writer_lock(path: Path) -> WriterLock:
    key = str(path)
    if key not in _locks:
        _locks[key] = WriterLock(key, LOCK_TIMEOUT, on_wait=_say_waiting)
    return _locks[key]


def _say_waiting(path: str) -> None:
    sys.stderr.write(f"leap: waiting for the ledger lock ({path}): another leapgit process is "
                     f"writing; giving up after {LOCK_TIMEOUT:.0f} s\n")
    sys.stderr.flush()


def _ident(value: str | None) -> str:
    """A name or email git accepts in a commit header: no angle brackets, no control
    characters (a newline there would forge header lines; git fsck refuses the commit)."""
    return "".join(c for c in (value or "") if c not in "<>" and c >= " ").strip()


def _clean_trailer(value: str) -> str:
    return " ".join(str(value).split())


def format_message(subject: str, trailers: Sequence[tuple[str, str]], body: str = "") -> bytes:
    text = _clean_trailer(subject) + "\n"
    if body.strip():
        text += "\n" + body.strip() + "\n"
    if trailers:
        text += "\n" + "".join(f"{k}: {_clean_trailer(v)}\n" for k, v in trailers)
    return text.encode("utf-8")


class LedgerView:
    """A read-only look at one ledger commit."""

    def __init__(self, repo: GitRepo, commit: str | None,
                 records: RecordCache | None = None) -> None:
        self._repo = repo
        self.commit = commit
        self.records = records
        self.tree: bytes | None = None
        if commit is not None:
            self.tree = repo.object_store[oid(commit)].tree  # type: ignore[attr-defined]

    def _tree(self, sha: bytes) -> Tree:
        return cached_tree(self._repo, sha)

    def _entry(self, path: str) -> tuple[int, bytes] | None:
        if self.tree is None:
            return None
        sha = self.tree
        mode = _TREE_MODE
        for part in path.encode().split(b"/"):
            if mode != _TREE_MODE:
                return None
            tree = self._tree(sha)  # a missing object is corruption, not an absent record
            try:
                mode, sha = tree[part]
            except KeyError:
                return None
        return mode, sha

    def blob_id(self, path: str) -> str | None:
        entry = self._entry(path)
        if entry is None or entry[0] == _TREE_MODE:
            return None
        return entry[1].decode()

    def read(self, path: str) -> bytes | None:
        entry = self._entry(path)
        if entry is None or entry[0] == _TREE_MODE:
            return None
        return self._repo.object_store[oid(entry[1])].as_raw_string()

    def record(self, path: str, record_type: type[R]) -> R | None:
        """The record at ``path`` as ``record_type``, or None: parsed and validated against
        the schema of its kind (the ledger is data anyone can push to: every record read is
        input); a record of another kind there is an ``InvalidRecord``."""
        raw = self._validated(path)
        if raw is None:
            return None
        from leapgit.records.kinds import kind_of

        expected = kind_of(record_type)
        if raw["kind"] != expected:
            raise InvalidRecord(f"a {raw['kind']} record where a {expected} record belongs",
                                file=path, field="kind")
        return record_type.from_dict(raw)

    def check(self, path: str) -> None:
        """Parse and validate the record at ``path``, as ``record`` does (filling the record
        cache, when there is one), or raise ``InvalidRecord``."""
        self._validated(path)

    def _validated(self, path: str) -> dict[str, Any] | None:
        """The validated mapping at ``path``; it never leaves the view. With a record
        cache, bytes parsed once are not parsed again."""
        entry = self._entry(path)
        if entry is None or entry[0] == _TREE_MODE:
            return None
        blob = entry[1].decode()
        if self.records is not None:
            hit = self.records.get(blob)
            if hit is not None:
                return hit
        from leapgit.records import schema, yamlio

        data = self._repo.object_store[oid(entry[1])].as_raw_string()
        raw = yamlio.loads(data, f"{self.commit and self.commit[:12]}:{path}")
        schema.validate_record(raw, path)
        if self.records is not None:
            self.records.put(blob, raw)
        return raw

    def exists(self, path: str) -> bool:
        return self._entry(path) is not None

    def list(self, directory: str) -> list[str]:
        """Names directly under ``directory`` (files and folders), sorted."""
        entry = self._entry(directory) if directory else (
            (_TREE_MODE, self.tree) if self.tree else None
        )
        if entry is None or entry[0] != _TREE_MODE:
            return []
        return sorted(name.decode() for name in self._tree(entry[1]))

    def walk(self, directory: str = "") -> Iterator[str]:
        """Every file path under ``directory``."""
        for name in self.list(directory):
            path = f"{directory}/{name}" if directory else name
            entry = self._entry(path)
            if entry and entry[0] == _TREE_MODE:
                yield from self.walk(path)
            else:
                yield path


class Ledger(AbstractContextManager["Ledger"]):
    """Open with ``Ledger(common_git_dir, ref)``; always close it (``with``).

    Every commit it writes is signed when a key is configured (``signing.sign``:
    ``LEAP_SIGNING_KEY``, git's ``leap.signingKey``, or ``user.signingKey`` with
    ``gpg.format=ssh``); ``signer`` overrides that: a ``Signer``, or ``None`` for unsigned."""

    def __init__(self, git_dir: Path, ref: str = DEFAULT_REF,
                 signer: Signer | None | bool = True, cache_records: bool = False) -> None:
        from leapgit.ledger.repo import open_repo

        self.git_dir = Path(git_dir)
        self.records: RecordCache | None = None
        if cache_records:
            from leapgit.records.cache import RecordCache

            self.records = RecordCache(self.git_dir)
        self.ref = ref
        self._ref_b = ref.encode()
        self._signer_choice = signer
        self._ident: bytes | None = None
        self._config_stack: Any = None
        try:
            self.repo = open_repo(str(self.git_dir))
        except Exception as exc:  # dulwich raises NotGitRepository and friends
            raise UsageError(f"cannot open git repository at {git_dir}: {exc}") from None
        if getattr(getattr(self.repo, "object_format", None), "name", "sha1") != "sha1":
            self.repo.close()
            raise UsageError("sha256 repositories are not supported yet")

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self.repo.close()

    # reading

    def tip(self) -> str | None:
        try:
            return self.repo.refs[refname(self._ref_b)].decode()
        except KeyError:
            return None

    def view(self, commit: str | None = None) -> LedgerView:
        return LedgerView(self.repo, commit if commit is not None else self.tip(), self.records)

    def require(self) -> LedgerView:
        view = self.view()
        if view.commit is None:
            raise LedgerMissing(
                f"no ledger yet ({self.ref} does not exist)", hint="run `leap init` first"
            )
        self._check_is_ledger(view)
        return view

    def _check_is_ledger(self, view: LedgerView) -> None:
        """The ref must hold a leapgit ledger (its root record stays at every tip: the ledger
        is add-only), never a branch of the user's that the config happens to name."""
        from leapgit.records.types import LedgerRoot

        try:
            ok = view.record(ROOT_RECORD, LedgerRoot) is not None  # validated, cached
        except LeapError:  # an older or hand-made root: its kind is what counts here
            from leapgit.records import yamlio

            data = view.read(ROOT_RECORD)
            try:
                root = yamlio.loads(data, ROOT_RECORD) if data is not None else None
            except LeapError:
                root = None
            ok = isinstance(root, dict) and root.get("kind") == "ledger"
        if not ok:
            raise UsageError(
                f"{self.ref} exists but is not a leapgit ledger (no {ROOT_RECORD})",
                file=".leap/config.yaml", field="ledger_ref",
                hint="point ledger_ref at a ref of its own; leapgit never writes onto a branch "
                     "it did not start",
            )

    # writing

    def init(self, root_record: bytes) -> tuple[str, bool]:
        """Create the orphan root commit; return (commit, created). Idempotent."""
        current = self.tip()
        if current is not None:
            self._check_is_ledger(self.view(current))
            return current, False
        written = self._write(
            {ROOT_RECORD: root_record}, "leap: start the ledger",
            [("Leap-Record", ROOT_RECORD)], "", root=True,
        )
        return written.commit, written.attempts > 0

    def append(
        self,
        records: Mapping[str, bytes],
        subject: str,
        trailers: Sequence[tuple[str, str]] = (),
        body: str = "",
        *,
        identical_ok: bool = False,
    ) -> Written:
        """Add ``records`` (path -> bytes) in one commit. Refuses to touch an existing path,
        unless ``identical_ok`` and the bytes are the same (then that path is skipped)."""
        if not records:
            raise LeapError("nothing to write")
        trailer_list = list(trailers) + [("Leap-Record", p) for p in sorted(records)]
        return self._write(dict(records), subject, trailer_list, body, identical_ok=identical_ok)

    def replay_onto(self, base: str) -> Replayed:
        """Make the local ledger a descendant of ``base`` (another copy's tip, fetched into
        this repository): rebuild each local commit ``base`` lacks on top of it, oldest
        first, with its message, and move the ref by compare-and-swap. Additions to distinct
        paths commute; a path ``base`` holds with the same bytes is skipped; with different
        bytes it is a ``LedgerConflict`` naming the path, and nothing moves. A separately
        started ledger's root record is dropped when ``base`` has its own."""
        return self._locked(lambda: self._replay_locked(base))

    def _replay_locked(self, base: str) -> Replayed:
        from dulwich.diff_tree import tree_changes
        from dulwich.file import FileLocked
        from dulwich.walk import ORDER_TOPO, Walker

        store = self.repo.object_store
        for attempt in range(MAX_ATTEMPTS):
            old = self.tip()
            local = [] if old is None else [
                e.commit for e in Walker(store, [oid(old)], exclude=[oid(base)],
                                         order=ORDER_TOPO, reverse=True)]
            tip, records, skipped = base, 0, 0
            for commit in local:
                parent_tree = (store[commit.parents[0]].tree  # type: ignore[attr-defined]
                               if commit.parents else None)
                added: dict[str, bytes] = {}
                for change in tree_changes(store, parent_tree, commit.tree):
                    if change.type != "add" or change.new is None:
                        where = change.old.path if change.old and change.old.path else b"?"
                        raise LedgerConflict("a local ledger commit changes a record",
                                             file=where.decode(), rule="L8")
                    path = (change.new.path or b"").decode()
                    if path == ROOT_RECORD and self.view(tip).exists(ROOT_RECORD):
                        skipped += 1
                        continue
                    added[path] = store[oid(change.new.sha or b"")].as_raw_string()
                todo = self._check_paths(tip, added, identical_ok=True)
                skipped += len(added) - len(todo)
                if todo:
                    tip = self._commit(tip, todo, commit.message).decode()
                    records += len(todo)
            try:
                if old is None:
                    moved = self.repo.refs.add_if_new(
                        refname(self._ref_b), oid(tip), **self._reflog(b"leap: sync"))
                else:
                    moved = old == tip or self.repo.refs.set_if_equals(
                        refname(self._ref_b), oid(old), oid(tip),
                        **self._reflog(b"leap: sync replay"))
            except FileLocked:
                moved = False  # git holds the ref lock right now: wait and count again
            if moved:
                return Replayed(tip, len(local), records, skipped)
            time.sleep(min(0.001 * (attempt + 1), 0.05))
        raise LedgerBusy(f"the ledger ref {self.ref} kept moving; gave up after "
                         f"{MAX_ATTEMPTS} tries", hint="nothing was written; try again")

    def _lock_path(self) -> Path:
        return self.git_dir / "leap-ledger.lock"

    def _write(
        self, records: dict[str, bytes], subject: str, trailers: list[tuple[str, str]],
        body: str, *, root: bool = False, identical_ok: bool = False,
    ) -> Written:
        return self._locked(
            lambda: self._write_locked(records, subject, trailers, body, root, identical_ok)
        )

    def _locked(self, write: Callable[[], _T]) -> _T:
        """Run one write under leapgit's lock, with the mid-write marker that lets the next
        writer clean up after one that died (SIGKILL, power loss)."""
        lock = _writer_lock(self._lock_path())
        marker = self.git_dir / WRITING_MARKER
        try:
            with lock:
                if marker.exists():
                    self._recover_after_crash()
                marker.touch()
                try:
                    return write()
                finally:
                    marker.unlink(missing_ok=True)
        except LockTimeout:
            raise LedgerBusy(
                f"another leapgit process held the ledger lock for {LOCK_TIMEOUT:.0f} s",
                file=str(self._lock_path()), hint="nothing was written; try again",
            ) from None

    def _write_locked(
        self, records: dict[str, bytes], subject: str, trailers: list[tuple[str, str]],
        body: str, root: bool, identical_ok: bool,
    ) -> Written:
        from dulwich.file import FileLocked

        message = format_message(subject, trailers, body)
        for attempt in range(MAX_ATTEMPTS):
            old = self.tip()
            if root and old is not None:
                return Written(old, (), 0)
            if not root and old is None:
                raise LedgerMissing(
                    f"no ledger yet ({self.ref} does not exist)", hint="run `leap init` first"
                )
            todo = self._check_paths(old, records, identical_ok)
            if not todo:
                return Written(old or "", (), attempt)
            try:
                commit = self._commit(old, todo, message)
            except FileLocked as exc:
                raise LedgerBusy(
                    "an object lock file is held by another writer",
                    file=str(getattr(exc, "lockfilename", "") or exc),
                    hint="nothing was written; if no git or leapgit process is running, "
                         "delete that file",
                ) from None
            try:
                if old is None:
                    moved = self.repo.refs.add_if_new(
                        refname(self._ref_b), oid(commit), **self._reflog(message[:200])
                    )
                    if not moved and self.tip() is None:
                        raise self._blocked_ref()
                else:
                    moved = self.repo.refs.set_if_equals(
                        refname(self._ref_b), oid(old), oid(commit),
                        **self._reflog(b"leap: " + message[:200]),
                    )
            except FileLocked:
                moved = False  # git holds the ref lock right now: wait and count again
            except OSError as exc:  # the ref lock was given up: the ref did not move
                raise self._ref_not_moved(exc) from None
            if moved:
                return Written(commit.decode(), tuple(sorted(todo)), attempt + 1)
            time.sleep(min(0.001 * (attempt + 1), 0.05))
        lock = self.git_dir / (self.ref + ".lock")
        raise LedgerBusy(
            f"the ledger ref {self.ref} kept moving or stayed locked; gave up after "
            f"{MAX_ATTEMPTS} tries",
            file=str(lock) if lock.exists() else None,
            hint="nothing was written; try again (if no git process is running and the lock "
                 "file stays, delete it)",
        )

    def _ref_not_moved(self, exc: OSError) -> LeapError:
        """Why a ref move failed, by what failed: the reflog line (written before the ref
        moves), a ref or folder in the ref's way, or the disk itself."""
        where = str(exc.filename or "")
        why = exc.strerror or str(exc)
        if where.startswith(str(self.git_dir / "logs") + os.sep):
            fix = ("remove that folder: git keeps the ref's reflog there as a file"
                   if isinstance(exc, IsADirectoryError) else
                   "a file stands where git keeps a folder of logs/: remove it"
                   if isinstance(exc, (NotADirectoryError, FileExistsError)) else
                   "make the reflog file and its folder writable, or free disk space")
            return UsageError(f"cannot write the ledger ref's reflog: {why}", file=where,
                              hint=f"nothing was written; {fix}, then try again")
        if isinstance(exc, (NotADirectoryError, IsADirectoryError, FileExistsError)):
            return self._blocked_ref()  # e.g. a branch named refs/heads/leap
        return UsageError(f"cannot move the ledger ref {self.ref}: {why}", file=where or None,
                          hint="nothing was written; check the git dir is writable and has "
                               "space, then try again")

    def _blocked_ref(self) -> UsageError:
        return UsageError(
            f"cannot create {self.ref}: another ref is in the way (a ref named like one of "
            "its folders, or refs below it)", file=".leap/config.yaml", field="ledger_ref",
            hint="see `git for-each-ref refs/heads`; choose another ledger_ref",
        )

    def _recover_after_crash(self) -> None:
        """A leapgit writer died inside a write (it left the marker). We hold leapgit's lock,
        so the lock files it may have left are no one's now: dulwich's loose-object locks
        (git never names a loose object ``*.lock``) and a ref lock holding a leapgit commit.
        A ref lock holding anything else may be a live git transaction: it is left alone."""
        objects = self.git_dir / "objects"
        removed = 0
        for folder in objects.glob("[0-9a-f][0-9a-f]"):
            for stale in folder.glob("*.lock"):
                stale.unlink(missing_ok=True)
                removed += 1
        ref_lock = self.git_dir / (self.ref + ".lock")
        if ref_lock.exists() and self._leapgit_lock(ref_lock):
            ref_lock.unlink(missing_ok=True)
            removed += 1
        if removed:
            sys.stderr.write(
                f"leap: warning: removed {removed} lock file(s) left in {self.git_dir} by a "
                "leapgit writer that died mid-write; the ledger ref was never moved by it\n"
            )

    def _leapgit_lock(self, lock: Path) -> bool:
        content = lock.read_bytes().strip()
        if not content:
            # Empty: our dead writer was killed between creating and filling it (git fills
            # its own within microseconds). Look once more before deciding.
            time.sleep(EMPTY_LOCK_GRACE)
            try:
                return not lock.read_bytes().strip()
            except FileNotFoundError:
                return False
        try:
            obj = self.repo.object_store[oid(content)]
        except (KeyError, ValueError):
            return False
        return b"\nLeap-Record: " in getattr(obj, "message", b"")

    def _check_paths(
        self, tip: str | None, records: dict[str, bytes], identical_ok: bool
    ) -> dict[str, bytes]:
        from dulwich.objects import Blob

        view = self.view(tip) if tip else None
        todo: dict[str, bytes] = {}
        for path, data in records.items():
            if view is None:
                todo[path] = data
                continue
            existing = view.blob_id(path)
            if existing is None and view.exists(path):
                raise LedgerConflict(
                    "a folder of the ledger already has this name", file=path, rule="L8"
                )
            if existing is None:
                parent = path.rsplit("/", 1)[0] if "/" in path else ""
                while parent:
                    if view.blob_id(parent) is not None:
                        raise LedgerConflict(
                            f"{parent} is a record, not a folder", file=path, rule="L8"
                        )
                    parent = parent.rsplit("/", 1)[0] if "/" in parent else ""
                todo[path] = data
                continue
            if identical_ok and existing == Blob.from_string(data).id.decode():
                continue
            raise LedgerConflict(
                "the ledger already holds this record; records are never edited",
                file=path, rule="L8", hint="write a new record instead of changing this one",
            )
        return todo

    def _commit(self, parent: str | None, records: dict[str, bytes], message: bytes) -> bytes:
        from dulwich.objects import Blob, Commit

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
        ident, when, tz = self._identity()
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
        from dulwich.objects import Tree

        tree = Tree()
        if base is not None:
            for entry in cached_tree(self.repo, base).iteritems():
                tree.add(entry.path, entry.mode, entry.sha)
        for name, change in changes.items():
            if isinstance(change, dict):
                child = tree[name][1] if name in tree else None
                tree.add(name, _TREE_MODE, oid(self._put_tree(child, change)))
            else:
                tree.add(name, _BLOB_MODE, change)  # type: ignore[arg-type]
        self.repo.object_store.add_object(tree)
        return tree.id

    def _identity(self) -> tuple[bytes, int, int]:
        if self._ident is None:
            name = os.environ.get("GIT_COMMITTER_NAME")
            email = os.environ.get("GIT_COMMITTER_EMAIL")
            name = name or self._config_value(b"name")
            email = email or self._config_value(b"email")
            self._ident = (f"{_ident(name) or 'leapgit'} "
                           f"<{_ident(email) or 'leapgit@localhost'}>").encode()
        pinned = _pinned_date(os.environ.get("GIT_COMMITTER_DATE"))
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

    def _reflog(self, message: bytes) -> dict[str, Any]:
        """The reflog entry's fields, ours: left to dulwich, it looks up a default identity
        (and imports ``socket``) on every ref move."""
        who, when, tz = self._identity()
        return {"committer": who, "timestamp": when, "timezone": tz, "message": message}


def _pinned_date(value: str | None) -> tuple[int, int] | None:
    """``GIT_COMMITTER_DATE`` read as git reads it, in the three forms git documents: its raw
    form (``<seconds> <+hhmm>``, ``@<seconds>``), ISO 8601 and RFC 2822; a time without a zone
    is local time. The time a signature is judged at (S2) is this committer time."""
    if not value:
        return None
    try:
        found = _read_date(value.strip())
    except (ValueError, OverflowError):  # a year 0, seconds past what the clock holds...
        found = None
    if found is None:
        raise UsageError(f"GIT_COMMITTER_DATE={value!r} is not a date leapgit reads",
                         hint="use git's raw '<seconds> <+hhmm>' (a zone within +-23:59), "
                              "ISO 8601 ('2024-01-02T03:04:05+01:00') or RFC 2822 ('Tue, 2 "
                              "Jan 2024 03:04:05 +0100'); unset it to use the clock")
    return found


MAX_SECONDS = 2**53  # far past any clock; git refuses larger ones too


def _read_date(text: str) -> tuple[int, int] | None:
    parts = text.removeprefix("@").split()
    # a bare number is seconds only from 100000000 on, as git reads it ("20240102" is no time)
    if parts and parts[0].isascii() and parts[0].isdigit() and len(parts) <= 2 and \
            (text.startswith("@") or int(parts[0]) >= 100_000_000):
        when = int(parts[0])
        if when > MAX_SECONDS:
            return None
        zone = _zone(parts[1]) if len(parts) == 2 else _local_offset(when)
        return None if zone is None else (when, zone)
    return _iso_date(text) or _rfc2822_date(text)


def _zone(text: str) -> int | None:
    """``+hhmm``, ``+hh:mm``, ``+hh`` or ``Z`` as seconds east of UTC."""
    if text in ("Z", "z"):
        return 0
    digits = text[1:].replace(":", "")
    digits = digits + "00" if len(digits) == 2 else digits
    if text[:1] not in ("+", "-") or len(digits) != 4 or not digits.isdigit() or \
            int(digits[:2]) > 23 or int(digits[2:]) > 59:  # git fsck refuses such a zone
        return None
    return (-1 if text[0] == "-" else 1) * (int(digits[:2]) * 3600 + int(digits[2:]) * 60)


def _local_offset(when: int) -> int:
    return -time.altzone if time.localtime(when).tm_isdst > 0 else -time.timezone


def _iso_date(text: str) -> tuple[int, int] | None:
    """``2024-01-02T03:04:05``, a space for the ``T``, fractions of a second (dropped, as git
    does), and a zone after the time with or without a space."""
    import calendar
    import re

    found = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d)(?::(\d\d)(?:[.,]\d+)?)?"
                         r" ?(Z|z|[+-]\d\d(?::?\d\d)?)?", text)
    if found is None:
        return None
    year, month, day, hour, minute = (int(g) for g in found.groups()[:5])
    second = int(found.group(6) or 0)
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour < 24 and minute < 60 and second < 61):
        return None
    utc_guess = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    if found.group(7) is None:  # local time, as git reads it
        local = int(time.mktime((year, month, day, hour, minute, second, 0, 0, -1)))
        return local, _local_offset(local)
    zone = _zone(found.group(7))
    return (None if zone is None else (utc_guess - zone, zone))


def _rfc2822_date(text: str) -> tuple[int, int] | None:
    import re
    from email.utils import mktime_tz, parsedate_tz

    found = parsedate_tz(text)
    year = re.search(r"(?<![+\-\d])\d{4}\b", text)  # not the zone's digits
    if found is None or year is None:  # a two-digit year git refuses; Python would guess
        return None
    if re.search(r"\d:\d\d\s*$", text):  # the time ends it: no zone, so local time
        local = int(time.mktime((*found[:8], -1)))
        return local, _local_offset(local)
    zone = text.split()[-1]
    offset = int(found[9] or 0)
    # a zone name Python reads as UTC but git does not know, or one out of range (git fsck
    # refuses a commit that carries it): refused, never misread
    if not (zone[:1] in "+-" or zone.upper() in _ZONE_NAMES) or \
            _zone(f"{'-' if offset < 0 else '+'}{abs(offset) // 3600:02d}"
                  f"{abs(offset) % 3600 // 60:02d}") is None:
        return None
    return int(mktime_tz(found)), offset


# the zone names email.utils and git both read alike (git knows more; those are refused)
_ZONE_NAMES = {"UTC", "GMT", "Z", "EST", "EDT", "CST", "CDT", "MST", "MDT", "PST",
               "PDT"}
