"""The loop's tests share the scoring tests' module-wide isolated home."""

from collections.abc import Iterator

import pytest

from tests.scoring.conftest import isolated  # noqa: F401 -- a fixture, used by name
from tests.support import GitDaemon
from tests.tribunal.jurors import JurorServer


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitDaemon]:
    """A `git daemon` of the module's own for the workers' worlds (issue 16)."""
    with GitDaemon(tmp_path_factory.mktemp("workers-served")) as d:
        yield d


@pytest.fixture(scope="module")
def jurors() -> Iterator[JurorServer]:
    """Scripted jurors on 127.0.0.1 that pass a candidate they are shown (T6: quoted)."""
    from tests.loop import workers_world as ww

    with JurorServer("openai", ww.jurors) as server:
        yield server
