from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import isolate


@pytest.fixture(scope="module")
def isolated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A module-wide home with a fixed identity and no user or system git config."""
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as mp:
        isolate(mp, home)
        yield home
