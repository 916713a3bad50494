from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hooks.conftest import _isolate
from tests.signing.world import SignedWorld, build_signed_world
from tests.support import GitDaemon


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SignedWorld]:
    """One signed project per module; a test that gets refused calls ``reset()``."""
    with pytest.MonkeyPatch.context() as mp:
        _isolate(mp, tmp_path_factory.mktemp("home"))
        mp.delenv("LEAP_SIGNING_KEY", raising=False)
        base = tmp_path_factory.mktemp("signed")
        with GitDaemon(base) as daemon:
            yield build_signed_world(base, daemon)


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SignedWorld]:
    _isolate(monkeypatch, tmp_path / "home")
    monkeypatch.delenv("LEAP_SIGNING_KEY", raising=False)
    base = tmp_path / "served"
    base.mkdir()
    with GitDaemon(base) as daemon:
        yield build_signed_world(base, daemon)
