"""Moving the spine after the push (finding 1 of issue 6): the ref is what lands, by
compare-and-swap; a checkout that cannot follow is a warning, never a stop."""

from __future__ import annotations

from pathlib import Path

from leapgit.scoring import spine
from tests.scoring.world import commit_files
from tests.support import git, make_repo


def _repo(tmp_path: Path) -> tuple[Path, str, str]:
    root = make_repo(tmp_path / "r", {"a.py": "a = 1\n"})
    old = git("rev-parse", "HEAD", cwd=root)
    new = commit_files(root, old, {"b.py": "b = 2\n"}, "add b")
    return root, old, new


def test_blocking_untracked_names_the_files_the_merge_would_overwrite(tmp_path: Path) -> None:
    root, old, new = _repo(tmp_path)
    (root / "b.py").write_text("mine\n")
    (root / "c.py").write_text("unrelated\n")
    assert spine.blocking_untracked(root, old, new) == ["b.py"]


def test_a_checkout_that_cannot_follow_still_moves_the_ref(tmp_path: Path) -> None:
    root, old, new = _repo(tmp_path)
    (root / "b.py").write_text("mine\n")
    warning = spine.move_spine(root, "main", old, new)
    assert warning is not None and "could not follow" in warning
    assert git("rev-parse", "refs/heads/main", cwd=root) == new
    assert (root / "b.py").read_text() == "mine\n"


def test_a_clean_checkout_fast_forwards(tmp_path: Path) -> None:
    root, old, new = _repo(tmp_path)
    assert spine.move_spine(root, "main", old, new) is None
    assert git("rev-parse", "HEAD", cwd=root) == new
    assert (root / "b.py").read_text() == "b = 2\n"
