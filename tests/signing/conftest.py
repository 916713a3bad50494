from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.signing.world import SignedWorld, signed_world
from tests.templates import Served


@pytest.fixture
def world(served: Served, monkeypatch: pytest.MonkeyPatch) -> Iterator[SignedWorld]:
    """The signed project, a copy of its own for each test; a test that gets refused may
    still call ``reset()``."""
    monkeypatch.delenv("LEAP_SIGNING_KEY", raising=False)
    with signed_world(served) as copy:
        yield copy


@pytest.fixture
def fresh(served: Served, monkeypatch: pytest.MonkeyPatch) -> Iterator[SignedWorld]:
    monkeypatch.delenv("LEAP_SIGNING_KEY", raising=False)
    with signed_world(served) as copy:
        yield copy
