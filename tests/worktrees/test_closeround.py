"""Closing a round (L6, L9) against builders that do more than edit their scope files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from leapgit.ledger import query
from leapgit.ledger.store import Ledger
from leapgit.rules.episodes import current_episode
from tests.reds import red_commit
from tests.support import IDENTITY, git, leap
from tests.worktrees.conftest import set_config, tree_hash, worktree_of

Builder = Callable[..., str]

HIJACKS = {
    "head-to-spine": 'os.system("git symbolic-ref HEAD refs/heads/main")\n',
    "gitfile-to-main-repo": (
        'common = pathlib.Path(pathlib.Path(".git").read_text().split(":", 1)[1].strip())\n'
        'pathlib.Path(".git").write_text(f"gitdir: {common.parent.parent}\\n")\n'),
    "own-branch": 'os.system("git switch -q -c agent-feature")\n',
}


@pytest.mark.parametrize("how", sorted(HIJACKS))
def test_a_worktree_moved_off_its_ball_branch_is_refused_without_a_git_write(
        diamond: Path, builder: Builder, how: str) -> None:
    set_config(diamond, builder=builder(HIJACKS[how] + (
        'pathlib.Path("src/a.py").write_text("A = \'hijacked\'\\n")\n'
        'pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 1\\nevidence: done\\n")\n'
    )))
    spine = git("rev-parse", "main", cwd=diamond)
    user, status = tree_hash(diamond), git("status", "--porcelain", cwd=diamond)
    r = leap("throw", "dia", "--run", cwd=diamond)
    assert r.code == 1, r
    assert git("rev-parse", "main", cwd=diamond) == spine  # nothing committed on the spine
    assert git("status", "--porcelain", cwd=diamond) == status  # the user's index untouched
    assert tree_hash(diamond) == user
    red = red_commit(diamond, "dia", "A")  # T7.1: the branch starts at the red commit
    assert git("rev-parse", "leap/ball/dia/A", cwd=diamond) == red  # nor on the ball
    if how == "own-branch":
        assert git("rev-parse", "agent-feature", cwd=diamond) == red
    with Ledger(diamond / ".git") as ledger:
        view = ledger.require()
        got = query.receipts(view, "dia", "A", 1)
        assert current_episode(view, "dia", "A").closed
    assert len(got) == 1 and got[0].outcome == -1 and got[0].claim is False
    assert got[0].commit is None and "no longer on its ball branch" in got[0].evidence
    assert "(L5, L9)" in got[0].evidence
    assert (worktree_of(diamond, "A") / "src/a.py").read_text() == "A = 1\n"  # rolled back


def test_a_builder_that_commits_a_round_and_leaves_more_edits_gets_the_next_round(
        diamond: Path, builder: Builder) -> None:
    set_config(diamond, builder=builder("""
        pathlib.Path("src/a.py").write_text("A = 2\\n")
        import subprocess  # the post-commit hook records this commit as round 1
        subprocess.run(["git", "commit", "-qam", "own round", "-m",
                        "Leap-Round: 1\\nLeap-Outcome: 0\\nLeap-Evidence: half way"])
        pathlib.Path("src/a.py").write_text("A = 3\\n")  # and more, left uncommitted
        pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 1\\nevidence: done\\n")
    """))
    r = leap("throw", "dia", "--run", cwd=diamond, env=IDENTITY)
    assert r.code == 0, r
    with Ledger(diamond / ".git") as ledger:
        got = query.receipts(ledger.require(), "dia", "A", 1)
    assert [(x.round, x.outcome, x.recorded_by) for x in got] == [
        (1, 0, "post-commit"), (2, 1, "leap throw --run")]
    wt = worktree_of(diamond, "A")
    red = red_commit(diamond, "dia", "A")  # T7.1: the branch starts at the red commit
    on_branch = git("rev-list", "--reverse", f"{red}..leap/ball/dia/A", cwd=diamond).split()
    assert on_branch == [x.commit for x in got]  # every commit on the branch is a recorded round
    assert git("status", "--porcelain", cwd=wt) == ""
    assert git("show", "leap/ball/dia/A:src/a.py", cwd=diamond) == "A = 3"


def test_a_builder_commit_that_ends_the_episode_is_that_rounds_receipt(
        diamond: Path, builder: Builder) -> None:
    set_config(diamond, builder=builder("""
        import subprocess
        pathlib.Path("src/a.py").write_text("A = 2\\n")
        subprocess.run(["git", "commit", "-qam", "own round", "-m",
                        "Leap-Round: 1\\nLeap-Outcome: -1\\nLeap-Evidence: wrong idea"])
        pathlib.Path("src/a.py").write_text("A = 3\\n")
        pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 1\\nevidence: done\\n")
    """))
    r = leap("throw", "dia", "--run", cwd=diamond, env=IDENTITY)
    assert r.code == 1 and "error" not in r.out, r
    assert "A: 1 round(s), last refuse: wrong idea" in r.out
    red = red_commit(diamond, "dia", "A")  # T7.1: the branch starts at the red commit
    assert git("rev-list", "--count", f"{red}..leap/ball/dia/A", cwd=diamond) == "1"
    assert (worktree_of(diamond, "A") / "src/a.py").read_text() == "A = 1\n"  # rolled back


def test_a_round_with_more_dirty_paths_than_an_argument_list_holds_is_recorded(
        diamond: Path, builder: Builder) -> None:
    set_config(diamond, builder=builder("""
        junk = pathlib.Path("junk")
        junk.mkdir()
        for i in range(20000):  # about 2.9 MB of pathspecs: more than ARG_MAX (2 MiB)
            (junk / (f"{i:05d}" + "x" * 120)).write_text("")
        pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 1\\nevidence: done\\n")
    """))
    r = leap("throw", "dia", "--run", cwd=diamond)
    assert r.code == 1 and "Traceback" not in r.err, r
    with Ledger(diamond / ".git") as ledger:
        got = query.receipts(ledger.require(), "dia", "A", 1)
    assert len(got) == 1 and got[0].outcome == -1 and got[0].commit, got
    assert got[0].evidence.startswith("scope breach (L4, L9): junk/00000x")
    assert "and 19980 more" in got[0].evidence and len(got[0].evidence) < 4000
    assert leap("status", "dia", cwd=diamond).code == 0


def test_a_builder_that_deletes_its_git_file_still_gets_a_receipt(
        diamond: Path, builder: Builder) -> None:
    set_config(diamond, builder=builder("""
        pathlib.Path(".git").unlink()
        pathlib.Path("src/a.py").write_text("A = 2\\n")
    """))
    r = leap("throw", "dia", "--run", cwd=diamond)
    assert r.code == 1 and "Traceback" not in r.err, r
    with Ledger(diamond / ".git") as ledger:
        got = query.receipts(ledger.require(), "dia", "A", 1)
    assert len(got) == 1 and got[0].outcome == -1 and got[0].claim is False, got
    assert got[0].commit is None
    assert (worktree_of(diamond, "A") / "src/a.py").read_text() == "A = 1\n"  # rolled back
