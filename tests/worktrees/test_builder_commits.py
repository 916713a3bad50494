"""Builders that commit by themselves (issue 14 item 5, L6, L9): the commits a builder makes
during a round are folded into that round's one commit with the receipt trailers, so the
ball branch is one the server's pre-receive accepts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from leapgit.ledger import query
from leapgit.ledger.store import Ledger
from tests.hooks.world import run_git
from tests.reds import red_commit
from tests.support import git, leap
from tests.worktrees.conftest import set_config, worktree_of

Builder = Callable[..., str]

TWO_COMMITS = """
import subprocess
def commit(message):
    subprocess.run(["git", "add", "-A"], check=True)
    subprocess.run(["git", "commit", "-q", "-m", message], check=True)
pathlib.Path("src/a.py").write_text("A = 2\\n")
commit("agent: first step")
pathlib.Path("src/a.py").write_text("A = 3\\n")
commit("agent: second step")
"""


def _server(tmp_path: Path, repo: Path) -> Path:
    """A bare remote with the server hook, holding the spine and the ledger."""
    bare = tmp_path / "origin.git"
    git("init", "-q", "--bare", "-b", "main", str(bare), cwd=tmp_path)
    assert leap("hooks", "install", "--server", cwd=bare).code == 0
    pushed = run_git("push", "--no-verify", str(bare), "main", "leap/ledger", cwd=repo)
    assert pushed.returncode == 0, pushed.stderr
    return bare


def test_two_trailer_less_commits_are_one_round_commit_the_server_accepts(
        diamond: Path, builder: Builder, tmp_path: Path) -> None:
    bare = _server(tmp_path, diamond)
    set_config(diamond, builder=builder(TWO_COMMITS))
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond)
    assert r.code == 0, r
    assert "A: 1 round(s), last pass (claim)" in r.out
    with Ledger(diamond / ".git") as ledger:
        got = query.receipts(ledger.require(), "dia", "A", 1)
    assert len(got) == 1 and got[0].commit, got
    red = red_commit(diamond, "dia", "A")  # T7.1: the branch starts at the red commit
    on_branch = git("rev-list", "--reverse", f"{red}..leap/ball/dia/A", cwd=diamond).split()
    assert on_branch == [got[0].commit]  # two builder commits, one round commit
    body = git("log", "-1", "--format=%B", got[0].commit, cwd=diamond)
    assert "Leap-Round: 1" in body and "Leap-Outcome: 1" in body
    assert git("show", "leap/ball/dia/A:src/a.py", cwd=diamond) == "A = 3"  # no work lost
    wt = worktree_of(diamond, "A")
    assert git("status", "--porcelain", cwd=wt) == ""
    assert (wt / "src/a.py").read_text() == "A = 3\n"
    for ref in ("leap/ledger", "leap/ball/dia/A"):  # the ledger first: the server judges
        # the ball branch against the records it stores
        pushed = run_git("push", "--porcelain", "--no-verify", str(bare), ref, cwd=diamond)
        assert pushed.returncode == 0, pushed.stderr  # the real pre-receive accepts it
    assert "throw recorded" not in pushed.stderr
    assert git("rev-parse", "leap/ball/dia/A", cwd=bare) == got[0].commit


def test_the_scope_check_judges_the_sum_of_the_builders_commits(
        diamond: Path, builder: Builder) -> None:
    """A file outside the scope in the builder's second commit is a breach of the round,
    whatever the first commit held (L4, L9): the folded commit is checked."""
    set_config(diamond, builder=builder(TWO_COMMITS + """
pathlib.Path("src/c.py").write_text("C = 'not mine'\\n")
commit("agent: and a little more")
pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 1\\nevidence: done\\n")
"""))
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond)
    assert r.code == 1, r
    assert "scope breach (L4, L9): src/c.py outside the scope of A" in r.out
    with Ledger(diamond / ".git") as ledger:
        got = query.receipts(ledger.require(), "dia", "A", 1)
    assert len(got) == 1 and got[0].outcome == -1 and got[0].commit
    red = red_commit(diamond, "dia", "A")  # T7.1: the branch starts at the red commit
    # the refused commit left the branch (issue 14 item 11), kept under its evidence ref
    assert git("rev-list", f"{red}..leap/ball/dia/A", cwd=diamond).split() == []
    assert git("rev-parse", "refs/leap/evidence/dia/A/1-1", cwd=diamond) == got[0].commit
    assert git("rev-parse", f"{got[0].commit}^", cwd=diamond) == red  # one commit: folded
    touched = git("diff-tree", "-r", "--name-only", "--no-commit-id", got[0].commit,
                  cwd=diamond).split()
    assert touched == ["src/a.py", "src/c.py"]  # the sum, kept as evidence
    wt = worktree_of(diamond, "A")
    assert (wt / "src/a.py").read_text() == "A = 1\n"  # rolled back


def test_leap_round_folds_a_persons_trailer_less_commits(diamond: Path) -> None:
    """`leap round` closes a round the same way: commits made by hand since the round
    started become its one commit."""
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    for n in (2, 3):
        (wt / "src/a.py").write_text(f"A = {n}\n")
        git("-c", f"core.hooksPath={wt / '.no-hooks'}", "commit", "-qam", f"step {n}", cwd=wt)
    r = leap("round", "dia", "A", "--outcome", "0", "--evidence", "half way", cwd=wt)
    assert r.code == 3, r
    with Ledger(diamond / ".git") as ledger:
        got = query.receipts(ledger.require(), "dia", "A", 1)
    red = red_commit(diamond, "dia", "A")  # T7.1: the branch starts at the red commit
    assert git("rev-list", f"{red}..leap/ball/dia/A", cwd=diamond).split() == [got[0].commit]
    assert "Leap-Round: 1" in git("log", "-1", "--format=%B", cwd=wt)
    assert (wt / "src/a.py").read_text() == "A = 3\n"
