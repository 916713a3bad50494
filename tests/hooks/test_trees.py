"""pre-receive's tree check (``rules/trees.py``) on real objects: every tree in git's
quarantine, reachable or not, and without a quarantine the trees of the pushed commits."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from leapgit.rules.context import RefUpdate
from leapgit.rules.objects import Objects
from leapgit.rules.trees import check_pushed_trees, tree_problem
from tests.hooks.world import World, remote_refs
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


# issue 18 F8: a name git would never write inside one tree. dulwich and the rules look a
# path up one component at a time (an entry named "src/a.py" is never found), git archive
# and a checkout write it anyway; "." / ".." / ".git" escape or take over the checkout.
@pytest.mark.parametrize(("name", "problem"), [
    ("src/a.py", "names 'src/a.py', which holds a '/'"),
    ("", "names an entry with an empty name"),
    (".", "names '.'"),
    ("..", "names '..'"),
    (".git", "names '.git'"),
    (".GIT", "names '.GIT'"),
    (".Git", "names '.Git'"),
    (".git.", "names '.git.'"),  # NTFS drops trailing dots and spaces
    (".git ", "names '.git '"),
    ("GIT~1", "names 'GIT~1'"),  # NTFS short name of .git
    (".g\u200cit", "names '.g\\u200cit'"),  # HFS+ ignores zero-width characters
])
def test_trees_refuse_names_git_never_writes(name: str, problem: str) -> None:
    found = tree_problem(raw(("100644", name, A)))
    assert found is not None and found.startswith(problem), found
    assert tree_problem(raw(("100644", ".github", A), ("100644", ".gitignore", A),
                            ("100644", "a.git", A), ("100644", "git~2", A))) is None


@pytest.mark.parametrize("entries", [
    (("40000", "x", A), ("100644", "x/", B)),  # both sort as "x/": git calls that unordered
    (("100644", "x/", A), ("40000", "x", B)),
])
def test_trees_equal_sort_keys_are_refused(entries: tuple[tuple[str, str, str], ...]) -> None:
    assert tree_problem(raw(*entries)) is not None


def test_trees_order_is_gits_exact_order(tmp_path: Path) -> None:
    # what git itself writes (mktree sorts) is clean, for names that differ right where a
    # tree's implied "/" falls ("a." and "a-" sort before the tree "a", "a0" after it)
    import subprocess

    repo = make_repo(tmp_path / "r", {"a.txt": "a\n"})
    blob = git("hash-object", "-w", "--stdin", cwd=repo, input=b"x\n")
    sub = git("mktree", cwd=repo, input=f"100644 blob {blob}\tin\n".encode())
    names = ["a", "a-b", "a.b", "a0", "a_", "ab", "a\u00e9", "a~", "a.", "a+"]
    lines = [f"100644 blob {blob}\t{n}\n" for n in names if n != "a"]
    lines += [f"040000 tree {sub}\t{n}\n" for n in ("a", "a.b.c", "a~d")]
    tree = git("mktree", cwd=repo, input="".join(lines).encode())
    data = subprocess.run(["git", "cat-file", "tree", tree], cwd=repo, capture_output=True,
                          check=True).stdout
    assert tree_problem(data) is None


def _tree_with(world_: World, entries: list[tuple[str, str, str]]) -> str:
    """A tree of exactly these entries, written by dulwich as given (no sorting, no checks)."""
    from dulwich.objects import ShaFile, Tree
    from dulwich.repo import Repo

    with Repo(str(world_.work)) as repo:
        tree = ShaFile.from_raw_string(Tree.type_num, raw(*entries))
        repo.object_store.add_object(tree)
    return tree.id.decode()


@pytest.mark.parametrize("name", ["src/a.py", ".git", ".GIT", "..", "."])
def test_a_tree_name_git_never_writes_is_refused_by_the_server(world: World, name: str) -> None:
    # fsck off on the remote: leapgit's own tree check is what answers (F8)
    git("config", "receive.fsckObjects", "false", cwd=world.bare)
    try:
        blob = git("hash-object", "-w", "--stdin", cwd=world.work, input=b"EVIL = 1\n")
        honest = git("hash-object", "-w", "--stdin", cwd=world.work, input=b"A = 1\n")
        src = git("mktree", cwd=world.work, input=f"100644 blob {honest}\ta.py\n".encode())
        entries = [("40000", "src", src), ("100644", name, blob)]
        if name in (".", ".."):
            entries.reverse()  # git's order: "." and ".." sort before "src"
        tree = _tree_with(world, entries)
        commit = git("commit-tree", "-m", "odd names", tree, cwd=world.work)
        ref = f"refs/heads/odd-name-{len(name)}-{name.strip('./').lower() or 'dot'}"
        git("update-ref", ref, commit, cwd=world.work)
        before = remote_refs(world.bare)
        result = world.push(f"{ref}:{ref}")
        assert result.returncode != 0, result.stderr
        assert remote_refs(world.bare) == before
        assert f"[fsck] (pushed objects) {tree[:12]}: a pushed tree names" in result.stderr, \
            result.stderr
    finally:
        git("config", "receive.fsckObjects", "true", cwd=world.bare)
