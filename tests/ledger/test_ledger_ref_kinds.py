"""A ledger ref that names no commit (a blob, a tree, a tag, a missing object) is no
leapgit ledger: every command that opens the ledger says so in one line naming the ref,
exit 2, and moves no ref (before: ``AttributeError: 'Blob' object has no attribute
'tree'``, exit 70, from `leap status` and `leap init` alike)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import git, leap, make_repo, ref

REF = "refs/leap/ledger"


def _repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "r", {"a.py": "a\n", "b.py": "b\n"})
    (root / ".leap").mkdir()
    (root / ".leap" / "config.yaml").write_text(
        f"version: 1\nspine: main\nledger_ref: {REF}\n")
    assert leap("init", cwd=root).code == 0
    return root


def _point(root: Path, kind: str) -> str:
    if kind == "missing":
        sha = "1" * 40  # a loose ref file names it; git update-ref would refuse
        (root / ".git" / REF).write_text(sha + "\n")
        return sha
    if kind == "tag":
        git("tag", "-a", "-m", "t", "t1", "HEAD", cwd=root)
        rev = "t1"
    else:
        rev = {"blob": "HEAD:a.py", "tree": "HEAD^{tree}"}[kind]
    sha = git("rev-parse", rev, cwd=root)
    git("update-ref", REF, sha, cwd=root)
    return sha


@pytest.mark.parametrize("kind", ["blob", "tree", "tag", "missing"])
@pytest.mark.parametrize("command", [("status",), ("init",), ("log",)])
def test_a_ledger_ref_naming_no_commit_is_no_ledger(tmp_path: Path, kind: str,
                                                    command: tuple[str, ...]) -> None:
    root = _repo(tmp_path)
    sha = _point(root, kind)
    spine = ref(root, "main")
    r = leap(*command, cwd=root)
    assert (r.code, r.out) == (2, ""), r
    what = "names nothing in this repository" if kind == "missing" else f"names a {kind}"
    assert r.err == (f"leap: .leap/config.yaml: ledger_ref: {REF} exists but is not a leapgit "
                     f"ledger ({what}, {sha[:12]}, not a commit); point ledger_ref at a ref "
                     "of its own; leapgit never writes onto a branch it did not start\n"), r
    assert ref(root, REF) == sha and ref(root, "main") == spine  # no ref moved
