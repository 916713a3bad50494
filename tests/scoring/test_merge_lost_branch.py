"""Every hint leads on (L8): a passed ball whose branch and commit this clone lacks holds
`leap merge`, and the hold says what brings it back, asking the spine's remote: the fetch
of its copy there, or, with no copy anywhere, giving the slice up and cutting its work
again; a ball branch deleted by hand stops `leap score` with the `git branch` that puts it
back. Each hint is run as printed, and the work goes on."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from tests.scoring.test_merge_refusals import PLAN, draft, red_test, two_passed_copy
from tests.scoring.world import Project, build_project
from tests.support import GitDaemon, git, hinted_leap
from tests.templates import Served

SLICE = "left"
DRAFT_AGAIN = draft("again", [("u2", "calc/u.py"), ("v2", "calc/v.py")])


def lose_v(p: Project, copy: bool = True) -> str:
    """v's branch, and the commit its pass names, gone from this clone (with ``copy``, a
    copy of it is pushed to the remote first); its passed commit."""
    branch = f"leap/ball/{SLICE}/v"
    commit = p.tip(f"refs/heads/{branch}")
    assert p.leap("sync", "origin").code == 0  # the ledger first: the server judges by it
    if copy:
        git("push", "-q", "origin", f"refs/heads/{branch}:refs/heads/{branch}", cwd=p.work)
    for wt in (p.worktree("v", SLICE),):
        git("worktree", "remove", "--force", str(wt), cwd=p.work)
    git("branch", "-D", "-q", branch, cwd=p.work)
    git("update-ref", "-d", f"refs/remotes/origin/{branch}", cwd=p.work, check=False)
    git("reflog", "expire", "--expire=now", "--all", cwd=p.work)
    git("gc", "-q", "--prune=now", cwd=p.work)
    assert git("cat-file", "-t", commit, cwd=p.work, check=False) != "commit"
    return commit


def fetch_hint(err: str) -> list[str]:
    found = [c for c in (s.strip("`") for s in err.split("`")[1::2]) if c.startswith("git fetch")]
    assert len(found) == 1, err
    return shlex.split(found[0])


def test_a_lost_ball_the_remote_holds_is_fetched_as_the_hold_says_and_the_slice_lands(
        isolated: Path, served: Served, scripted_url: str) -> None:
    with two_passed_copy(served, scripted_url, SLICE) as p:
        lose_v(p)
        held = p.leap("merge", SLICE)
        assert held.code == 3 and "[L8]" in held.err, held
        assert "v (its branch and passed commit" in held.err, held
        subprocess.run(fetch_hint(held.err), cwd=p.work, check=True)
        assert hinted_leap(held.err) == [["merge", SLICE]], held.err
        landed = p.leap(*hinted_leap(held.err)[0])
        assert landed.code == 0, landed


def test_a_lost_ball_no_remote_holds_leads_on_to_giving_the_slice_up_and_cutting_it_again(
        isolated: Path, served: Served, scripted_url: str) -> None:
    with two_passed_copy(served, scripted_url, SLICE) as p:
        lose_v(p, copy=False)
        held = p.leap("merge", SLICE)
        assert held.code == 3 and "[L8]" in held.err, held
        assert "the spine's remote origin has no copy" in held.err, held
        abandon, cut = hinted_leap(held.err)[1:]
        assert abandon == ["slice", "abandon", SLICE, "--reason", "TEXT"], held.err
        assert cut == ["slice", "cut", "FILE"], held.err
        given_up = p.leap(*abandon[:-1], "v's work is lost to this clone")
        assert given_up.code == 0, given_up
        draft = p.work.parent / "again.yaml"
        draft.write_text(DRAFT_AGAIN)
        again = p.leap("slice", "cut", str(draft))  # its files are free for the work again
        assert again.code == 0, again


def test_a_lost_ball_asked_of_a_remote_that_did_not_answer_leads_on_once_it_answers(
        isolated: Path, served: Served, scripted_url: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The remote goes out of reach after the ledger's sync, as the merge asks it whether it
    holds v's branch: no word of a loss, only `leap merge left` again once origin answers.
    Run as printed once it answers, the merge asks again and names the fetch of its copy
    (another hold, never the same one), and the fetch lands the slice."""
    from leapgit.ledger import sync as syncing

    with two_passed_copy(served, scripted_url, SLICE) as p:
        passed = lose_v(p)
        away = p.bare.with_name(p.bare.name + ".away")
        real = syncing.sync

        def synced_then_cut_off(*args: object, **kwargs: object) -> syncing.SyncResult:
            done = real(*args, **kwargs)  # type: ignore[arg-type]
            p.bare.rename(away)  # out of reach before the ball's branch is asked for
            return done

        monkeypatch.setattr(syncing, "sync", synced_then_cut_off)
        held = p.leap("merge", SLICE)
        monkeypatch.undo()
        away.rename(p.bare)
        assert held.code == 3 and "[L8]" in held.err, held
        assert f"`leap merge {SLICE}` again once origin answers (it did not now): it asks " \
               f"again whether origin holds leap/ball/{SLICE}/v, and names its fetch, or what " \
               "is left to do without one" in held.err, held.err
        assert "no copy" not in held.err and "abandon" not in held.err, held.err
        assert hinted_leap(held.err) == [["merge", SLICE]], held.err
        before = p.remote_tip("refs/heads/main")
        asked = p.leap(*hinted_leap(held.err)[0])  # the hint, exactly, origin answering
        assert asked.code == 3 and "once origin answers" not in asked.err, asked
        subprocess.run(fetch_hint(asked.err), cwd=p.work, check=True)
        assert hinted_leap(asked.err) == [["merge", SLICE]], asked.err
        landed = p.leap(*hinted_leap(asked.err)[0])
        assert landed.code == 0, landed
        assert p.tip("main") == p.remote_tip("refs/heads/main") != before
        git("merge-base", "--is-ancestor", passed, "main", cwd=p.work)  # v's work landed


def thrown(base: Path, daemon: GitDaemon, url: str) -> Project:
    """``two_passed`` before its scores: u and v built, each claiming a pass."""
    p = build_project(base, daemon, url, draft(SLICE, [("u", "calc/u.py"),
                                                       ("v", "calc/v.py")]),
                      None, {"u": PLAN["u"], "v": PLAN["v"]})
    for b in "uv":
        assert p.red(b, SLICE, red_test(b)).code == 0
    assert p.leap("throw", SLICE, "--run").code == 0
    return p


def test_a_ball_branch_deleted_by_hand_is_put_back_as_score_says_and_then_scored(
        isolated: Path, served: Served, scripted_url: str) -> None:
    with served.world("thrown-left", lambda f: thrown(f, served.daemon, scripted_url)) as p:
        branch = f"leap/ball/{SLICE}/v"
        claimed = p.tip(f"refs/heads/{branch}")
        git("worktree", "remove", "--force", str(p.worktree("v", SLICE)), cwd=p.work)
        git("branch", "-D", "-q", branch, cwd=p.work)
        refused = p.leap("score", SLICE, "v")
        assert refused.code == 2 and f"the ball's branch {branch} does not exist" in refused.err
        put_back = [c for c in refused.err.split("`")[1::2] if c.startswith("git branch")]
        assert put_back == [f"git branch {branch} {claimed}"], refused.err
        subprocess.run(shlex.split(put_back[0]), cwd=p.work, check=True)
        assert hinted_leap(refused.err) == [["score", SLICE, "v"]], refused.err
        scored = p.leap("score", SLICE, "v")
        assert scored.code == 0 and "pass" in scored.out, scored
