from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import isolate, make_repo
from tests.templates import Served


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests of a module that share a module-scoped fixture (one world, used in the
    module's order) run on one xdist worker, in that order, and build it once
    (``--dist loadgroup``); every other test goes wherever a worker is free."""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        defs = info.name2fixturedefs.values() if info else ()
        if any(d and d[-1].scope == "module" for d in defs):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))


@pytest.fixture(autouse=True)
def _isolated_git(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Every test runs with a fixed identity and no user or system git config."""
    isolate(monkeypatch, tmp_path_factory.mktemp("home"))


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The run's one `git daemon` (one per xdist worker, in the worker's own temporary
    folder), serving the worlds each test gets a copy of."""
    root = tmp_path_factory.mktemp("served-root")
    with pytest.MonkeyPatch.context() as mp:
        isolate(mp, root / "home")
        with Served(root / "served") as found:
            yield found


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with a small project committed on main."""
    return make_repo(tmp_path / "repo", {
        "src/a.py": "A = 1\n",
        "src/b.py": "B = 2\n",
        "src/c.py": "C = 3\n",
        "tests/test_a.py": "def test_a():\n    assert True\n",
        "README.md": "# sample\n",
    })
