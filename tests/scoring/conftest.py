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
        isolate(mp, home, tmp_path_factory.getbasetemp() / "xdg-cache")
        yield home


@pytest.fixture(scope="session")
def scripted_url() -> Iterator[str]:
    """The run's scripted juror server (the DEMO jurors): every scoring world built on it
    keeps its URL in its config, so it serves the whole run."""
    from leapgit.tribunal.demo import scripted_juror

    with scripted_juror() as url:
        yield url
