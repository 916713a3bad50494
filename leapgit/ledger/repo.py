"""The repository the ledger is written into, opened with dulwich's object store and refs
container directly. ``dulwich.repo.Repo`` would build the same two, but importing it and its
constructor pull in work-tree, hooks and graft machinery the ledger never uses: ~15 ms that
every ``post-commit`` in a ball worktree paid (``tests/benchmarks/bench_hooks.py``).

``open_repo`` gives this plain handle only for a plain repository, and a full ``Repo`` for
anything else (another ref storage, any ``extensions`` entry such as another object format,
config includes, shared permissions, grafts, a shallow clone, a path that is not a common git
dir), so every special case stays dulwich's to handle. Both satisfy ``gitobj.GitRepo``.
In a partial clone either reads what the clone lacks through git (``Promised``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from dulwich.config import ConfigFile, StackedConfig
from dulwich.object_store import DiskObjectStore
from dulwich.refs import DiskRefsContainer

if TYPE_CHECKING:
    from types import TracebackType

    from dulwich.objects import Commit, ObjectID, ShaFile

    from leapgit.gitobj import GitRepo

# what Repo() would treat specially: each sends the repository to it
_SPECIAL_FILES = ("commondir", "gitdir", "shallow", os.path.join("info", "grafts"))
_SPECIAL_SECTIONS = (b"extensions", b"include", b"includeif")


def open_repo(git_dir: str, object_directory: str | None = None,
              alternates: Sequence[str] = ()) -> GitRepo:
    """The repository at ``git_dir`` (its common git dir): plain when it can be, else dulwich's
    ``Repo``, which raises for a path that is no repository at all. ``object_directory`` and
    ``alternates``: where its objects are read instead (git's quarantine in a pre-receive),
    never written into ``objects/info/alternates``."""
    plain = PlainRepo.open(git_dir, object_directory, alternates)
    if plain is not None:
        return plain
    from dulwich.repo import Repo

    if object_directory is None:
        repo = Repo(git_dir)
    else:
        repo = Repo(git_dir, object_directory=object_directory, alternates=list(alternates))
    if partial(repo.get_config()):
        repo.object_store.alternates.append(Promised(git_dir))  # type: ignore[arg-type]
    return repo


def partial(config: ConfigFile) -> bool:
    """Whether the repository is a partial clone: a promisor remote (``remote.<name>.promisor``,
    as `git clone --filter` sets it) or ``extensions.partialClone``."""
    return _has(config, b"partialclone", b"extensions") or any(
        section[0] == b"remote" and config.get_boolean(section, b"promisor", False)
        for section in config.sections())


_TYPE_NUMS = {b"commit": 1, b"tree": 2, b"blob": 3, b"tag": 4}


class Promised:
    """What a partial clone (`git clone --filter=blob:none`) left with its promisor remote,
    as one more alternate of dulwich's object store: an object the clone lacks is read
    through `git cat-file`, which fetches it from that remote as every git command in such a
    clone does (dulwich fetches nothing by itself). Asked only for an object the clone's own
    packs and loose objects lack; ``leap sync`` makes the ledger whole in one fetch."""

    def __init__(self, git_dir: str) -> None:
        self.git_dir = git_dir
        self._read: dict[bytes, tuple[int, bytes] | None] = {}

    def get_raw(self, sha: bytes) -> tuple[int, bytes]:
        found = self._fetched(sha)
        if found is None:
            raise KeyError(sha)
        return found

    def __contains__(self, sha: bytes) -> bool:
        """Only what this clone holds: asking whether an object is here fetches nothing (a
        remote tip a clone never fetched is not judged, as in a whole clone)."""
        return False

    def __iter__(self) -> Iterator[bytes]:
        return iter(())  # what the remote holds is not listed here

    def close(self) -> None:
        self._read.clear()  # each read was its own git process: nothing else to close

    def _fetched(self, sha: bytes) -> tuple[int, bytes] | None:
        if len(sha) in (20, 32):  # a binary id: git reads hex
            sha = sha.hex().encode()
        if sha not in self._read:
            from leapgit import git

            # each fetch git makes here leaves a pack; no repack may remove one that
            # dulwich has open (git's automatic one, past 50 packs)
            proc = git.run(["--git-dir", self.git_dir, "-c", "gc.auto=0", "-c",
                            "maintenance.auto=false", "cat-file", "--batch"], self.git_dir,
                           input=sha + b"\n", check=False)
            header, _, rest = proc.stdout.partition(b"\n")
            fields = header.split()
            ok = len(fields) == 3 and fields[1] in _TYPE_NUMS and fields[2].isdigit()
            err = proc.stderr.decode(errors="replace")
            if not ok and err.strip():  # git tried the promisor remote, and got nothing
                raise git.RemoteUnavailable(
                    f"object {sha.decode()} is not in this partial clone, and git could not "
                    f"fetch it from its promisor remote: {git.says(err)}",
                    hint="once the remote answers (its URL, its credentials), run the "
                         "command again")
            self._read[sha] = (_TYPE_NUMS[fields[1]], rest[:int(fields[2])]) if ok else None
        return self._read[sha]


class PlainRepo:
    """A common git dir's objects and refs: the part of ``Repo`` the ledger uses."""

    object_store: DiskObjectStore
    refs: DiskRefsContainer

    def __init__(self, git_dir: str, config: ConfigFile, object_directory: str | None = None,
                 alternates: Sequence[str] = ()) -> None:
        self.git_dir = git_dir
        self._config = config
        self.object_store = DiskObjectStore.from_config(
            object_directory or os.path.join(git_dir, "objects"), config,
            alternates=list(alternates) or None)
        self.refs = DiskRefsContainer(git_dir, git_dir, logger=self._write_reflog)
        if partial(config):
            self.object_store.alternates.append(Promised(git_dir))  # type: ignore[arg-type]

    def __enter__(self) -> PlainRepo:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None, /) -> None:
        self.close()

    @classmethod
    def open(cls, git_dir: str, object_directory: str | None = None,
             alternates: Sequence[str] = ()) -> PlainRepo | None:
        """The plain handle, or None when ``Repo`` must decide (see the module's docstring)."""
        if not (os.path.isfile(os.path.join(git_dir, "HEAD"))
                and os.path.isdir(os.path.join(git_dir, "objects"))
                and os.path.isdir(os.path.join(git_dir, "refs"))):
            return None
        if any(os.path.exists(os.path.join(git_dir, name)) for name in _SPECIAL_FILES):
            return None

        try:
            config = ConfigFile.from_path(os.path.join(git_dir, "config"), expand_includes=False)
        except FileNotFoundError:
            return None  # git always writes one; Repo knows what to make of its absence
        except Exception:  # noqa: BLE001 -- a config dulwich cannot parse: Repo says why
            return None
        if any(section[0].lower() in _SPECIAL_SECTIONS and not _only_partial(config, section)
               for section in config.sections()):
            return None
        try:
            version = int(config.get((b"core",), b"repositoryformatversion"))
        except KeyError:
            version = 0
        except ValueError:
            return None
        if version not in (0, 1) or _has(config, b"sharedRepository"):
            return None
        return cls(git_dir, config, object_directory, alternates)

    def __getitem__(self, sha: ObjectID) -> ShaFile:
        return self.object_store[sha]

    def get_config(self) -> ConfigFile:
        return self._config

    def get_config_stack(self) -> StackedConfig:
        """This repository's config over the user's and the system's, as ``Repo`` stacks it."""
        return StackedConfig([self._config, *StackedConfig.default_backends()],
                             writable=self._config)

    def get_shallow(self) -> set[ObjectID]:
        return set()  # a shallow clone is opened as a ``Repo``

    def parents_provider(self) -> _Parents:
        """What ``dulwich.graph`` asks a repository for (no grafts, no shallow commits: a
        repository with either is opened as a ``Repo``)."""
        return _Parents(self.object_store)

    def close(self) -> None:
        self.object_store.close()

    def _write_reflog(self, ref: bytes, old_sha: bytes, new_sha: bytes, committer: bytes | None,
                      timestamp: int | None, timezone: int | None, message: bytes) -> None:
        """One reflog line, as ``Repo`` writes it. dulwich calls this while it holds the ref's
        lock, before the ref moves: a failure here gives the move up (the ledger says so),
        and a crash right after it leaves a line for a move that never happened, as with
        ``Repo``. A missing field is filled in as ``Repo`` does."""
        from dulwich.reflog import format_reflog_line

        if committer is None:  # the ledger always names itself; this is for anyone else
            from dulwich.repo import get_user_identity

            committer = get_user_identity(self.get_config_stack())
        path = os.path.join(self.git_dir, "logs", os.fsdecode(ref))
        line = format_reflog_line(old_sha, new_sha, committer,
                                  int(time.time()) if timestamp is None else timestamp,
                                  timezone or 0, message)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "ab") as fh:
                fh.write(line + b"\n")
        except OSError as exc:  # a full disk names no file on close: name the reflog
            raise type(exc)(exc.errno, exc.strerror, exc.filename or path) from None


def _only_partial(config: ConfigFile, section: tuple[bytes, ...]) -> bool:
    """An ``extensions`` section holding nothing but ``partialClone`` (what git wrote for a
    partial clone before promisor remotes, and dulwich's ``Repo`` refuses): opened plain,
    its missing objects read through git (``Promised``)."""
    return section == (b"extensions",) and \
        {key.lower() for key, _ in config.items(section)} == {b"partialclone"}


def _has(config: ConfigFile, key: bytes, section: bytes = b"core") -> bool:
    try:
        config.get((section,), key)  # dulwich compares names without case, as git does
    except KeyError:
        return False
    return True


class _Parents:
    """``dulwich.repo.ParentsProvider`` for a repository without grafts or shallow commits
    (the only kind opened plain): the fields ``dulwich.graph`` reads, none of them set."""

    def __init__(self, store: DiskObjectStore) -> None:
        self.store = store
        self.grafts: dict[ObjectID, list[ObjectID]] = {}
        self.shallows: set[ObjectID] = set()

    def get_parents(self, commit_id: ObjectID, commit: Commit | None = None) -> list[ObjectID]:
        found = self.store[commit_id] if commit is None else commit
        return list(found.parents)  # type: ignore[attr-defined]
