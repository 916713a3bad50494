"""`leap ball respec` (L3, L4) and `leap worktree prune` (finished balls only)."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from leapgit.ledger import query
from leapgit.ledger.store import Ledger
from tests.support import git, hinted_leap, leap, ref
from tests.worktrees.conftest import record, set_config, tree_hash, worktree_of

REPAIR = """\
goal: a, better
spec: change a, and add a helper
scope: [src/a.py, {extra}]
proof: "true"
tests: "true"
rollback: restore-scope
reason: the helper was missing
"""


def test_respec_only_for_a_stuck_ball_and_never_into_another_balls_files(
        diamond: Path, tmp_path: Path) -> None:
    repair = tmp_path / "repair.yaml"
    repair.write_text(REPAIR.format(extra="src/a_helper.py"))
    leap("throw", "dia", cwd=diamond)
    r = leap("ball", "respec", "dia", "A", str(repair), cwd=diamond)
    assert r.code == 1 and "dia/A is in-flight; only a stuck ball" in r.err and "[L3]" in r.err
    for _ in range(4):
        record(diamond, "A", 0)
    repair.write_text(REPAIR.format(extra="src/b.py"))
    r = leap("ball", "respec", "dia", "A", str(repair), cwd=diamond)
    assert r.code == 1
    assert (f"{repair}: scope[1]: 'src/b.py' is the same file as 'src/b.py' of ball 'B' "
            "[L4]") in r.err
    repair.write_text(REPAIR.format(extra="src/a_helper.py") + "depends_on: [C]\n")
    r = leap("ball", "respec", "dia", "A", str(repair), cwd=diamond)
    assert r.code == 1 and "depends_on: dependencies are fixed" in r.err
    repair.write_text("goal: 3\n")
    r = leap("ball", "respec", "dia", "A", str(repair), cwd=diamond)
    assert r.code == 2 and str(repair) in r.err and "Traceback" not in r.err
    repair.write_text(REPAIR.format(extra="src/a_helper.py"))
    r = leap("ball", "respec", "dia", "A", str(repair), cwd=diamond)
    assert r.code == 0 and "spec version 1 -> 2" in r.out, r
    with Ledger(diamond / ".git") as ledger:
        ball = query.load_ball(ledger.require(), "dia", "A")
    assert ball.spec_version == 2 and ball.paths == ("src/a.py", "src/a_helper.py")
    assert ball.reason == "the helper was missing" and ball.scope[1].blob == "absent"
    r = leap("throw", "dia", "--ball", "A", cwd=diamond)
    assert r.code == 0 and "episode 2  spec v2" in r.out, r


def test_prune_only_finished_balls(diamond: Path, builder: Callable[..., str]) -> None:
    leap("throw", "dia", cwd=diamond)
    from tests.worktrees.conftest import mark_passed

    mark_passed(diamond, "A")
    set_config(diamond, builder=builder("""
        if os.environ["LEAP_BALL"] == "B":
            pathlib.Path("src/d.py").write_text("breach\\n")
        pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 0\\nevidence: no\\n")
    """), round_limit=1)
    leap("throw", "dia", "--run", cwd=diamond)  # B breaches (-1), C holds (checkpoint)
    wt_c = worktree_of(diamond, "C")
    (wt_c / "notes.txt").write_text("work in progress\n")
    user = tree_hash(diamond)
    r = leap("worktree", "prune", cwd=diamond)
    assert r.code == 0, r
    assert "dia/B: removed: refused (-1) and rolled back" in r.out
    assert "dia/C: kept: not finished (checkpoint)" in r.out
    assert "dia/A: kept: not finished (passed)" in r.out
    assert not worktree_of(diamond, "B").exists() and ref(diamond, "leap/ball/dia/B") is None
    assert wt_c.exists() and tree_hash(diamond) == user

    # A merged onto the spine is finished; uncommitted work keeps it unless forced
    wt_a = worktree_of(diamond, "A")
    (wt_a / "src/a.py").write_text("A = 2\n")
    git("commit", "-qam", "a work", cwd=wt_a)
    git("merge", "-q", "--ff-only", "leap/ball/dia/A", cwd=diamond)
    (wt_a / "scratch.txt").write_text("unsaved\n")
    r = leap("worktree", "prune", "dia", cwd=diamond)
    assert "dia/A: kept: uncommitted work (scratch.txt); --force removes it" in r.out
    r = leap("worktree", "prune", "dia", "--force", cwd=diamond)
    assert "dia/A: removed: merged onto main" in r.out and not wt_a.exists()


def test_a_held_ball_respecced_to_another_scope_starts_afresh_from_the_spine(
        diamond: Path, tmp_path: Path, builder: Callable[..., str]) -> None:
    dropped = _held_and_respecced(diamond, tmp_path, builder)  # episode 1's last round
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond)
    assert r.code == 0 and "A: 1 round(s), last pass (claim): done" in r.out, r
    spine = git("rev-parse", "main", cwd=diamond)
    with Ledger(diamond / ".git") as ledger:
        view = ledger.require()
        assert query.throw(view, "dia", "A", 2).base == spine  # type: ignore[union-attr]
    assert git("show", "leap/ball/dia/A:src/a.py", cwd=diamond) == "A = 1"  # fresh branch
    # nothing lost: the dropped episode's tip stays under a ref of its own
    kept = f"refs/leap/kept/dia/A/{dropped[:12]}"
    assert git("rev-parse", kept, cwd=diamond) == dropped


def test_a_commit_that_lands_on_the_dropped_branch_as_it_goes_is_kept_too(
        diamond: Path, tmp_path: Path, builder: Callable[..., str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A reversibility review: the dropped branch went by `git branch -D`, whatever it held
    by then; a commit that reached it after its tip was kept was lost. It goes by
    compare-and-swap now, and every tip it had is kept."""
    from leapgit.rules import episodes

    _held_and_respecced(diamond, tmp_path, builder)
    late: list[str] = []
    real = episodes.kept_ref

    def keep_then_a_commit_lands(slice_id: str, ball_id: str, tip: str) -> str:
        if not late:  # once: another writer's commit reaches the branch right now
            tree = git("rev-parse", f"{tip}^{{tree}}", cwd=diamond)
            late.append(git("commit-tree", tree, "-p", tip, "-m", "late", cwd=diamond))
            git("update-ref", "refs/heads/leap/ball/dia/A", late[0], cwd=diamond)
        return real(slice_id, ball_id, tip)

    monkeypatch.setattr(episodes, "kept_ref", keep_then_a_commit_lands)
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond)
    assert r.code == 0, r
    assert late and git("rev-parse", f"refs/leap/kept/dia/A/{late[0][:12]}",
                        cwd=diamond) == late[0]


def test_a_dropped_branch_that_keeps_moving_is_a_hold_whose_hint_leads_on(
        diamond: Path, tmp_path: Path, builder: Callable[..., str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from leapgit.rules import episodes

    leap("throw", "dia", "--ball", "A", cwd=diamond)
    _refused_a_round(worktree_of(diamond, "A"))
    assert _respec_a(diamond, tmp_path) == 0
    _helper_builder(diamond, builder)
    real = episodes.kept_ref

    def a_commit_lands_each_time(slice_id: str, ball_id: str, tip: str) -> str:
        tree = git("rev-parse", f"{tip}^{{tree}}", cwd=diamond)
        git("update-ref", "refs/heads/leap/ball/dia/A",
            git("commit-tree", tree, "-p", tip, "-m", "again", cwd=diamond), cwd=diamond)
        return real(slice_id, ball_id, tip)

    monkeypatch.setattr(episodes, "kept_ref", a_commit_lands_each_time)
    held = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond)
    assert held.code == 3 and "kept moving while it was dropped" in held.err, held
    assert "then `leap throw dia --ball A` again" in held.err, held
    monkeypatch.undo()  # the writer stopped
    again = leap("throw", "dia", "--ball", "A", cwd=diamond)  # the hint, exactly
    assert again.code == 0, again
    kept = git("for-each-ref", "--format=%(refname)", "refs/leap/kept/dia/A/", cwd=diamond)
    assert len(kept.splitlines()) == 6, kept  # every tip the branch had


def test_a_dropped_branch_checked_out_in_another_worktree_is_a_hold_whose_hint_leads_on(
        diamond: Path, tmp_path: Path, builder: Callable[..., str]) -> None:
    """A blind review: the branch went by `update-ref -d` even while another worktree had it
    checked out, which left that worktree on a branch with no commits and every later throw
    failing in `git worktree add`. It is refused before anything moves."""
    leap("throw", "dia", "--ball", "A", cwd=diamond)
    wt = worktree_of(diamond, "A")
    _refused_a_round(wt)
    assert _respec_a(diamond, tmp_path) == 0
    _helper_builder(diamond, builder)
    other = tmp_path / "other"
    git("worktree", "add", "-q", "--force", str(other), "leap/ball/dia/A", cwd=diamond)
    held = leap("throw", "dia", "--ball", "A", cwd=diamond)
    assert held.code == 3 and f"checked out in {other}" in held.err, held
    assert wt.exists()  # nothing moved
    command = f"git -C {other} switch --detach"
    assert f"`{command}` frees it, then `leap throw dia --ball A`" in held.err, held
    git("-C", str(other), "switch", "-q", "--detach", cwd=diamond)  # the hint, exactly
    again = leap("throw", "dia", "--ball", "A", cwd=diamond)
    assert again.code == 0, again


def _refused_a_round(wt: Path) -> None:
    (wt / "src/a.py").write_text("A = 9\n")
    assert leap("round", "dia", "A", "--outcome", "-1", "--evidence", "wrong", cwd=wt).code == 1


def _helper_builder(repo: Path, builder: Callable[..., str]) -> None:
    """A builder that writes A's respecced scope's helper and claims a pass."""
    set_config(repo, builder=builder("""
        pathlib.Path("src/a_helper.py").write_text("HELP = 1\\n")
        pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 1\\nevidence: done\\n")
    """))


def _held_and_respecced(repo: Path, folder: Path, builder: Callable[..., str]) -> str:
    """A thrown, four legit rounds on src/a.py ending at a checkpoint (held), then respecced
    to another scope (src/a.py dropped) that keeps the red's frozen test (T7.1), with
    ``_helper_builder``; returns episode 1's last round."""
    leap("throw", "dia", "--ball", "A", cwd=repo)
    wt = worktree_of(repo, "A")
    for n in range(4):
        (wt / "src/a.py").write_text(f"A = {n + 2}\n")
        assert leap("round", "dia", "A", "--outcome", "0", "--evidence", "no", cwd=wt).code == 3
    dropped = git("rev-parse", "leap/ball/dia/A", cwd=repo)
    repair = folder / "repair.yaml"
    repair.write_text(REPAIR.replace("scope: [src/a.py, {extra}]",
                                     "scope: [src/a_helper.py, tests/a.sh]"))
    assert leap("ball", "respec", "dia", "A", str(repair), cwd=repo).code == 0
    _helper_builder(repo, builder)
    return dropped


def _refused_a(repo: Path) -> None:
    """A thrown, its round one refused (-1) by hand: stuck, to be repaired (L3)."""
    assert leap("throw", "dia", "--ball", "A", cwd=repo).code == 0
    r = leap("round", "dia", "A", "--outcome", "-1", "--evidence", "wrong spec", cwd=repo)
    assert r.code == 1, r


def _respec_a(repo: Path, folder: Path, shown: str | None = None) -> int:
    """`leap ball respec dia A FILE` with A's scope and a new helper file; with ``shown``,
    the respec that message names, as printed, FILE the repaired spec."""
    repair = folder / "repair.yaml"
    repair.write_text(REPAIR.format(extra="src/a_helper.py"))
    words = ["ball", "respec", "dia", "A", "FILE"]
    if shown is not None:
        [words] = [w for w in hinted_leap(shown) if w[:2] == ["ball", "respec"]]
    assert words[:4] == ["ball", "respec", "dia", "A"] and words[4:] == ["FILE"], words
    return leap(*words[:4], str(repair), cwd=repo).code


def test_a_refused_ball_s_throw_leads_on_to_the_respec_that_repairs_it(
        diamond: Path, tmp_path: Path) -> None:
    """Every hint leads on: a ball refused (-1) is thrown no more until repaired; the
    refusal names `leap ball respec`, and after it the throw goes on, a fresh episode."""
    _refused_a(diamond)
    again = leap("throw", "dia", "--ball", "A", cwd=diamond)
    assert again.code == 1 and "dia/A was refused (-1) in episode 1 [L3]" in again.err, again
    assert "repair the spec (`leap ball respec dia A FILE`), then throw it" in again.err, again
    assert _respec_a(diamond, tmp_path, again.err) == 0  # the hint
    r = leap("throw", "dia", "--ball", "A", cwd=diamond)  # then throw it
    assert r.code == 0 and "episode 2  spec v2" in r.out, r


def test_a_ball_blocked_by_a_refused_dependency_leads_on_to_that_dependency_s_repair(
        diamond: Path, tmp_path: Path) -> None:
    """Every hint leads on: B waits on A; A refused (-1) blocks B, whose refusal names A's
    respec; after it A is thrown again, and B is no longer blocked (it waits for A)."""
    _refused_a(diamond)
    blocked = leap("throw", "dia", "--ball", "B", cwd=diamond)
    assert blocked.code == 1 and "[L5]" in blocked.err, blocked
    assert "repair A (`leap ball respec dia A FILE`) and throw it again" in blocked.err, \
        blocked
    assert _respec_a(diamond, tmp_path, blocked.err) == 0  # the hint
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0  # and throw it again
    waits = leap("throw", "dia", "--ball", "B", cwd=diamond)
    assert waits.code == 3 and "blocked" not in waits.err, waits  # held: A has not passed


def test_a_fresh_episode_after_the_spine_moved_starts_at_its_red(
        diamond: Path, tmp_path: Path) -> None:
    """T7.1: rounds were built on A's red, so it is not written again; the spine moved
    (a commit outside the slice); A refused and respecced starts its fresh episode on its
    red's own base, at its red, not on the moved tip without it (a dead-end hunt: every
    round of such an episode was refused as editing the frozen tests)."""
    from tests.reds import red_commit
    from tests.support import commit_all, write_files

    _refused_a(diamond)
    write_files(diamond, {"NOTES.md": "the spine moves on\n"})
    commit_all(diamond, "a commit outside the slice")
    assert _respec_a(diamond, tmp_path) == 0
    thrown = leap("throw", "dia", "--ball", "A", cwd=diamond)
    assert thrown.code == 0 and "episode 2" in thrown.out, thrown
    red = red_commit(diamond, "dia", "A")
    assert git("merge-base", "--is-ancestor", red, "leap/ball/dia/A", cwd=diamond) == ""


@pytest.mark.parametrize("where", ["moved", "main checkout"])
def test_prune_keeps_a_branch_another_checkout_stands_on_until_the_hint_frees_it(
        diamond: Path, tmp_path: Path, where: str) -> None:
    """Blind review (8b06608): a refused ball's branch, checked out in a worktree moved by
    hand or in the user's own checkout, was deleted from under it by `leap worktree prune`
    (`update-ref -d` asks no worktree): that checkout stood on nothing, every file "new".
    Prune keeps it and names the git command that frees it; run exactly, the next prune
    removes it, and the checkout keeps its files at the branch's last commit."""
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    _refused_a_round(wt)
    tip = git("rev-parse", "leap/ball/dia/A", cwd=diamond).strip()
    if where == "moved":
        other = tmp_path / "moved-A"
        git("worktree", "move", str(wt), str(other), cwd=diamond)
        (other / "notes.txt").write_text("mine\n")
    else:
        other = diamond
        git("worktree", "remove", "--force", str(wt), cwd=diamond)
        git("switch", "-q", "leap/ball/dia/A", cwd=diamond)
    before = git("status", "--porcelain", cwd=other)
    kept = leap("worktree", "prune", "dia", cwd=diamond)
    assert kept.code == 0 and "dia/A: kept: its branch leap/ball/dia/A is checked out in " \
        f"{other}" in kept.out, kept
    assert ref(diamond, "leap/ball/dia/A") == tip
    [command] = re.findall(r"`(git -C [^`]+)` frees it", kept.out)
    subprocess.run(command, shell=True, cwd=diamond, check=True)  # the hint, exactly
    pruned = leap("worktree", "prune", "dia", cwd=diamond)
    assert pruned.code == 0 and "dia/A: removed" in pruned.out, pruned
    assert ref(diamond, "leap/ball/dia/A") is None
    assert git("rev-parse", "HEAD", cwd=other).strip() == tip  # detached at it, nothing lost
    assert git("status", "--porcelain", cwd=other) == before  # its files as they were


def test_a_branch_git_cannot_delete_is_said_with_gits_reason_not_as_moved(
        diamond: Path) -> None:
    """Blind review (8b06608): any failed compare-and-swap was reported as "moved meanwhile
    and kept", also when the tip had not moved (a lock file a killed git left): prune said
    "removed" at every run. Git's reason is said now, in the ball's line (review e6e0b48:
    an error, exit 2, lost every other ball's line and what was removed); once it is dealt
    with (the lock removed), the prune the line names removes the branch."""
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    _refused_a_round(worktree_of(diamond, "A"))
    lock = diamond / ".git" / "refs" / "heads" / "leap" / "ball" / "dia" / "A.lock"
    lock.write_text("")
    stuck = leap("worktree", "prune", "dia", cwd=diamond)
    assert stuck.code == 0, stuck
    [line] = [x for x in stuck.out.splitlines() if "dia/A:" in x]
    assert "dia/A: removed: " in line and "its branch leap/ball/dia/A is kept: git could " \
        "not delete it (" in line and "A.lock" in line, line
    assert "moved meanwhile" not in stuck.out + stuck.err
    assert not worktree_of(diamond, "A").exists() and ref(diamond, "leap/ball/dia/A")
    lock.unlink()
    [again] = hinted_leap(line)
    pruned = leap(*again, cwd=diamond)  # the line's command, exactly
    assert pruned.code == 0 and "dia/A: removed" in pruned.out, pruned
    assert ref(diamond, "leap/ball/dia/A") is None


@pytest.mark.parametrize("force", [False, True])
def test_prune_of_a_worktree_folder_without_its_git_file_moves_it_aside_as_said(
        diamond: Path, force: bool) -> None:
    """Blind review (8b06608), older than it: a kill inside the `git worktree remove` of a
    prune leaves the ball's folder, still listed by git, without its `.git` file; every
    later prune failed on `git status` with no hint. It is kept and named, the hint moves
    it aside (what it held kept), and the prune after that removes the ball's worktree."""
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    _refused_a_round(wt)
    (wt / ".git").unlink()
    kept = leap("worktree", "prune", "dia", *(["--force"] * force), cwd=diamond)
    assert kept.code == 0 and "dia/A: kept: its folder has no .git file" in kept.out, kept
    [command] = re.findall(r"`(mv [^`]+)`", kept.out)
    subprocess.run(command, shell=True, cwd=diamond, check=True)  # the hint, exactly
    assert (wt.parent / "A.aside" / "src" / "a.py").exists()  # nothing lost
    pruned = leap("worktree", "prune", "dia", cwd=diamond)
    assert pruned.code == 0 and "dia/A: removed" in pruned.out, pruned
    assert "leap.worktrees/dia/A\n" not in git("worktree", "list", "--porcelain", cwd=diamond)


def test_a_repaired_spec_with_several_faults_is_named_whole_in_one_pass(
        diamond: Path, tmp_path: Path) -> None:
    """Dogfooding: a repaired spec missing several fields named `tests` only on the second
    try, and a folder given for the file named no rule. Both now say everything at once,
    each with its rule; the spec mended, the respec is taken."""
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    _refused_a_round(worktree_of(diamond, "A"))
    repair = tmp_path / "repair.yaml"
    repair.write_text("goal: a\n")
    r = leap("ball", "respec", "dia", "A", str(repair), cwd=diamond)
    assert r.code == 2, r
    assert r.err.splitlines() == [
        f"leap: {repair}: (top level): missing required field(s): spec, scope, proof, "
        "rollback [L1]",
        f"leap: {repair}: tests: ball 'A' declares no `tests` command (the suite a candidate "
        "must keep green; without it no score can pass the ball) [L1]; add e.g. `tests: "
        "python -m pytest -q`"], r
    folder = leap("ball", "respec", "dia", "A", str(tmp_path), cwd=diamond)
    assert folder.code == 2 and folder.err == \
        f"leap: {tmp_path}: is a directory, expected a YAML file [L1]\n", folder
    repair.write_text("goal: a\nspec: change a\nscope: [src/a.py]\nproof: 'true'\n"
                      "tests: 'true'\nrollback: restore-scope\nreason: wrong spec\n")
    assert leap("ball", "respec", "dia", "A", str(repair), cwd=diamond).code == 0


def test_a_worktree_whose_folder_is_gone_holds_no_branch(diamond: Path, tmp_path: Path
                                                         ) -> None:
    """Blind review (5063634): a worktree git lists whose folder is gone (moved there by
    hand, then deleted) counted as standing on the ball's branch: prune kept it at every
    run, and the command it named could not run there. It holds nothing: prune removes."""
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    _refused_a_round(wt)
    moved = tmp_path / "moved-A"
    git("worktree", "move", str(wt), str(moved), cwd=diamond)
    shutil.rmtree(moved)
    pruned = leap("worktree", "prune", "dia", cwd=diamond)
    assert pruned.code == 0 and "dia/A: removed" in pruned.out, pruned
    assert ref(diamond, "leap/ball/dia/A") is None


@pytest.mark.parametrize("how", ["no .git", "held elsewhere"])
def test_a_leftover_prune_keeps_leads_on_to_its_removal(diamond: Path, tmp_path: Path,
                                                       how: str) -> None:
    """Blind review (5063634): a ball never thrown whose branch a killed throw left (the
    leftover path of prune) is kept when its folder is no checkout or another checkout
    stands on its branch; the command prune names, run exactly, lets the next prune remove
    it (a folder moved aside made that prune fail on `git status` in it)."""
    place = worktree_of(diamond, "A")
    branch = "leap/ball/dia/A"
    if how == "no .git":
        git("worktree", "add", "-q", "-b", branch, str(place), "main", cwd=diamond)
        (place / ".git").unlink()
        said = "dia/A: kept: its folder has no .git file"
        pattern = r"`(mv [^`]+)`"
    else:
        other = tmp_path / "elsewhere"
        git("worktree", "add", "-q", "-b", branch, str(other), "main", cwd=diamond)
        said = f"dia/A: kept: its branch {branch} is checked out in {other}"
        pattern = r"`(git -C [^`]+)` frees it"
    refused = leap("throw", "dia", "--ball", "A", cwd=diamond)
    assert refused.code == 2 and "`leap worktree prune`" in refused.err, refused
    kept = leap("worktree", "prune", "dia", cwd=diamond)
    assert kept.code == 0 and said in kept.out, kept
    [command] = re.findall(pattern, kept.out)
    subprocess.run(command, shell=True, cwd=diamond, check=True)  # the hint, exactly
    pruned = leap("worktree", "prune", "dia", cwd=diamond)
    assert pruned.code == 0 and "dia/A: removed" in pruned.out, pruned
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0


def test_a_branch_a_locked_worktree_on_a_disk_not_mounted_stands_on_is_kept(
        diamond: Path, tmp_path: Path) -> None:
    """Blind review (reversibility): a worktree whose folder was gone counted as holding no
    branch, a locked one on a disk not mounted too: prune deleted the branch it stood on,
    and mounted again it stood on nothing. Kept until the disk is back and the command
    prune names, run exactly, frees it; the prune after removes it."""
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    _refused_a_round(wt)
    usb = tmp_path / "usb" / "A"
    usb.parent.mkdir()
    git("worktree", "move", str(wt), str(usb), cwd=diamond)
    git("worktree", "lock", "--reason", "usb disk", str(usb), cwd=diamond)
    (usb / "notes.txt").write_text("my notes\n")
    usb.parent.rename(tmp_path / "unmounted")
    kept = leap("worktree", "prune", "dia", cwd=diamond)
    assert kept.code == 0 and f"dia/A: kept: its branch leap/ball/dia/A is checked out in " \
        f"{usb}; git holds it locked and its folder is not there" in kept.out, kept
    assert ref(diamond, "leap/ball/dia/A") is not None
    (tmp_path / "unmounted").rename(usb.parent)  # mounted again
    [command] = re.findall(r"`(git -C [^`]+)` frees it", kept.out)
    subprocess.run(command, shell=True, cwd=diamond, check=True)  # the hint, exactly
    pruned = leap("worktree", "prune", "dia", cwd=diamond)
    assert pruned.code == 0 and "dia/A: removed" in pruned.out, pruned
    assert (usb / "notes.txt").read_text() == "my notes\n"


def test_a_refused_balls_folder_without_its_git_file_is_moved_aside_by_the_throw_hint(
        diamond: Path, tmp_path: Path) -> None:
    """Blind review (reversibility): a kill inside prune's `git worktree remove` of a
    refused ball left its folder without `.git`: prune said "not rolled back yet" with no
    command, and the throw after a respec failed on `git status` there. Prune names the
    move aside whether the ball is finished or not, and so does the throw; run exactly, the
    throw after it goes on."""
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    _refused_a_round(wt)
    (wt / "src" / "a.py").write_text("A = 9\n")  # not rolled back: prune would keep it
    (wt / ".git").unlink()
    kept = leap("worktree", "prune", "dia", cwd=diamond)
    assert kept.code == 0 and "dia/A: kept: its folder has no .git file" in kept.out, kept
    repair = tmp_path / "repair.yaml"
    repair.write_text(REPAIR.format(extra="src/a_helper.py"))
    assert leap("ball", "respec", "dia", "A", str(repair), cwd=diamond).code == 0
    refused = leap("throw", "dia", "--ball", "A", cwd=diamond)
    assert refused.code == 2 and "has no .git file" in refused.err, refused
    [move] = re.findall(r"`(mv [^`]+)` moves it aside", refused.err)
    subprocess.run(move, shell=True, cwd=diamond, check=True)  # the hint, exactly
    [again] = [w for w in hinted_leap(refused.err) if w[0] == "throw"]
    thrown = leap(*again, cwd=diamond)
    assert thrown.code == 0, thrown
    assert (wt.parent / "A.aside" / "src" / "a.py").read_text() == "A = 9\n"
