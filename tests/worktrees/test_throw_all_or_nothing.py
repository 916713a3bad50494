"""Every hint leads on (issue 14 item 6): a throw validates every ball before it removes or
creates any worktree or branch (a refused throw changes none, of any ball), and the
`leap worktree prune SLICE --force` its refusal names removes what blocks it."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from tests.support import git, leap, ref
from tests.worktrees.conftest import mark_passed, set_config, worktree_of

BREACHES = """\
import os, pathlib
pathlib.Path("src/d.py").write_text("not my file\\n")
pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 1\\nevidence: done\\n")
"""
REPAIR = """\
goal: {b}
spec: change {b} and nothing else
scope: [src/{f}.py, tests/{f}.sh]
proof: sh tests/{f}.sh
tests: 'test ! -e tests/{f}.sh || sh tests/{f}.sh'
rollback: restore-scope
reason: the builder wrote another ball's file
"""


def refused_and_respecced(repo: Path, tmp_path: Path) -> None:
    """B and C each write D's file (L4: -1, rolled back), then get a new spec."""
    assert leap("throw", "dia", "--ball", "A", cwd=repo).code == 0
    mark_passed(repo, "A")
    script = tmp_path / "breaches.py"
    script.write_text(BREACHES)
    set_config(repo, builder=f"{sys.executable} {script}", round_limit=1)
    r = leap("throw", "dia", "--run", cwd=repo)
    assert "B: 1 round(s), last refuse" in r.out and "C: 1 round(s), last refuse" in r.out, r
    repair = tmp_path / "repair.yaml"
    for ball in "BC":
        repair.write_text(textwrap.dedent(REPAIR.format(b=ball, f=ball.lower())))
        assert leap("ball", "respec", "dia", ball, str(repair), cwd=repo).code == 0


def worktrees_and_branches(repo: Path) -> dict[str, tuple[str | None, bool]]:
    return {b: (ref(repo, f"leap/ball/dia/{b}"), worktree_of(repo, b).is_dir()) for b in "ABCD"}


def test_a_refused_throw_changes_no_worktree_and_no_branch_of_any_ball(
        diamond: Path, tmp_path: Path) -> None:
    refused_and_respecced(diamond, tmp_path)
    (worktree_of(diamond, "C") / "notes.txt").write_text("my own notes\n")
    before = worktrees_and_branches(diamond)
    assert before["B"][0] is not None and before["B"][1]
    ledger = ref(diamond, "leap/ledger")
    r = leap("throw", "dia", cwd=diamond)
    assert r.code == 2, r
    assert worktrees_and_branches(diamond) == before  # B's old worktree and branch stand
    assert "old worktree of dia/C still holds uncommitted work: notes.txt" in r.err, r
    assert "`leap worktree prune dia --force` removes it" in r.err
    assert ref(diamond, "leap/ledger") == ledger

    # the hint, exactly: it removes C's worktree, and the throw goes on
    r = leap("worktree", "prune", "dia", "--force", cwd=diamond)
    assert r.code == 0 and "dia/C: removed: refused (-1) and rolled back" in r.out, r
    assert not worktree_of(diamond, "C").exists()
    r = leap("throw", "dia", cwd=diamond)
    assert r.code == 0, r
    assert "B  wave 1  episode 2  spec v2" in r.out and "C  wave 1  episode 2  spec v2" in r.out
    assert git("status", "--porcelain", cwd=worktree_of(diamond, "C")) == ""


def test_a_throw_refused_for_a_stray_folder_drops_no_other_ball(
        diamond: Path, tmp_path: Path) -> None:
    refused_and_respecced(diamond, tmp_path)
    assert leap("worktree", "prune", "dia", cwd=diamond).code == 0  # B and C go
    (worktree_of(diamond, "C")).mkdir(parents=True)
    (worktree_of(diamond, "C") / "stray.txt").write_text("not a worktree\n")
    before = worktrees_and_branches(diamond)
    r = leap("throw", "dia", cwd=diamond)
    assert r.code == 2 and "dia/C already exists and is not a worktree" in r.err, r
    assert worktrees_and_branches(diamond) == before  # B was not made, then dropped


def test_prune_force_removes_a_held_balls_worktree_its_rethrow_drops(
        diamond: Path, tmp_path: Path) -> None:
    """A held ball respecced to another scope starts afresh (L3), dropping its old worktree:
    work left there blocks the throw, and the `--force` prune its hint names removes it
    (it printed `kept: not finished` and removed nothing)."""
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    for n in range(4):  # four held rounds: a checkpoint
        (wt / "src/a.py").write_text(f"A = {n + 2}\n")
        assert leap("round", "dia", "A", "--outcome", "0", "--evidence", "no", cwd=wt).code == 3
    repair = tmp_path / "repair.yaml"
    repair.write_text(REPAIR.format(b="A", f="a").replace("src/a.py", "src/a_helper.py"))
    assert leap("ball", "respec", "dia", "A", str(repair), cwd=diamond).code == 0
    (wt / "notes.txt").write_text("my own notes\n")
    r = leap("throw", "dia", "--ball", "A", cwd=diamond)
    assert r.code == 2, r
    assert "old worktree of dia/A still holds uncommitted work: notes.txt" in r.err, r
    assert "`leap worktree prune dia --force` removes it" in r.err
    r = leap("worktree", "prune", "dia", cwd=diamond)  # unforced, the work is kept
    assert "dia/A: kept:" in r.out and wt.is_dir(), r
    r = leap("worktree", "prune", "dia", "--force", cwd=diamond)
    assert r.code == 0, r
    assert "dia/A: removed: respecced: its next throw starts afresh" in r.out, r
    assert not wt.exists() and ref(diamond, "leap/ball/dia/A") is None
    r = leap("throw", "dia", "--ball", "A", cwd=diamond)
    assert r.code == 0 and "A  wave 0  episode 2  spec v2" in r.out, r


def test_removing_a_balls_worktree_forgets_no_worktree_of_the_users(diamond: Path,
                                                                    tmp_path: Path) -> None:
    """L8, nothing lost: a worktree of the user's on a disk not mounted now (its folder is
    not there) stays known to git when leapgit removes one of its own. A repository-wide
    `git worktree prune` after each removal made git forget it: its folder, mounted again,
    was a checkout git no longer knew (`git worktree repair` had nothing to repair from)."""
    usb = tmp_path / "usb" / "feature"
    git("worktree", "add", "-q", "-b", "feature", str(usb), cwd=diamond)
    (usb.parent).rename(tmp_path / "unmounted")
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    for n in range(4):  # four held rounds: a checkpoint, then a respec to another scope
        (wt / "src/a.py").write_text(f"A = {n + 2}\n")
        assert leap("round", "dia", "A", "--outcome", "0", "--evidence", "no", cwd=wt).code == 3
    repair = tmp_path / "repair.yaml"
    repair.write_text(REPAIR.format(b="A", f="a").replace("src/a.py", "src/a_helper.py"))
    assert leap("ball", "respec", "dia", "A", str(repair), cwd=diamond).code == 0
    r = leap("worktree", "prune", "dia", "--force", cwd=diamond)
    assert r.code == 0 and "dia/A: removed" in r.out, r
    assert not worktree_of(diamond, "A").exists()
    assert f"worktree {usb}\n" in git("worktree", "list", "--porcelain", cwd=diamond)
    (tmp_path / "unmounted").rename(usb.parent)  # mounted again: a checkout git knows
    assert git("status", "--porcelain", cwd=usb) == ""
    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=usb).strip() == "feature"


def test_a_balls_branch_is_removed_only_at_the_tip_it_was_judged_at(diamond: Path) -> None:
    """L8, nothing lost: removing a ball's worktree and branch deletes the branch by
    compare-and-swap on the tip its caller judged (`git branch -D` deleted whatever the
    branch held by then): a commit that landed meanwhile keeps it."""
    from leapgit.ledger.workspace import open_workspace
    from leapgit.worktrees import place

    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    mark_passed(diamond, "A")
    assert leap("throw", "dia", "--ball", "B", cwd=diamond).code == 0
    ws = open_workspace(diamond)
    for ball in "AB":
        branch = f"leap/ball/dia/{ball}"
        judged = ref(diamond, branch)
        assert judged is not None
        wt = worktree_of(diamond, ball)
        (wt / f"src/{ball.lower()}.py").write_text("landed meanwhile\n")
        git("commit", "-q", "-am", "a commit after the judgment", cwd=wt)
        landed = ref(diamond, branch)
        at = judged if ball == "A" else landed
        assert place.remove(ws, wt, (branch, at), force=True) == \
            (None if ball == "B" else "it moved meanwhile")
        assert not wt.exists()
        assert ref(diamond, branch) == (landed if ball == "A" else None)


def test_a_balls_branch_another_checkout_stands_on_is_never_removed(diamond: Path,
                                                                    tmp_path: Path) -> None:
    """Blind review (5063634): `update-ref -d` asks no worktree, so `remove` itself keeps a
    branch another checkout has checked out (its callers say so first), and the ball's
    worktree with it: False, nothing touched."""
    from leapgit.ledger.workspace import open_workspace
    from leapgit.worktrees import place

    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    branch = "leap/ball/dia/A"
    tip = ref(diamond, branch)
    assert tip is not None
    git("switch", "-q", "--detach", cwd=wt)
    git("switch", "-q", branch, cwd=diamond)  # the user's checkout stands on it
    ws = open_workspace(diamond)
    assert place.remove(ws, wt, (branch, tip), force=True) == place.HELD
    assert wt.is_dir() and ref(diamond, branch) == tip
