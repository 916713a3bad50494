"""Issue 14 item 11: a refused round leaves the ball branch pushable (L6, L9). A round that
breaches its scope is refused (-1); its commit is kept under its evidence ref, and then the
ball branch moves back to where the round started (compare-and-swap), the round's
out-of-scope additions leave the ball's own worktree, and files that were there untracked
before the round stay. The same whether leapgit commits the round (``close_round``) or the
builder commits it by itself (the post-commit hook records it), or makes commits that
leapgit folds. A real remote behind `git daemon` with the real pre-receive."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from leapgit.errors import RuleViolation
from leapgit.ledger import query
from leapgit.ledger.store import Ledger
from leapgit.records import yamlio
from tests.hooks.world import run_git
from tests.reds import red_commit
from tests.support import GitDaemon, git, hinted_leap, leap, ref
from tests.worktrees.conftest import set_config, worktree_of

Builder = Callable[..., str]

# The round: a scope file changed (src/a.py), a file outside the scope added (stray.txt).
WORK = """
import subprocess
pathlib.Path("src/a.py").write_text("A = 2\\n")
pathlib.Path("docs").mkdir(exist_ok=True)
pathlib.Path("docs/stray.txt").write_text("not A's\\n")
pathlib.Path("src/c.py").write_text("C = 'not mine'\\n")  # C's file, tracked at the start
def commit(message):
    subprocess.run(["git", "add", "-A"], check=True)
    subprocess.run(["git", "commit", "-q", "-m", message], check=True)
"""
HOW = {
    # leapgit commits the round (close_round judges it)
    "leap-commits": 'pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 1\\n'
                    'evidence: done\\n")\n',
    # the builder commits its round with trailers: the post-commit hook records the -1
    "builder-commits": 'commit("a: done\\n\\nLeap-Round: 1\\nLeap-Outcome: 1\\n")\n',
    # the builder commits without trailers: folded into the round leapgit commits
    "builder-folds": 'commit("agent: step")\npathlib.Path(os.environ["LEAP_REPORT"])'
                     '.write_text("outcome: 1\\nevidence: done\\n")\n',
}
EVIDENCE = "refs/leap/evidence/dia/A/1-1"
REPAIR = """\
goal: a
spec: change a, and only a
scope: [src/a.py, tests/a.sh]
proof: sh tests/a.sh
tests: 'test ! -e tests/a.sh || sh tests/a.sh'
rollback: restore-scope
reason: the first build wrote outside its scope
"""


@pytest.fixture
def remote(diamond: Path, tmp_path: Path) -> Iterator[Path]:
    """The diamond's `origin`: a bare repository with the server hook, served by
    `git daemon`, holding the spine and the ledger."""
    served = tmp_path / "served"
    served.mkdir()
    bare = served / "origin.git"
    git("init", "-q", "--bare", "-b", "main", str(bare), cwd=served)
    assert leap("hooks", "install", "--server", cwd=bare).code == 0
    with GitDaemon(served) as daemon:
        git("remote", "add", "origin", daemon.url("origin.git"), cwd=diamond)
        pushed = run_git("push", "--no-verify", "origin", "main", "leap/ledger", cwd=diamond)
        assert pushed.returncode == 0, pushed.stderr
        yield bare


def _refused_run(diamond: Path, builder: Builder, how: str) -> tuple[str, str]:
    """The refused commit, and the builder's command line."""
    bad = builder(WORK + HOW[how])
    set_config(diamond, builder=bad)
    run = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond)
    assert run.code == 1, run
    with Ledger(diamond / ".git") as ledger:
        [receipt] = query.receipts(ledger.require(), "dia", "A", 1)
    assert receipt.outcome == -1 and receipt.commit, receipt
    assert "docs/stray.txt" in receipt.evidence, receipt.evidence
    return receipt.commit, bad


@pytest.mark.parametrize("how", sorted(HOW))
def test_a_refused_round_leaves_the_branch_at_its_start_and_pushable(
        diamond: Path, remote: Path, builder: Builder, how: str) -> None:
    start = red_commit(diamond, "dia", "A")  # T7.1: round 1 starts at the red commit
    refused, _ = _refused_run(diamond, builder, how)
    wt = worktree_of(diamond, "A")
    # the branch is back at the round's start; the worktree's HEAD follows it
    assert ref(diamond, "refs/heads/leap/ball/dia/A") == start
    assert git("rev-parse", "HEAD", cwd=wt) == start
    assert git("symbolic-ref", "HEAD", cwd=wt) == "refs/heads/leap/ball/dia/A"
    # the round's addition outside the scope is gone, the scope rolled back, nothing dirty
    assert not (wt / "docs/stray.txt").exists() and not (wt / "docs").exists()
    assert (wt / "src/a.py").read_text() == "A = 1\n"
    assert (wt / "src/c.py").read_text() == "C = 1\n"
    assert git("status", "--porcelain", "--untracked-files=all", cwd=wt) == ""
    # nothing recorded is lost: the evidence ref holds the refused commit, the audit reads it
    assert ref(diamond, EVIDENCE) == refused
    assert git("show", f"{EVIDENCE}:docs/stray.txt", cwd=diamond) == "not A's"
    assert git("show", f"{EVIDENCE}:src/a.py", cwd=diamond) == "A = 2"
    audited = leap("audit", "--json", cwd=diamond)
    data = json.loads(audited.out)
    assert audited.code == 0 and data["violations"] == [], data  # a refused round is no fault
    assert {"ref": EVIDENCE, "slice": "dia", "ball": "A", "episode": 1, "round": 1,
            "commit": refused, "recorded": True} in data["evidence"], data["evidence"]
    # the real pre-receive accepts the ball branch (the ledger first: it judges against it)
    for name in ("leap/ledger", "leap/ball/dia/A"):
        pushed = run_git("push", "--porcelain", "origin", name, cwd=diamond)
        assert pushed.returncode == 0, pushed.stderr
    assert git("rev-parse", "leap/ball/dia/A", cwd=remote) == start


@pytest.mark.parametrize("how", sorted(HOW))
def test_a_file_untracked_before_the_round_is_left_alone(
        diamond: Path, builder: Builder, how: str) -> None:
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0  # the worktree, no round
    wt = worktree_of(diamond, "A")
    (wt / "notes.txt").write_text("the user's own notes\n")
    (wt / "docs").mkdir()
    (wt / "docs/mine.txt").write_text("mine too\n")
    refused, _ = _refused_run(diamond, builder, how)
    # the builder's `git add -A` took them into the refused commit; they stay all the same
    assert git("show", f"{refused}:notes.txt", cwd=diamond) == "the user's own notes"
    assert (wt / "notes.txt").read_text() == "the user's own notes\n"
    assert (wt / "docs/mine.txt").read_text() == "mine too\n"
    assert not (wt / "docs/stray.txt").exists()
    assert ref(diamond, "refs/heads/leap/ball/dia/A") == red_commit(diamond, "dia", "A")
    status = git("status", "--porcelain", "--untracked-files=all", cwd=wt).splitlines()
    assert sorted(status) == ["?? docs/mine.txt", "?? notes.txt"], status
    # the user's files keep the old worktree from being dropped; the round's own do not
    repair = diamond.parent / "repair.yaml"
    repair.write_text(REPAIR)
    assert leap("ball", "respec", "dia", "A", str(repair), cwd=diamond).code == 0
    again = leap("throw", "dia", "--ball", "A", cwd=diamond)
    assert again.code != 0, again
    assert "still holds uncommitted work: docs/mine.txt, notes.txt (" in again.err, again.err


@pytest.mark.parametrize("how", sorted(HOW))
def test_a_refused_ball_is_thrown_again_after_a_respec(
        diamond: Path, builder: Builder, how: str) -> None:
    refused, bad = _refused_run(diamond, builder, how)
    repair = diamond.parent / "repair.yaml"
    repair.write_text(REPAIR)
    r = leap("ball", "respec", "dia", "A", str(repair), cwd=diamond)
    assert r.code == 0 and "spec version 1 -> 2" in r.out, r
    config = diamond / ".leap" / "config.yaml"
    config.write_text(config.read_text().replace(bad, builder("""
        pathlib.Path("src/a.py").write_text("A = 2\\n")
        pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 1\\nevidence: ok\\n")
    """, name="good")))
    again = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond)
    assert again.code == 0, again
    assert "A: 1 round(s), last pass (claim)" in again.out, again.out
    with Ledger(diamond / ".git") as ledger:
        [receipt] = query.receipts(ledger.require(), "dia", "A", 2)
    assert receipt.outcome == 1 and receipt.claim
    assert ref(diamond, "refs/heads/leap/ball/dia/A") == receipt.commit
    assert ref(diamond, EVIDENCE) == refused  # the old episode's evidence outlives its branch
    audit = leap("audit", cwd=diamond)
    assert f"evidence {EVIDENCE} at {refused[:12]}: round 1 of dia/A, refused (-1)" \
        in audit.out, audit.out


def _hand_commit(wt: Path, message: str) -> str:
    git("add", "-A", cwd=wt)
    git("-c", f"core.hooksPath={wt / '.no-hooks'}", "commit", "-qm", message, cwd=wt)
    return git("rev-parse", "HEAD", cwd=wt)


def test_the_branch_moves_back_only_from_the_refused_commit_and_only_its_own_files(
        diamond: Path, tmp_path: Path) -> None:
    """``rewind`` itself, on a real worktree: compare-and-swap (a branch that moved on since
    the refused commit stays, and no file changes), and a link the round added is removed
    as a link: what it points at, outside the worktree, is never touched."""
    from leapgit.worktrees.rewind import rewind

    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    start = git("rev-parse", "HEAD", cwd=wt)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "precious.txt").write_text("not the worktree's\n")
    (wt / "out").symlink_to(outside)
    (wt / "stray.txt").write_text("x\n")
    refused = _hand_commit(wt, "a breach")
    (wt / "src/a.py").write_text("A = 5\n")
    moved = _hand_commit(wt, "moved on")
    with Ledger(diamond / ".git") as ledger:
        ball = query.load_ball(ledger.require(), "dia", "A")
    branch = "leap/ball/dia/A"
    with pytest.raises(RuleViolation, match="is no longer at the refused commit"):
        rewind(diamond / ".git", wt, branch, start, refused, ball)
    assert git("rev-parse", "HEAD", cwd=wt) == moved and (wt / "stray.txt").exists()
    assert git("status", "--porcelain", cwd=wt) == ""
    done = rewind(diamond / ".git", wt, branch, start, moved, ball)
    assert git("rev-parse", "HEAD", cwd=wt) == start
    assert sorted(done.removed) == ["out", "stray.txt"] and done.kept == ()
    assert not (wt / "out").is_symlink() and not (wt / "stray.txt").exists()
    assert (outside / "precious.txt").read_text() == "not the worktree's\n"
    # the scope file is the rollback's: left as the round wrote it, its index at the start
    assert (wt / "src/a.py").read_text() == "A = 5\n"
    assert git("status", "--porcelain", cwd=wt) == "M src/a.py"


def test_leap_round_leaves_a_refused_breach_the_same_way(diamond: Path) -> None:
    """`leap round` closes a round by hand through ``close_round``: everything uncommitted
    is the round's (it started at the last commit). The refused commit leaves the branch
    and what it added leaves the worktree; the hint that brings it back leads on."""
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    start = git("rev-parse", "HEAD", cwd=wt)
    (wt / "src/a.py").write_text("A = 2\n")
    (wt / "stray.txt").write_text("not A's\n")
    r = leap("round", "dia", "A", "--outcome", "1", "--evidence", "done", cwd=wt)
    assert r.code == 1, r
    assert ref(diamond, "refs/heads/leap/ball/dia/A") == start
    assert not (wt / "stray.txt").exists() and (wt / "src/a.py").read_text() == "A = 1\n"
    assert git("status", "--porcelain", "--untracked-files=all", cwd=wt) == ""
    hint = f"`git restore --source={EVIDENCE} -- stray.txt` brings back what it removed"
    assert hint in r.out + r.err, r
    git("restore", f"--source={EVIDENCE}", "--", "stray.txt", cwd=wt)
    assert (wt / "stray.txt").read_text() == "not A's\n"


def test_a_file_under_a_folder_the_round_replaced_by_an_outside_symlink_comes_back(
    tmp_path: Path,
) -> None:
    """The undo asks each path as it comes: once the round's symlink `a` (in the folder
    `a/`'s place, leading outside) is removed, `a/b` is inside again and is restored, and
    nothing is ever written outside (review of issue 13: every path asked up front kept
    `a/b` missing, and the worktree showed a deletion out of scope)."""
    import os

    from dulwich.repo import Repo

    from leapgit.worktrees.rewind import _changes, _undo
    from tests.support import commit_all, make_repo

    outside = tmp_path / "outside"
    outside.mkdir()
    wt = make_repo(tmp_path / "wt", {"a/b": "start\n"})
    start = git("rev-parse", "HEAD", cwd=wt)
    git("rm", "-rq", "a", cwd=wt)
    os.symlink(outside, wt / "a")
    refused = commit_all(wt, "refused")
    with Repo(str(wt)) as repo:
        got = _undo(repo, wt, start, _changes(repo, start, refused), frozenset())
    assert not (outside / "b").exists()
    assert "a/b" in got.restored and (wt / "a" / "b").read_text() == "start\n", got


def test_scoring_a_fresh_episode_whose_branch_is_gone_names_where_that_episode_started(
        diamond: Path, builder: Builder) -> None:
    """A blind review: with the branch of a respecced ball (episode 2, thrown afresh after a
    refused round, no round yet) deleted, `leap score` named the refused round's commit of
    episode 1 to put the branch back on: scored later, the repaired episode would have been
    judged on the refused bytes. It names where episode 2 started; put back there, the
    score says what comes next (a round first) instead of a missing branch."""
    refused, _ = _refused_run(diamond, builder, "leap-commits")
    repair = diamond.parent / "repair.yaml"
    repair.write_text(REPAIR)
    assert leap("ball", "respec", "dia", "A", str(repair), cwd=diamond).code == 0
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0  # afresh, no round
    branch = "leap/ball/dia/A"
    started = ref(diamond, f"refs/heads/{branch}")
    assert started != refused
    git("worktree", "remove", "--force", str(worktree_of(diamond, "A")), cwd=diamond)
    git("branch", "-D", branch, cwd=diamond)
    config = diamond / ".leap" / "config.yaml"  # a builder and a juror rung, as a scorer has
    cfg = yamlio.loads(config.read_bytes(), str(config))
    cfg["builder"]["identity"] = "model=m,family=f,session=s"
    cfg.setdefault("tribunal", {})["rungs"] = [{
        "id": "x", "provider": "openai", "model": "m", "endpoint": "http://127.0.0.1:9",
        "family": "j", "cost": 0, "context_tokens": 32000,
        "tiers": ["generalist", "operator_safety", "deep_state", "fast_structural"]}]
    config.write_bytes(yamlio.dumps(cfg))
    stopped = leap("score", "dia", "A", cwd=diamond)
    assert stopped.code == 2 and "does not exist" in stopped.err, stopped
    [put_back] = re.findall(r"`(git [^`]*)`", stopped.err)
    assert put_back == f"git branch {branch} {started}", (stopped.err, refused)
    git(*shlex.split(put_back)[1:], cwd=diamond)
    [again] = hinted_leap(stopped.err)
    scored = leap(*again, cwd=diamond)
    assert scored.code == 3 and "has no round yet: nothing to score" in scored.err, scored
    [build] = hinted_leap(scored.err)  # the dogfooding review: it named no command
    assert build == ["throw", "dia", "--ball", "A", "--run"], scored.err
    gone = leap(*build, cwd=diamond)  # its worktree went with the branch: that hint too
    assert gone.code == 3 and "the worktree of dia/A is gone" in gone.err, gone
    [add] = re.findall(r"`(git worktree add [^`]*)`", gone.err)
    git(*shlex.split(add)[1:], cwd=diamond)
    leap(*build, cwd=diamond)  # "then run this again"
    with Ledger(diamond / ".git") as ledger:
        assert [r.round for r in query.receipts(ledger.require(), "dia", "A", 2)] == [1]
