"""What a ledger commit added (``ledger.added``) is exactly the "add" changes dulwich's
``tree_changes`` reports, for every kind of change a tree can go through."""

from __future__ import annotations

import itertools

import pytest
from dulwich.diff_tree import tree_changes
from dulwich.index import commit_tree
from dulwich.objects import Blob
from dulwich.repo import Repo

from leapgit.ledger.added import added_between

FILE, EXE, LINK = 0o100644, 0o100755, 0o120000

STATES: dict[str, dict[str, tuple[bytes, int]]] = {
    "empty": {},
    "one": {"slices/a/slice.yaml": (b"a", FILE)},
    "two": {"slices/a/slice.yaml": (b"a", FILE), "slices/b/slice.yaml": (b"b", FILE),
            "LEDGER.yaml": (b"l", FILE)},
    "edited": {"slices/a/slice.yaml": (b"A", FILE), "slices/b/slice.yaml": (b"b", FILE),
               "LEDGER.yaml": (b"l", FILE)},
    "exec-bit": {"slices/a/slice.yaml": (b"a", EXE), "slices/b/slice.yaml": (b"b", FILE),
                 "LEDGER.yaml": (b"l", FILE)},
    "a-link": {"slices/a/slice.yaml": (b"a", LINK), "slices/b/slice.yaml": (b"b", FILE)},
    "file-to-folder": {"slices/a/slice.yaml/x": (b"x", FILE), "slices/b/slice.yaml": (b"b", FILE),
                       "slices/b/balls/c/ball.yaml": (b"c", FILE)},
    "folder-to-file": {"slices": (b"flat", FILE)},
}


def _tree(repo: Repo, files: dict[str, tuple[bytes, int]]) -> bytes | None:
    if not files:
        return None
    blobs = []
    for path, (data, mode) in sorted(files.items()):
        blob = Blob.from_string(data)
        repo.object_store.add_object(blob)
        blobs.append((path.encode(), blob.id, mode))
    return commit_tree(repo.object_store, blobs)


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, dict[str, bytes | None]]:
    repo = Repo.init(str(tmp_path_factory.mktemp("added") / "r"), mkdir=True)
    return repo, {name: _tree(repo, files) for name, files in STATES.items()}


@pytest.mark.parametrize("old,new", [p for p in itertools.permutations(STATES, 2)
                                     if p[1] != "empty"])
def test_added_files_are_the_adds_tree_changes_reports(
        trees: tuple[Repo, dict[str, bytes | None]], old: str, new: str) -> None:
    repo, made = trees
    before, after = made[old], made[new]
    assert after is not None
    expected = [(c.new.path.decode(), c.new.sha) for c in
                tree_changes(repo.object_store, before, after)
                if c.type == "add" and c.new is not None and c.new.path and c.new.sha]
    assert added_between(repo.object_store, before, after) == expected


def test_a_prefix_names_the_folder(trees: tuple[Repo, dict[str, bytes | None]]) -> None:
    repo, made = trees
    got = added_between(repo.object_store, made["one"], made["two"], "root/")
    assert [p for p, _ in got] == ["root/LEDGER.yaml", "root/slices/b/slice.yaml"]
