"""L5, L9: a checkout that is not the ball's own must not change while its builder runs
(``worktrees.watch``); a HEAD moved along leapgit's integration merges, nothing else
changed, is the integrator's move, not a builder's write (a hunt: it held a round)."""

from __future__ import annotations

from pathlib import Path

from leapgit.records import trailers as tr
from leapgit.worktrees.watch import integrated, tree_state
from tests.support import git, make_repo


def _merge(repo: Path, tip: str, files: dict[str, str], trailers: bool) -> str:
    """A merge commit on ``tip`` of a side commit writing ``files``, made with plumbing."""
    git("checkout", "-q", "-b", "side", tip, cwd=repo)
    for name, text in files.items():
        (repo / name).write_text(text)
    git("add", *files, cwd=repo)
    git("commit", "-qm", "side", cwd=repo)
    side = git("rev-parse", "HEAD", cwd=repo)
    git("checkout", "-q", "main", cwd=repo)
    git("branch", "-qD", "side", cwd=repo)
    message = tr.format_message("leap: integrate s/b", [
        (tr.SLICE, "s"), (tr.BALL, "b"), (tr.CANDIDATE, "c" * 40)]).decode() \
        if trailers else "a merge by hand\n"
    tree = git("rev-parse", f"{side}^{{tree}}", cwd=repo)
    return git("commit-tree", tree, "-p", tip, "-p", side, "-m", message, cwd=repo)


def test_a_head_moved_along_integration_merges_is_the_integrators_move(
        tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n", "b.txt": "b\n"})
    (repo / "notes.txt").write_text("the user's own, untracked\n")
    tip = git("rev-parse", "HEAD", cwd=repo)
    before = tree_state(repo)
    landed = _merge(repo, tip, {"c.txt": "c\n"}, trailers=True)
    git("reset", "-q", "--keep", landed, cwd=repo)
    assert integrated(repo, before, tree_state(repo), lambda: {landed})
    assert not integrated(repo, before, tree_state(repo), set)  # no landing recorded there


def test_a_merge_by_hand_or_a_write_beside_the_move_is_a_change(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n", "b.txt": "b\n"})
    tip = git("rev-parse", "HEAD", cwd=repo)
    before = tree_state(repo)
    by_hand = _merge(repo, tip, {"c.txt": "c\n"}, trailers=False)
    git("reset", "-q", "--keep", by_hand, cwd=repo)
    # no integration merge, though a landing were recorded there
    assert not integrated(repo, before, tree_state(repo), lambda: {by_hand, landed})
    git("reset", "-q", "--keep", tip, cwd=repo)
    landed = _merge(repo, tip, {"c.txt": "c\n"}, trailers=True)
    git("reset", "-q", "--keep", landed, cwd=repo)
    (repo / "a.txt").write_text("written by a builder\n")
    # and a write beside the move
    assert not integrated(repo, before, tree_state(repo), lambda: {by_hand, landed})
    git("checkout", "-q", "--", "a.txt", cwd=repo)
    git("reset", "-q", "--keep", tip, cwd=repo)
    assert not integrated(repo, tree_state(repo), before, lambda: {landed})  # no move at all
    git("reset", "-q", "--keep", landed, cwd=repo)
    at_landed = tree_state(repo)
    git("reset", "-q", "--keep", tip, cwd=repo)
    # backwards is no integration
    assert not integrated(repo, at_landed, tree_state(repo), lambda: {landed, tip})
