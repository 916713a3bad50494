"""The loop's view of the remote (`loop.remote`): one fetch brings the ledger and the ball
branches, and the ball refs are read in one `git for-each-ref`. What the view must never do:
hold a ledger newer than the ball branches it read with it, take one ball's tip for another,
or let one ball's tracking ref keep the ledger from going up (review of issue 13's fetch)."""

from __future__ import annotations

from pathlib import Path

import pytest

from leapgit.ledger import sync as ledger_sync
from leapgit.ledger.workspace import open_workspace
from leapgit.loop import remote as rm
from tests.support import commit_all, git, leap, make_repo, ref, write_files

BALL = "leap/ball/s/a"


def _world(tmp_path: Path) -> tuple[Path, Path]:
    """A bare remote holding main and the ledger, and the thrower's clone of it."""
    bare = tmp_path / "origin.git"
    git("init", "-q", "--bare", "-b", "main", str(bare), cwd=tmp_path)
    work = make_repo(tmp_path / "work", {"README.md": "# x\n"})
    assert leap("init", cwd=work).code == 0
    git("remote", "add", "origin", str(bare), cwd=work)
    git("push", "-q", "--no-verify", "origin", "main", "leap/ledger", cwd=work)
    return bare, work


def _local_record(work: Path, name: str) -> None:
    with open_workspace(work).ledger() as ledger:
        ledger.append({f"notes/{name}.yaml": b"a: 1\n"}, f"a record of {name}")


def test_a_push_that_lost_a_race_reads_the_ball_branches_with_the_ledger_it_fetched_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, work = _world(tmp_path)
    worker = tmp_path / "worker"
    git("clone", "-q", str(bare), str(worker), cwd=tmp_path)
    git("checkout", "-q", "-b", BALL, cwd=worker)
    write_files(worker, {"f.py": "ROUND = 1\n"})
    round_commit = commit_all(worker, "round 1")
    git("fetch", "-q", "origin", "leap/ledger:refs/heads/leap/ledger", cwd=worker)
    _local_record(worker, "worker-receipt")
    _local_record(work, "thrower")  # the thrower has a record to push: sync goes round
    real_push, pushes = ledger_sync._push, list[int]()

    def worker_lands_first(*args: object, **kwargs: object) -> str | None:
        if not pushes:  # between the thrower's fetch and its push: the worker's atomic push
            git("push", "-q", "--atomic", "--no-verify", "origin", BALL, "leap/ledger",
                cwd=worker)
        pushes.append(1)
        return real_push(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ledger_sync, "_push", worker_lands_first)
    ws = open_workspace(work)
    rm.sync_with_balls(ws, "origin")
    assert len(pushes) == 2, "the first push must have lost the race"
    tips = rm.ball_tips(ws, "origin")
    assert tips.get(rm.tracking("origin", BALL)) == round_commit, \
        "the ledger holds the worker's receipt, so the ball's round must be here with it"


def test_a_ball_ref_name_with_a_unicode_line_separator_is_never_read_as_another_ball(
    tmp_path: Path,
) -> None:
    bare, work = _world(tmp_path)
    base = git("rev-parse", "HEAD", cwd=work)
    write_files(work, {"other.py": "X = 1\n"})
    other = commit_all(work, "not ball a")
    # a remote without leapgit's server hook takes any name git allows
    git("push", "-q", "--no-verify", "origin", f"{base}:refs/heads/{BALL}",
        f"{other}:refs/heads/{BALL}\u2028x", f"{other}:refs/heads/{BALL}\u0085y", cwd=work)
    git("branch", BALL, base, cwd=work)
    ws = open_workspace(work)
    rm.sync_with_balls(ws, "origin", push=False)
    tips = rm.ball_tips(ws, "origin")
    assert tips[rm.tracking("origin", BALL)] == base
    rm.bring_home(ws, "origin", BALL, tips)
    assert ref(work, f"refs/heads/{BALL}") == base


def test_a_lock_left_on_one_ball_s_tracking_ref_still_lets_the_ledger_go_up_and_says_so(
    tmp_path: Path,
) -> None:
    bare, work = _world(tmp_path)
    git("push", "-q", "--no-verify", "origin", f"main:refs/heads/{BALL}", cwd=work)
    lock = work / ".git" / "refs" / "leap" / "remotes" / "origin" / "heads" / f"{BALL}.lock"
    lock.parent.mkdir(parents=True)
    lock.write_text("")  # a git killed in the middle of a fetch leaves this
    _local_record(work, "thrower")
    ws = open_workspace(work)
    with pytest.raises(Exception) as raised:
        rm.sync_with_balls(ws, "origin")
    assert ref(bare, "refs/heads/leap/ledger") == ref(work, "refs/heads/leap/ledger"), \
        "one ball's tracking ref must not keep the ledger from going up"
    text = " ".join(raised.value.lines())  # type: ignore[attr-defined]
    assert str(lock) in text and "reachable" not in text, text
    # the hint leads on: with the lock gone, the same look goes through
    lock.unlink()
    rm.sync_with_balls(ws, "origin")
    tips = rm.ball_tips(ws, "origin")
    assert tips[rm.tracking("origin", BALL)] == ref(bare, f"refs/heads/{BALL}")


def test_a_look_leaves_the_branch_of_a_ball_with_a_step_in_flight(tmp_path: Path) -> None:
    """`leap run --remote`: a fresh throw resets the ball's branch to its base, then pushes
    it. A look in between saw the remote's tip of the episode before, which descends from
    the base, and brought it back onto the new episode (review of issue 13). A ball whose
    step is in flight is left alone; any other ball's rounds still come home."""
    import io

    from leapgit.loop.drive import Options, SliceRun
    from leapgit.loop.events import Events

    bare, work = _world(tmp_path)
    write_files(work, {"src/a.py": "A = 1\n", "src/b.py": "B = 1\n"})
    commit_all(work, "the code")
    (tmp_path / "slice.yaml").write_text(
        "slice: s\nspine: integrator\nballs:\n"
        "  - {id: a, goal: g, spec: s, scope: [src/a.py], proof: 'true', tests: 'true', "
        "rollback: restore-scope}\n"
        "  - {id: b, goal: g, spec: s, scope: [src/b.py], proof: 'true', tests: 'true', "
        "rollback: restore-scope}\n")
    assert leap("slice", "cut", str(tmp_path / "slice.yaml"), cwd=work).code == 0
    base = git("rev-parse", "HEAD", cwd=work)
    old_rounds = {}
    for ball in ("a", "b"):  # the episode before: a round on each ball, on the remote
        git("checkout", "-q", "-b", f"leap/ball/s/{ball}", base, cwd=work)
        write_files(work, {f"src/{ball}.py": "X = 2\n"})
        old_rounds[ball] = commit_all(work, "an earlier episode's round")
        git("checkout", "-q", "main", cwd=work)
        git("push", "-q", "--no-verify", "origin", f"leap/ball/s/{ball}", cwd=work)
        git("update-ref", f"refs/heads/leap/ball/s/{ball}", base, cwd=work)  # reset
    git("push", "-q", "--no-verify", "origin", "main", "leap/ledger", cwd=work)
    run = SliceRun(open_workspace(work), "s", Events(io.StringIO(), "s"),
                   Options(remote="origin", poll=0))
    run._look({"a"})  # a's fresh throw is in flight; b is built by a worker
    assert ref(work, "refs/heads/leap/ball/s/a") == base
    assert ref(work, "refs/heads/leap/ball/s/b") == old_rounds["b"]


def test_a_lock_left_on_the_ledger_s_tracking_ref_is_named_and_deleting_it_leads_on(
    tmp_path: Path,
) -> None:
    bare, work = _world(tmp_path)
    lock = work / ".git" / "refs" / "leap" / "remotes" / "origin" / "heads" / "leap" / \
        "ledger.lock"
    lock.parent.mkdir(parents=True)
    lock.write_text("")
    _local_record(work, "thrower")
    ws = open_workspace(work)
    with pytest.raises(Exception) as raised:
        rm.sync_with_balls(ws, "origin")
    text = " ".join(raised.value.lines())  # type: ignore[attr-defined]
    assert str(lock) in text and "reachable" not in text, text
    assert ref(bare, "refs/heads/leap/ledger") != ref(work, "refs/heads/leap/ledger")
    lock.unlink()  # what the hint says
    rm.sync_with_balls(ws, "origin")
    assert ref(bare, "refs/heads/leap/ledger") == ref(work, "refs/heads/leap/ledger")


def test_fetching_the_ball_branches_alone_names_a_lock_left_here_and_deleting_it_leads_on(
    tmp_path: Path,
) -> None:
    """A score's own fetch of the ball branches (`rm.fetch_balls`) says of a lock file what
    `sync` says: the file, not the network (review of issue 13)."""
    bare, work = _world(tmp_path)
    git("push", "-q", "--no-verify", "origin", f"main:refs/heads/{BALL}", cwd=work)
    lock = work / ".git" / "refs" / "leap" / "remotes" / "origin" / "heads" / f"{BALL}.lock"
    lock.parent.mkdir(parents=True)
    lock.write_text("")
    ws = open_workspace(work)
    with pytest.raises(Exception) as raised:
        rm.fetch_balls(ws, "origin")
    text = " ".join(raised.value.lines())  # type: ignore[attr-defined]
    assert str(lock) in text and "reachable" not in text, text
    lock.unlink()  # what the hint says
    rm.fetch_balls(ws, "origin")
    tips = rm.ball_tips(ws, "origin")
    assert tips[rm.tracking("origin", BALL)] == ref(bare, f"refs/heads/{BALL}")


def test_a_ball_fetch_that_fails_here_after_the_ledger_came_says_git_s_words_not_reach(
    tmp_path: Path,
) -> None:
    """The remote answered (the ledger came from it): a ball branch git cannot write here
    (a ref named like the ball folder stands in the way) is told in git's words, not as a
    remote out of reach; mended as they say, the same look goes through."""
    bare, work = _world(tmp_path)
    git("push", "-q", "--no-verify", "origin", f"main:refs/heads/{BALL}", cwd=work)
    in_the_way = "refs/leap/remotes/origin/heads/leap/ball"
    git("update-ref", in_the_way, "HEAD", cwd=work)
    _local_record(work, "thrower")
    ws = open_workspace(work)
    with pytest.raises(Exception) as raised:
        rm.sync_with_balls(ws, "origin")
    text = " ".join(raised.value.lines())  # type: ignore[attr-defined]
    assert in_the_way in text and "reachable" not in text and "synced" in text, text
    assert ref(bare, "refs/heads/leap/ledger") == ref(work, "refs/heads/leap/ledger")
    git("update-ref", "-d", in_the_way, cwd=work)  # what git's words say
    rm.sync_with_balls(ws, "origin")
    tips = rm.ball_tips(ws, "origin")
    assert tips[rm.tracking("origin", BALL)] == ref(bare, f"refs/heads/{BALL}")
