"""The loop's tests share the scoring tests' module-wide isolated home."""

from tests.scoring.conftest import isolated  # noqa: F401 -- a fixture, used by name
