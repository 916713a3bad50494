"""`leap status`, `leap audit` and `leap merge` look at the spine's first-parent line since
the oldest merge of the merged slices (``scoring.reopen``): the oldest is git's octopus
merge base of every slice's merge tip. Past about 50,000 tips their ids overflow the
system's argument limit (ARG_MAX, 2 MiB here) in one `git merge-base` call; the tips go
in slices of a bounded size, each folded into the base found so far, which is what git's
--octopus does itself. Real git, a real line of 52,000 commits."""

from __future__ import annotations

import itertools
import subprocess
from pathlib import Path

import pytest

from leapgit.scoring import reopen
from tests.support import git


def line_of(root: Path, n: int) -> list[str]:
    """A spine of ``n`` commits, one after the other; their ids, newest first."""
    git("init", "-q", "-b", "main", str(root), cwd=root.parent)
    stream = b"".join(b"commit refs/heads/main\nmark :%d\ncommitter a <a@b> %d +0000\n"
                      b"data 2\nc\n%s\n" % (i + 1, 1_000_000 + i,
                                           b"from :%d\n" % i if i else b"")
                      for i in range(n))
    subprocess.run(["git", "fast-import", "--quiet"], cwd=root, input=stream, check=True)
    return git("rev-list", "main", cwd=root).split()


def test_fifty_two_thousand_merge_tips_find_the_oldest_without_overflowing(tmp_path: Path
                                                                        ) -> None:
    ids = line_of(tmp_path / "spine", 52_000)
    assert len(" ".join(ids)) > 2 * 1024 * 1024  # more than one call's arguments can hold
    line = reopen._line_since(tmp_path / "spine", "main", set(ids))
    assert [sha for sha, _ in line] == ids  # newest first, ending with the oldest tip
    assert line[-1] == (ids[-1], True)


@pytest.mark.parametrize("size", [1, 2, 3, 7])
def test_tips_in_slices_find_the_base_one_call_finds(tmp_path: Path, size: int,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    ids = line_of(tmp_path / "spine", 40)
    tips = {ids[5], ids[17], ids[3], ids[30], ids[12], ids[29], ids[8], ids[9]}
    whole = reopen._line_since(tmp_path / "spine", "main", tips)
    assert whole[-1][0] == ids[30]
    monkeypatch.setattr(reopen, "_OCTOPUS_ARGS", size)
    assert reopen._line_since(tmp_path / "spine", "main", tips) == whole


def test_a_criss_cross_history_in_slices_finds_a_base_one_call_finds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two merges that cross have two merge bases; git's fold carries both to the next tip,
    and so do the slices (a blind review: keeping only the first gave an older base, one
    no single call finds). Which of the bases comes first may differ; on the spine's line
    of merges, where the tips are, there is one."""
    root = tmp_path / "cc"
    git("init", "-q", "-b", "main", str(root), cwd=tmp_path)

    def commit(message: str, *parents: str) -> str:
        tree = git("mktree", cwd=root, input=b"")
        args = [a for p in parents for a in ("-p", p)]
        return git("commit-tree", tree, *args, "-m", message, cwd=root)

    base = commit("O")
    a1, b1 = commit("a1", base), commit("b1", base)
    a2, b2 = commit("A2", a1, b1), commit("B2", b1, a1)
    monkeypatch.setattr(reopen, "_OCTOPUS_ARGS", 2)
    for parent in (a1, b1):
        x = commit(f"X on {parent[:7]}", parent)
        for tips in itertools.permutations([b2, a2, x]):
            every = git("merge-base", "--octopus", "--all", *tips, cwd=root).split()
            assert reopen._octopus_base(root, list(tips)) in every, (parent, tips)


def test_the_paths_a_spine_commit_changes_are_read_as_git_stores_them(tmp_path: Path) -> None:
    """L8 matches the paths a spine commit changes against a ball's merged files, byte for
    byte: a name git would quote (non-ASCII under ``core.quotePath``, a tab, a quote, a
    line break, a leading space) comes back as it is, a rename as a deletion and an
    addition whatever ``diff.renames`` says, and commits with no change or a merge read on
    their first parent keep their own sets."""
    from tests.support import make_repo

    names = ["calc/ü.py", "calc/tab\there.py", 'calc/"quoted".py', "calc/line\nbreak.py",
             " lead.py"]
    root = make_repo(tmp_path / "r", {"calc/v.py": "v\n"})
    git("config", "core.quotePath", "true", cwd=root)
    git("config", "diff.renames", "true", cwd=root)
    for name in names:
        (root / name).write_text("x\n")
    git("add", "-A", cwd=root)
    git("commit", "-qm", "odd names", cwd=root)
    odd = git("rev-parse", "HEAD", cwd=root)
    git("mv", "calc/v.py", "calc/w.py", cwd=root)
    git("commit", "-qm", "a rename", cwd=root)
    moved = git("rev-parse", "HEAD", cwd=root)
    git("commit", "-q", "--allow-empty", "-m", "nothing", cwd=root)
    empty = git("rev-parse", "HEAD", cwd=root)
    git("checkout", "-q", "-b", "side", odd, cwd=root)
    (root / "side.py").write_text("s\n")
    git("add", "-A", cwd=root)
    git("commit", "-qm", "a side line", cwd=root)
    git("checkout", "-q", "main", cwd=root)
    git("merge", "-q", "--no-ff", "-m", "merge the side line", "side", cwd=root)
    merged = git("rev-parse", "HEAD", cwd=root)
    found = reopen._changed(root, [odd, moved, empty, merged])
    assert found == {odd: set(names), moved: {"calc/v.py", "calc/w.py"}, empty: set(),
                     merged: {"side.py"}}, found
