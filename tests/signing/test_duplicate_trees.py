"""A tree that names an entry twice means two things: git reads the first entry (``git show
main:.leap/allowed_signers``, a checkout), dulwich the last. A merge whose tree holds an
attacker's policy first and the unchanged one second passed S6 (dulwich saw no change, so
no admin signature was needed) while git served the attacker's policy. The server refuses
such trees: git itself with ``receive.fsckObjects`` (``leap hooks install --server`` sets
it), and ``pre-receive`` before any rule reads a tree, for a server without it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.hooks.world import remote_refs
from tests.signing.world import PRINCIPALS, SLICE, SignedWorld, policy_text
from tests.support import git

Entry = tuple[str, str, str]  # mode, name, sha


def write_tree(work: Path, entries: list[Entry]) -> str:
    """A tree object with exactly these entries, in this order (git would never write it)."""
    data = b"".join(f"{mode} {name}".encode() + b"\0" + bytes.fromhex(sha)
                    for mode, name, sha in entries)
    return subprocess.run(["git", "hash-object", "-w", "--literally", "-t", "tree", "--stdin"],
                          cwd=work, input=data, capture_output=True, check=True
                          ).stdout.decode().strip()


def read_tree(work: Path, tree: str) -> list[Entry]:
    out = []
    for line in git("ls-tree", tree, cwd=work).splitlines():
        meta, name = line.split("\t", 1)
        mode, _kind, sha = meta.split()
        out.append((mode.lstrip("0"), name, sha))
    return out


def blob(work: Path, text: str) -> str:
    return git("hash-object", "-w", "--stdin", cwd=work, input=text.encode())


def signed_merge(w: SignedWorld, tree: str, key: str = "ivan") -> str:
    sign = ["-c", "gpg.format=ssh", "-c", f"user.signingkey={w.keys[key]}"]
    return git(*sign, "commit-tree", "-S", "-p", "main", "-p", f"leap/ball/{SLICE}/a", "-m",
               f"integrate {SLICE}/a\n\nLeap-Slice: {SLICE}\nLeap-Ball: a\n", tree, cwd=w.work)


def two_policies(w: SignedWorld, honest_tree: str) -> str:
    """The honest merge's tree with a second ``.leap/allowed_signers`` entry before the real
    one: mallory's policy, making her admin."""
    evil = blob(w.work, policy_text(w.keys, {**PRINCIPALS, "mallory": ["admin:mallory",
                                                                      "integrator:mallory"]}))
    root = read_tree(w.work, honest_tree)
    leap_dir = next(sha for _mode, name, sha in root if name == ".leap")
    inner: list[Entry] = []
    for mode, name, sha in read_tree(w.work, leap_dir):
        if name == "allowed_signers":
            inner.append(("100644", name, evil))  # first: what git reads
        inner.append((mode, name, sha))  # last: what dulwich reads
    new_leap = write_tree(w.work, inner)
    return write_tree(w.work, [(m, n, new_leap if n == ".leap" else s) for m, n, s in root])


@pytest.mark.parametrize("fsck", [True, False], ids=["fsckObjects", "no-fsckObjects"])
def test_a_merge_whose_tree_names_the_policy_twice_is_refused(fresh: SignedWorld,
                                                              fsck: bool) -> None:
    w = fresh
    assert git("config", "--get", "receive.fsckObjects", cwd=w.bare) == "true"
    if not fsck:
        git("config", "receive.fsckObjects", "false", cwd=w.bare)
    tree = w.build("a", {"src/a.py": "A = 10\n"}, "bob")
    assert w.push(f"leap/ball/{SLICE}/a").returncode == 0
    w.grade("a", "carol", tree)
    w.lease("ivan")
    assert w.push("leap/ledger").returncode == 0
    honest = git("merge-tree", "--write-tree", "main", f"leap/ball/{SLICE}/a", cwd=w.work)
    bad_tree = two_policies(w, honest)
    merge = signed_merge(w, bad_tree)
    git("update-ref", "refs/heads/main", merge, cwd=w.work)
    before = remote_refs(w.bare)
    result = w.push("main")
    assert result.returncode != 0, result.stderr
    assert remote_refs(w.bare) == before, "a refused push moved a remote ref"
    if fsck:
        assert "duplicateEntries" in result.stderr, result.stderr
    else:
        leap_tree = next(s for _m, n, s in read_tree(w.work, bad_tree) if n == ".leap")
        assert f"[fsck] (pushed objects) {leap_tree[:12]}: a pushed tree names " \
            "'allowed_signers' twice (blob and blob)" in result.stderr, result.stderr
        assert "[S" not in result.stderr and "[L" not in result.stderr  # no rule read it


@pytest.mark.parametrize("shape", ["blob-and-tree", "out-of-order"])
def test_a_tree_git_and_dulwich_read_apart_is_refused_on_any_branch(fresh: SignedWorld,
                                                                    shape: str) -> None:
    # pushed to a branch no rule guards: later it could reach the spine as a known object
    w = fresh
    git("config", "receive.fsckObjects", "false", cwd=w.bare)
    a, b = blob(w.work, "one\n"), blob(w.work, "two\n")
    sub = write_tree(w.work, [("100644", "inner", b)])
    entries = {"blob-and-tree": [("100644", "src", a), ("40000", "src", sub)],
               "out-of-order": [("100644", "zeta", a), ("100644", "alpha", b)]}[shape]
    tree = write_tree(w.work, entries)
    commit = git("commit-tree", "-m", "odd tree", tree, cwd=w.work)
    git("update-ref", "refs/heads/side", commit, cwd=w.work)
    result = w.push("side")
    assert result.returncode != 0, result.stderr
    assert "refs/heads/side" not in remote_refs(w.bare)
    why = {"blob-and-tree": "names 'src' twice (blob and tree)",
           "out-of-order": "lists 'alpha' out of git's order"}[shape]
    assert f"[fsck] (pushed objects) {tree[:12]}: a pushed tree {why}" in result.stderr, \
        result.stderr
