"""Worlds built once per test run and copied per test.

A world (a bare remote with its server hook, clones, worktrees, a builder script, keys) costs
from half a second to ten to build through the real CLI; a copy costs milliseconds. Every
world lives under the base folder of the run's one `git daemon` (``Served``), which serves
its remote at ``git://127.0.0.1:PORT/<world>/<repo>``.

A world's absolute paths are part of it, and not only in files a copy could rewrite: git
keeps them in a worktree's ``.git`` file and ``.git/worktrees/*/gitdir``, a remote's URL
names the folder, and the ledger's own records (committed, hashed) name the worktree a ball
was thrown into and its round logs, which leapgit reads back. So a copy is never moved: the
world ``key`` always lives at ``<base>/<key>``. Its first use builds it there and keeps a
byte-for-byte snapshot of the folder; each later use puts the snapshot back at the same path
(`cp -a` semantics: modes, times and symlinks kept), and each use ends by moving the folder
aside (kept under ``<base>/.used/`` for a post-mortem). One worker runs one test at a time
and pytest finishes a test's (or a module's) fixtures before the next one's, so a world has
one live copy at a time; a test that asks for two copies of one world is refused. Under
xdist every worker has its own base folder, daemon and snapshots.

``check_world`` asks git itself whether a copy stands on its own: every worktree where git
lists it and inside the world, every remote URL inside the world or the run's daemon, `git
fsck` clean.
"""

from __future__ import annotations

import copy
import os
import re
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from tests.support import GitDaemon, git

T = TypeVar("T")


class Served:
    """The run's `git daemon`, serving every world under ``base``. Worlds are built in the
    environment the daemon started in, whichever test asks first: what a test set in its
    own environment never reaches a world another test copies."""

    def __init__(self, base: Path) -> None:
        base.mkdir(parents=True, exist_ok=True)
        self.base = base
        self.daemon = GitDaemon(base)
        self.env = dict(os.environ)
        self._snapshots = base.parent / "snapshots"
        self._worlds: dict[str, Any] = {}
        self._failed: dict[str, BaseException] = {}
        self._live: set[str] = set()
        self._used = 0

    def __enter__(self) -> Served:
        self.env = dict(os.environ)
        self.daemon.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.daemon.__exit__(*exc)

    def folder(self, name: str) -> Path:
        """A new folder of the served tree (``name``, ``name-1``, ...), for a world built
        in place and used once."""
        for n in range(10_000):
            path = self.base / (name if n == 0 else f"{name}-{n}")
            try:
                path.mkdir(parents=True)
                return path
            except FileExistsError:
                continue
        raise RuntimeError(f"no free folder for {name}")

    @contextmanager
    def world(self, key: str, build: Callable[[Path], T]) -> Iterator[T]:
        """The world ``key`` at ``<base>/<key>``: built by ``build(folder)`` on first use,
        a copy of that first build afterwards. Its object is a shallow copy whose dicts
        are the test's own."""
        if key in self._live:
            raise RuntimeError(f"world {key!r} is in use: one copy of a world at a time")
        if key in self._failed:
            raise RuntimeError(f"world {key!r} failed to build") from self._failed[key]
        live = self.base / _safe(key)
        if live.exists():
            self._retire(live)  # left by a test that never finished
        self._live.add(key)
        try:
            if key in self._worlds:
                shutil.copytree(self._snapshots / _safe(key), live, symlinks=True)
            else:
                self._build(key, build, live)
            yield _own(self._worlds[key])
        finally:
            self._live.discard(key)
            if live.exists():
                self._retire(live)

    def _build(self, key: str, build: Callable[[Path], T], live: Path) -> None:
        live.mkdir()
        try:
            with _environment(self.env), _cwd(self.base):
                world = build(live)
        except BaseException as exc:
            self._failed[key] = exc
            raise
        shutil.copytree(live, self._snapshots / _safe(key), symlinks=True)
        self._worlds[key] = world

    def _retire(self, live: Path) -> None:
        self._used += 1
        attic = self.base / ".used" / f"{self._used:04d}-{live.name}"
        attic.parent.mkdir(exist_ok=True)
        live.rename(attic)


def _own(world: T) -> T:
    """A shallow copy of ``world`` with fresh dicts (a test's notes never reach the next)."""
    mine = copy.copy(world)
    for name, value in vars(world).items():
        if isinstance(value, dict):
            object.__setattr__(mine, name, dict(value))
    return mine


@contextmanager
def _environment(env: dict[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextmanager
def _cwd(path: Path) -> Iterator[None]:
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name)[:60].strip("-.") or "world"


def git_dirs(folder: Path) -> list[Path]:
    """Every repository's git dir under ``folder`` (worktrees share their main one's)."""
    found = []
    for head in sorted(folder.rglob("HEAD")):
        top = head.parent
        if (top / "objects").is_dir() and (top / "refs").is_dir():
            found.append(top)
    return found


def check_world(folder: Path, daemon: GitDaemon) -> None:
    """Every repository under ``folder`` stands on its own: its worktrees are where git
    lists them, inside ``folder``; its remotes are inside ``folder`` (by path or through
    ``daemon``); `git fsck` finds nothing wrong."""
    served = daemon.url(folder.relative_to(daemon.base).as_posix())
    for git_dir in git_dirs(folder):
        for line in git("worktree", "list", "--porcelain", cwd=git_dir).splitlines():
            if line.startswith("worktree "):
                where = Path(line.split(" ", 1)[1])
                assert where.is_relative_to(folder) and where.exists(), (git_dir, line)
        urls = git("config", "--get-regexp", r"^remote\..*\.url$", cwd=git_dir, check=False)
        for line in urls.splitlines():
            url = line.split(" ", 1)[1]
            assert url.startswith(served + "/") or Path(url).is_relative_to(folder), line
        git("fsck", "--no-progress", "--no-dangling", cwd=git_dir)
