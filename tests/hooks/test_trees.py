"""pre-receive's tree check (``rules/trees.py``) on real objects: every tree in git's
quarantine, reachable or not, and without a quarantine the trees of the pushed commits."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from leapgit.rules.context import RefUpdate
from leapgit.rules.objects import Objects
from leapgit.rules.trees import check_pushed_trees, tree_problem
from tests.support import git, make_repo

A, B = "a" * 40, "b" * 40


def raw(*entries: tuple[str, str, str]) -> bytes:
    return b"".join(f"{mode} {name}".encode() + b"\0" + bytes.fromhex(sha)
                    for mode, name, sha in entries)


@pytest.mark.parametrize(("entries", "problem"), [
    ((("100644", "x", A), ("100644", "x", B)), "names 'x' twice (blob and blob)"),
    ((("100644", "x", A), ("100644", "x.c", A), ("40000", "x", B)),
     "names 'x' twice (blob and tree)"),
    ((("100644", "b", A), ("100644", "a", B)), "lists 'a' out of git's order"),
    ((("40000", "x", A), ("100644", "x.c", B)), "lists 'x.c' out of git's order"),
])
def test_trees_git_and_dulwich_read_apart(entries: tuple[tuple[str, str, str], ...],
                                          problem: str) -> None:
    assert tree_problem(raw(*entries)) == problem


def test_trees_git_writes_are_clean() -> None:
    # git's order: a tree sorts as "name/", so "x.c" comes before the tree "x"
    assert tree_problem(raw(("100644", "x.c", A), ("40000", "x", B), ("100644", "y", A))) \
        is None
    assert tree_problem(b"") is None
    assert tree_problem(b"100644 x\0short") is not None


def _bad_tree(repo: Path, env: dict[str, str] | None = None) -> str:
    import subprocess

    data = raw(("100644", "p", git("hash-object", "-w", "--stdin", cwd=repo, input=b"1\n")),
               ("100644", "p", git("hash-object", "-w", "--stdin", cwd=repo, input=b"2\n")))
    return subprocess.run(["git", "hash-object", "-w", "--literally", "-t", "tree", "--stdin"],
                          cwd=repo, input=data, capture_output=True, check=True,
                          env={**os.environ, **(env or {})}).stdout.decode().strip()


@pytest.mark.parametrize("stored", ["loose", "packed"])
def test_a_tree_in_the_quarantine_no_ref_reaches(tmp_path: Path, stored: str) -> None:
    # git keeps a small push loose in the quarantine and a large one as a pack
    from dulwich.repo import Repo

    repo = make_repo(tmp_path / "r", {"a.txt": "a\n"})
    quarantine = tmp_path / "incoming"
    (quarantine / "pack").mkdir(parents=True)
    if stored == "loose":
        tree = _bad_tree(repo, {"GIT_OBJECT_DIRECTORY": str(quarantine),
                                "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(repo / ".git/objects")})
    else:
        tree = _bad_tree(repo)
        git("pack-objects", "-q", str(quarantine / "pack" / "pack"), cwd=repo,
            input=f"{git('rev-parse', 'HEAD', cwd=repo)}\n{tree}\n".encode())
    with Repo(str(repo)) as r:
        found = check_pushed_trees(Objects(r), (), {"GIT_QUARANTINE_PATH": str(quarantine)})
    assert [(f.rule, f.commit) for f in found] == [("fsck", tree)]
    assert "a pushed tree names 'p' twice (blob and blob)" in found[0].message


def test_without_a_quarantine_the_pushed_commits_trees(tmp_path: Path) -> None:
    from dulwich.repo import Repo

    repo = make_repo(tmp_path / "r", {"a.txt": "a\n"})
    inner = _bad_tree(repo)
    outer = git("mktree", cwd=repo, input=f"040000 tree {inner}\tsub\n".encode())
    commit = git("commit-tree", "-p", "HEAD", "-m", "odd", outer, cwd=repo)
    with Repo(str(repo)) as r:
        objects = Objects(r)
        pushed = (RefUpdate("refs/heads/side", None, commit),)
        found = check_pushed_trees(objects, pushed, {})
        assert [f.commit for f in found] == [inner]
        clean = git("rev-parse", "HEAD", cwd=repo)
        assert check_pushed_trees(objects, (RefUpdate("refs/heads/x", None, clean),), {}) == []
