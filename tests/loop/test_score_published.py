"""`leap score` of a ball published to workers, on the clone that threw it: its rounds are
on the remote. Before, the score said "let the builder work a round first" (a wait that
never ends: the rounds were there, on the remote); after `leap sync`, it called the worker's
round an unrecorded one (L6, exit 1) and named a worktree this clone never had. Now each
names `leap score SLICE BALL --remote REMOTE`, which scores the remote's copy, as `leap run
--remote` does, and pushes the score."""

from __future__ import annotations

from tests.loop import workers_world as ww
from tests.support import GitDaemon, git
from tests.tribunal.jurors import JurorServer

HINT = f"`leap score {ww.S} b1 --remote origin` scores the remote's copy"


def test_a_published_ball_is_scored_from_the_remote_as_the_hint_says(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    w = ww.published(daemon, jurors, "scored-here")
    clone = w.clone("builder-machine")
    built = w.leap("worker", "--remote", "origin", "--name", "builder-machine", "--once",
                   cwd=clone)
    assert built.code == 0, built
    [last] = ww.receipts(w)["b1"][-1:]
    assert last["outcome"] == 1, last

    git("remote", "add", "backup", str(w.bare), cwd=w.work)  # the hint names the one
    git("fetch", "-q", "backup", "main", cwd=w.work)  # that holds the ball's branch
    before_sync = w.leap("score", ww.S, "b1")
    assert before_sync.code == 3, before_sync
    assert "has no round yet" in before_sync.err and HINT in before_sync.err, before_sync.err
    assert w.leap("sync", "origin").code == 0  # the ledger here now names the worker's round
    after_sync = w.leap("score", ww.S, "b1")
    assert after_sync.code == 3, after_sync
    assert "is behind" in after_sync.err and HINT in after_sync.err, after_sync.err
    assert "unrecorded round" not in after_sync.err

    command = HINT.split("`")[1].split()
    # its push cut off after the score was recorded here (a blind review: run again, it said
    # "already passed; nothing to do" and the remote never got the score)
    git("config", "remote.origin.pushurl", str(w.base_dir / "nowhere.git"), cwd=w.work)
    cut_off = w.leap(*command[1:])
    assert cut_off.code == 3 and "nothing was pushed" in cut_off.err, cut_off
    assert not w.ledger_files(f"slices/{ww.S}/balls/b1/scores/")
    git("config", "--unset", "remote.origin.pushurl", cwd=w.work)
    scored = w.leap(*command[1:])
    assert scored.code == 0, scored
    assert f"{ww.S}/b1 already passed: score 1" in scored.out, scored.out
    assert "pushed to origin" in scored.out, scored.out
    assert w.ledger_files(f"slices/{ww.S}/balls/b1/scores/"), w.ledger_files()  # on the remote
    assert git("rev-parse", "refs/heads/leap/ball/pkgs/b1", cwd=w.work) == \
        git("rev-parse", "refs/heads/leap/ball/pkgs/b1", cwd=w.bare)


def test_a_run_waits_for_a_round_its_clone_cannot_bring_home_then_scores_it(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    """A blind review: while another git held the thrower's ball branch (its ref locked),
    `leap run --remote` took the branch as brought up to the worker's round, read it
    without the round, and stopped the ball (exit 1, "an unrecorded round"). It waits and
    says why; once the branch moves, it scores."""
    w = ww.published(daemon, jurors, "held-ref")
    clone = w.clone("builder")
    built = w.leap("worker", "--remote", "origin", "--name", "builder", "--once", cwd=clone)
    assert built.code == 0, built
    lock = w.work / ".git" / "refs" / "heads" / "leap" / "ball" / ww.S / "b1.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("")
    held = w.leap("run", ww.S, "--remote", "origin", "--max-minutes", "0.1", "--poll", "0.2",
                  "--heartbeat", "0")
    assert held.code == 3, held.out[-3000:]
    assert "unrecorded round" not in held.out + held.err, held.out[-3000:]
    assert ("is on origin, but the branch here could not move to it (another git holds it): "
            "its score waits for it") in held.out, held.out[-3000:]
    lock.unlink()
    went_on = w.leap("run", ww.S, "--remote", "origin", "--max-minutes", "0.3", "--poll",
                     "0.2", "--heartbeat", "0")
    assert f"wave 0 {ww.S}/b1  score  score 1" in went_on.out, went_on.out[-3000:]
