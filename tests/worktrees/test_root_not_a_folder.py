"""L5: a `worktrees.root` where no folder can be made (a file, a place under /proc) is
named in one line before any ledger write, worktree or branch: before, `leap throw` died
on ``NotADirectoryError`` or ``FileNotFoundError``, exit 70."""

from __future__ import annotations

from pathlib import Path

import pytest

from leapgit.ledger import query
from leapgit.ledger.store import Ledger
from tests.support import git, leap, ref
from tests.worktrees.conftest import set_config

HINT = "point worktrees.root at a folder outside every checkout"


def _nothing_thrown(repo: Path, ledger: str | None) -> None:
    assert ref(repo, "leap/ledger") == ledger
    assert ref(repo, "leap/ball/dia/A") is None
    assert len(git("worktree", "list", "--porcelain", cwd=repo).split("\n\n")) == 1
    with Ledger(repo / ".git") as opened:
        assert query.episodes(opened.require(), "dia", "A") == []


def test_a_root_that_is_a_file_is_named(diamond: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "passwd"
    blocker.write_text("root:x:0:0\n")
    set_config(diamond, root=str(blocker))
    ledger = ref(diamond, "leap/ledger")
    r = leap("throw", "dia", cwd=diamond)
    assert (r.code, r.out) == (2, ""), r
    assert r.err == (f"leap: .leap/config.yaml: worktrees.root: {blocker} is not a folder "
                     f"[L5]; {HINT}\n"), r
    assert blocker.read_text() == "root:x:0:0\n"
    _nothing_thrown(diamond, ledger)


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="no /proc here")
def test_a_root_where_no_folder_can_be_made_is_named(diamond: Path) -> None:
    set_config(diamond, root="/proc/leap-worktrees")
    ledger = ref(diamond, "leap/ledger")
    r = leap("throw", "dia", cwd=diamond)
    assert (r.code, r.out) == (2, ""), r
    assert r.err == ("leap: .leap/config.yaml: worktrees.root: cannot make "
                     "/proc/leap-worktrees: No such file or directory in /proc [L5]; "
                     f"{HINT}\n"), r
    _nothing_thrown(diamond, ledger)
