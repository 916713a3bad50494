"""`leap audit` reads the ledger's history with git; the user's git config must not change
what it reads (final review, defect F2: log.showRoot=false hid the root commit's files)."""

from __future__ import annotations

from pathlib import Path

from leapgit.audit.ledger import _commits
from tests.support import git, leap, make_repo


def test_the_root_commit_is_read_whatever_log_show_root_says(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"f.txt": "x\n"})
    assert leap("init", cwd=repo).code == 0
    git("config", "log.showRoot", "false", cwd=repo)
    [commit] = _commits(repo, "refs/heads/leap/ledger")
    assert commit.parents == []
    assert [c.path for c in commit.changes] == ["LEDGER.yaml"]
