from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import IDENTITY


@pytest.fixture(scope="module")
def isolated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A module-wide home with a fixed identity and no user or system git config."""
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        mp.setenv("XDG_CONFIG_HOME", str(home / ".config"))
        mp.setenv("XDG_STATE_HOME", str(home / ".state"))
        mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
        mp.delenv("GIT_DIR", raising=False)
        mp.delenv("GIT_WORK_TREE", raising=False)
        for key, value in IDENTITY.items():
            mp.setenv(key, value)
        yield home
