from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import IDENTITY, make_repo


@pytest.fixture(autouse=True)
def _isolated_git(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Every test runs with a fixed identity and no user or system git config."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".state"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("GIT_DIR", raising=False)
    monkeypatch.delenv("GIT_WORK_TREE", raising=False)
    for key, value in IDENTITY.items():
        monkeypatch.setenv(key, value)


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
