"""The server's ledger rule and the abandon record (issue 14 item 7): `leap slice abandon`
writes a well-formed add-only record the real pre-receive accepts; an abandon of a slice
never cut is refused (L8), and so is a throw of an abandoned slice's ball (L3)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from leapgit.ledger import layout
from leapgit.ledger.store import Ledger
from leapgit.records import yamlio
from leapgit.records.abandon import AbandonRecord
from leapgit.records.types import ThrowRecord
from tests.support import git, leap
from tests.worktrees.conftest import make_diamond

NOW = "2024-01-01T00:00:00Z"


def served_diamond(tmp_path: Path) -> tuple[Path, Path]:
    """The diamond slice's repository with a file remote behind the real server hooks."""
    repo = make_diamond(tmp_path)
    bare = tmp_path / "origin.git"
    git("init", "-q", "--bare", "-b", "main", str(bare), cwd=tmp_path)
    assert leap("hooks", "install", "--server", cwd=bare).code == 0
    git("remote", "add", "origin", str(bare), cwd=repo)
    pushed = push(repo, "main", "leap/ledger")
    assert pushed.returncode == 0, pushed.stderr
    return repo, bare


def push(repo: Path, *refspecs: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "push", "--porcelain", "--no-verify", "origin", *refspecs],
                          cwd=repo, capture_output=True, text=True)


def append(repo: Path, path: str, record: dict[str, object]) -> None:
    with Ledger(repo / ".git") as ledger:
        ledger.append({path: yamlio.dumps(record)}, "a record by hand")


def test_the_server_accepts_an_abandon_and_refuses_a_throw_after_it(tmp_path: Path) -> None:
    repo, bare = served_diamond(tmp_path)
    r = leap("slice", "abandon", "dia", "--reason", "superseded", cwd=repo)
    assert r.code == 0, r
    pushed = push(repo, "leap/ledger")
    assert pushed.returncode == 0, pushed.stderr
    assert git("rev-parse", "leap/ledger", cwd=bare) == git("rev-parse", "leap/ledger",
                                                            cwd=repo)
    assert "reason: \"superseded\"" in git("show", f"leap/ledger:{layout.abandon_path('dia')}",
                                       cwd=bare)

    before = git("rev-parse", "leap/ledger", cwd=bare)
    spine = git("rev-parse", "main", cwd=repo)
    rec = ThrowRecord(slice="dia", ball="A", episode=1, spec_version=1, base=spine,
                      branch="leap/ball/dia/A", thrown_at=NOW)
    append(repo, layout.throw_path("dia", "A", 1), rec.to_dict())
    result = push(repo, "leap/ledger")
    assert result.returncode != 0, result.stderr
    assert "[L3] refs/heads/leap/ledger" in result.stderr, result.stderr
    assert "a throw of slice dia, which is abandoned" in result.stderr, result.stderr
    assert git("rev-parse", "leap/ledger", cwd=bare) == before


def test_the_server_refuses_an_abandon_of_a_slice_never_cut(tmp_path: Path) -> None:
    repo, bare = served_diamond(tmp_path)
    before = git("rev-parse", "leap/ledger", cwd=bare)
    append(repo, layout.abandon_path("s9"), AbandonRecord("s9", "no such slice", NOW).to_dict())
    result = push(repo, "leap/ledger")
    assert result.returncode != 0, result.stderr
    assert "abandons slice s9, which was never cut" in result.stderr, result.stderr
    assert git("rev-parse", "leap/ledger", cwd=bare) == before
