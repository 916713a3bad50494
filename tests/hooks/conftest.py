from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hooks.world import World, build_world
from tests.support import IDENTITY, GitDaemon


def _isolate(mp: pytest.MonkeyPatch, home: Path) -> None:
    mp.setenv("HOME", str(home))
    mp.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    mp.setenv("XDG_STATE_HOME", str(home / ".state"))
    mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
    mp.delenv("GIT_DIR", raising=False)
    mp.delenv("GIT_WORK_TREE", raising=False)
    for key, value in IDENTITY.items():
        mp.setenv(key, value)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """One project shared by a module's tests; each test leaves the remote's refs as it
    found them (refused pushes) or works on refs of its own."""
    with pytest.MonkeyPatch.context() as mp:
        _isolate(mp, tmp_path_factory.mktemp("home"))
        base = tmp_path_factory.mktemp("world")
        with GitDaemon(base) as daemon:
            yield build_world(base, daemon)


@pytest.fixture
def fresh_world(tmp_path: Path) -> Iterator[World]:
    base = tmp_path / "served"
    base.mkdir()
    with GitDaemon(base) as daemon:
        yield build_world(base, daemon)


@pytest.fixture
def master_world(tmp_path: Path) -> Iterator[World]:
    """A remote made by plain `git init --bare`: its HEAD names master, not the spine."""
    base = tmp_path / "served"
    base.mkdir()
    with GitDaemon(base) as daemon:
        yield build_world(base, daemon, head="master")
