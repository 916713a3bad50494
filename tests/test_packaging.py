"""A non-editable install ships exactly the packages the source tree has."""

from __future__ import annotations

import tomllib

from tests.support import ROOT


def test_every_package_folder_is_listed_in_pyproject() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "packages"])
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "leapgit").rglob("__init__.py")
    }
    assert found <= listed, f"missing from pyproject packages: {sorted(found - listed)}"
    assert {"leapgit._schemas", "leapgit._hooks"} <= listed
