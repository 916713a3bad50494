from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.hooks.world import World, hook_world
from tests.support import isolate as _isolate
from tests.templates import Served

__all__ = ["_isolate"]  # the signing tests' fixtures isolate their homes with it


@pytest.fixture
def world(served: Served) -> Iterator[World]:
    """The hook project, a copy of its own for each test."""
    with hook_world(served) as copy:
        yield copy


@pytest.fixture
def fresh_world(served: Served) -> Iterator[World]:
    with hook_world(served) as copy:
        yield copy


@pytest.fixture
def master_world(served: Served) -> Iterator[World]:
    """A remote made by plain `git init --bare`: its HEAD names master, not the spine."""
    with hook_world(served, head="master") as copy:
        yield copy
