"""T5: the test files that belong to a touched file, by the repository's conventions
(``test_x.py``, ``x_test.go``, ``x.test.ts``, ``x.spec.js``, ``XTest.java``) and by the
configured mapping (``tribunal.tests``)."""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Iterable

from leapgit.records.tribunal_config import TestMapping

_TEST_DIRS = {"tests", "test", "__tests__", "spec", "specs"}
_NAMES = ("test_{stem}{ext}", "{stem}_test{ext}", "{stem}.test{ext}", "{stem}.spec{ext}",
          "{stem}_spec{ext}", "{stem}Test{ext}", "{stem}Tests{ext}")


def is_test(path: str) -> bool:
    name = posixpath.basename(path)
    stem = name.split(".", 1)[0]
    parts = set(path.split("/")[:-1])
    return (bool(parts & _TEST_DIRS) or stem.startswith("test_") or stem.endswith("_test")
            or ".test." in name or ".spec." in name or stem.endswith(("Test", "Tests")))


def _fields(path: str) -> dict[str, str]:
    name = posixpath.basename(path)
    stem, ext = posixpath.splitext(name)
    return {"stem": stem, "name": name, "dir": posixpath.dirname(path), "path": path, "ext": ext}


def _by_convention(path: str, by_name: dict[str, list[str]]) -> list[str]:
    fields = _fields(path)
    if fields["stem"] in ("__init__", "index", "main", ""):
        return []  # too common a stem: every test_main.py in the tree would match
    found: list[str] = []
    for pattern in _NAMES:
        found += by_name.get(pattern.format(**fields), [])
    return found


def _by_mapping(path: str, mappings: Iterable[TestMapping], tree: set[str]) -> list[str]:
    found: list[str] = []
    for mapping in mappings:
        if fnmatch.fnmatchcase(path, mapping.source):
            fields = _fields(path)
            found += [t.format(**fields).lstrip("/") for t in mapping.tests]
    return [t for t in found if t in tree]


def find_tests(touched: Iterable[str], tree: Iterable[str],
               mappings: Iterable[TestMapping] = ()) -> list[str]:
    """Test files at head for the touched source files, not themselves touched, sorted."""
    paths = set(tree)
    by_name: dict[str, list[str]] = {}
    for p in paths:
        if is_test(p):
            by_name.setdefault(posixpath.basename(p), []).append(p)
    touched = list(touched)
    found: set[str] = set()
    for path in touched:
        if is_test(path):
            continue
        found.update(_by_convention(path, by_name))
        found.update(_by_mapping(path, mappings, paths))
    return sorted(found - set(touched))
