"""The repository the ledger is written into, opened with dulwich's object store and refs
container directly. ``dulwich.repo.Repo`` would build the same two, but importing it and its
constructor pull in work-tree, hooks and graft machinery the ledger never uses: ~15 ms that
every ``post-commit`` in a ball worktree paid (``tests/benchmarks/bench_hooks.py``).

``open_repo`` gives this plain handle only for a plain repository, and a full ``Repo`` for
anything else (another ref storage, any ``extensions`` entry such as another object format,
config includes, shared permissions, grafts, a shallow clone, a path that is not a common git
dir), so every special case stays dulwich's to handle. Both satisfy ``gitobj.GitRepo``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dulwich.config import ConfigFile, StackedConfig
    from dulwich.object_store import DiskObjectStore
    from dulwich.objects import Commit, ObjectID, ShaFile
    from dulwich.refs import DiskRefsContainer

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
        return Repo(git_dir)
    return Repo(git_dir, object_directory=object_directory, alternates=list(alternates))


class PlainRepo:
    """A common git dir's objects and refs: the part of ``Repo`` the ledger uses."""

    object_store: DiskObjectStore
    refs: DiskRefsContainer

    def __init__(self, git_dir: str, config: ConfigFile, object_directory: str | None = None,
                 alternates: Sequence[str] = ()) -> None:
        from dulwich.object_store import DiskObjectStore
        from dulwich.refs import DiskRefsContainer

        self.git_dir = git_dir
        self._config = config
        self.object_store = DiskObjectStore.from_config(
            object_directory or os.path.join(git_dir, "objects"), config,
            alternates=list(alternates) or None)
        self.refs = DiskRefsContainer(git_dir, git_dir, logger=self._write_reflog)

    def __enter__(self) -> PlainRepo:
        return self

    def __exit__(self, *exc: object) -> None:
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
        from dulwich.config import ConfigFile

        try:
            config = ConfigFile.from_path(os.path.join(git_dir, "config"), expand_includes=False)
        except FileNotFoundError:
            return None  # git always writes one; Repo knows what to make of its absence
        except Exception:  # noqa: BLE001 -- a config dulwich cannot parse: Repo says why
            return None
        if any(section[0].lower() in _SPECIAL_SECTIONS for section in config.sections()):
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
        from dulwich.config import StackedConfig

        return StackedConfig([self._config, *StackedConfig.default_backends()],
                             writable=self._config)

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
        import time

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


def _has(config: ConfigFile, core_key: bytes) -> bool:
    try:
        config.get((b"core",), core_key)  # dulwich compares names without case, as git does
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
