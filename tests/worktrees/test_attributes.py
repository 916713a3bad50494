"""A project whose `.gitattributes` convert files on checkout: an eol conversion (`text
eol=crlf`) and a clean/smudge filter, as Git LFS's is (the checkout holds other bytes than
the blob; `git add` turns them back). A ball's worktree is such a checkout, so its scope
files' bytes are not their blobs' bytes, though git sees no change. The L2 map check asks
git what it would store for them. Before: every thrown ball in such a project was refused
(-1, "changed outside any round") before its first round. Real git, real builders."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.reds import red_ready
from tests.support import git, leap, make_repo
from tests.worktrees.conftest import DIAMOND, DIAMOND_REDS, built_a, worktree_of

Builder = Callable[..., str]
ATTRIBUTES = "*.py text eol=crlf\nsrc/a.py filter=tagged\n"
SMUDGED = "# checked out by the tagged filter"


@pytest.fixture
def attributed(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo", {
        ".gitattributes": ATTRIBUTES, "src/a.py": "A = 1\n", "src/b.py": "B = 1\n",
        "src/c.py": "C = 1\n", "src/d.py": "D = 1\n", "README.md": "# demo\n"})
    # a filter git runs on every checkout (smudge) and every add (clean): the checkout
    # gets one more line, which `git add` takes out again
    git("config", "filter.tagged.smudge", f"sed '$a {SMUDGED}'", cwd=repo)
    git("config", "filter.tagged.clean", f"sed '/^{SMUDGED}$/d'", cwd=repo)
    git("config", "filter.tagged.required", "true", cwd=repo)
    assert leap("init", cwd=repo).code == 0
    (tmp_path / "dia.yaml").write_text(DIAMOND)
    assert leap("slice", "cut", str(tmp_path / "dia.yaml"), cwd=repo).code == 0
    red_ready(repo, "dia", DIAMOND_REDS)
    return repo


def test_a_thrown_ball_s_converted_checkout_matches_its_map(attributed: Path) -> None:
    assert leap("throw", "dia", "--ball", "A", cwd=attributed).code == 0
    wt = worktree_of(attributed, "A")
    on_disk = (wt / "src/a.py").read_bytes()  # converted: not the blob's bytes
    assert b"A = 1\r\n" in on_disk and SMUDGED.encode() in on_disk, on_disk
    assert git("cat-file", "blob", "HEAD:src/a.py", cwd=wt) == "A = 1"
    assert git("status", "--porcelain", cwd=wt) == ""  # and git sees no change
    r = leap("ball", "check", "dia", "A", cwd=attributed)
    assert r.code == 0, r
    assert "map ok" in r.out


def test_a_round_in_a_converted_checkout_is_built_and_recorded(attributed: Path,
                                                               builder: Builder) -> None:
    wt = built_a(attributed, builder)  # stored clean, as git adds it
    assert git("status", "--porcelain", cwd=wt) == ""


def test_a_rollback_leaves_converted_files_alone_and_restores_as_a_checkout_would(
        attributed: Path) -> None:
    """A refused round's rollback (restore-scope) in a converted checkout: an untouched
    file is left as it is (before: rewritten with the blob's own bytes, which git then
    showed as changed), a changed one gets the bytes a checkout writes (not the blob's:
    Git LFS's pointer text, an LF file where the checkout has CRLF)."""
    assert leap("throw", "dia", "--ball", "A", cwd=attributed).code == 0
    wt = worktree_of(attributed, "A")
    checked_out = (wt / "src/a.py").read_bytes()
    (wt / "tests/a.sh").write_text("exit 1\n")  # the builder changed its red
    r = leap("round", "dia", "A", "--outcome", "-1", "--evidence", "refused", cwd=attributed)
    assert r.code in (0, 1), r
    assert (wt / "src/a.py").read_bytes() == checked_out
    assert git("status", "--porcelain", cwd=wt) == "", r.out
    assert "1 scope file(s) restored" in r.out + r.err, r

