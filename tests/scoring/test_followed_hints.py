"""Every hint leads on (helper h3): the hints of an ordinary `leap merge` that stops (a slice
not complete yet, a lease held by another holder, a merge killed midway) that no test
followed before. A tiny real Python project (tests/scoring/tiny.py), the run's scripted
jurors, a builder that builds either ball; each test runs the command exactly as printed
and shows the slice lands."""

from __future__ import annotations

import re
import shlex
import textwrap
from pathlib import Path

import pytest

from leapgit.ledger import layout, leases
from leapgit.ledger.store import Ledger
from tests.scoring.tiny import SLICE, SUB_DONE, SUB_TEST, make_tiny, red
from tests.support import git, hinted_leap, leap

DOC_TEST = ("import pathlib\n\n\ndef test_doc():\n"
            "    assert 'documented' in pathlib.Path('README.md').read_text()\n")
BUILDER = textwrap.dedent("""\
    import os, pathlib
    if os.environ["LEAP_BALL"] == "sub":
        pathlib.Path("pkg/calc.py").write_text({done!r})
    else:
        pathlib.Path("README.md").write_text("# tiny, documented\\n")
    pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 1\\nevidence: built\\n")
    """).format(done=SUB_DONE)

def _world(tmp_path: Path, url: str) -> Path:
    """The tiny project with both balls' reds recorded: ready to throw."""
    repo = make_tiny(tmp_path, juror_url=url)
    (tmp_path / "builder.py").write_text(BUILDER)
    for ball, test in (("sub", ("tests/test_sub.py", SUB_TEST)),
                       ("doc", ("tests/test_doc.py", DOC_TEST))):
        _, done = red(repo, ball, dict([test]))
        assert done.code == 0, done
    return repo


def _merged(repo: Path) -> bool:
    return git("ls-tree", "--name-only", "leap/ledger", f"{layout.merge_path(SLICE)}",
               cwd=repo) != ""


def _passed(repo: Path) -> None:
    for ball in ("sub", "doc"):
        assert leap("throw", SLICE, "--ball", ball, "--run", cwd=repo).code == 0
        scored = leap("score", SLICE, ball, cwd=repo)
        assert scored.code == 0, scored


def test_a_merge_of_a_slice_nothing_was_built_for_names_the_run_that_lands_it(
        tmp_path: Path, scripted_url: str) -> None:
    """merge.py via episodes.way_to_pass: "not complete, nothing lands ...; first `leap run
    S`"."""
    repo = _world(tmp_path, scripted_url)
    before = git("rev-parse", "main", cwd=repo)
    held = leap("merge", SLICE, cwd=repo)
    assert held.code == 3 and "not complete, nothing lands" in held.err, held
    [run] = hinted_leap(held.err)
    assert run == ["run", SLICE], held.err
    ran = leap(*run, cwd=repo)
    assert ran.code == 0 and "landed" in ran.out, ran.out[-2000:]
    assert _merged(repo) and git("rev-parse", "main", cwd=repo) != before


def test_a_merge_of_claims_not_scored_names_each_score_and_then_lands(
        tmp_path: Path, scripted_url: str) -> None:
    """merge.py via episodes.way_to_pass: "first `leap score S B`" for a claim no score
    judged yet."""
    repo = _world(tmp_path, scripted_url)
    for ball in ("sub", "doc"):
        assert leap("throw", SLICE, "--ball", ball, "--run", cwd=repo).code == 0
    held = leap("merge", SLICE, cwd=repo)
    assert held.code == 3 and "not complete, nothing lands" in held.err, held
    named = hinted_leap(held.err)
    assert named == [["score", SLICE, "sub"], ["score", SLICE, "doc"]], held.err
    for command in named:
        scored = leap(*command, cwd=repo)
        assert scored.code == 0, scored
    landed = leap("merge", SLICE, cwd=repo)
    assert landed.code == 0, landed
    assert _merged(repo)


def test_a_merge_waiting_for_a_lease_held_by_hand_names_the_release_that_frees_it(
        tmp_path: Path, scripted_url: str) -> None:
    """merge.py: "... leased to 'alice' ...: one integrator at a time, nothing landed [L9];
    its holder gives back a lease whose merge died with `leap lease release --holder
    alice`"."""
    repo = _world(tmp_path, scripted_url)
    _passed(repo)
    with Ledger(repo / ".git") as ledger:  # a merge of holder alice died and left it
        leases.take_lease(ledger, "main", "alice", "merge of another slice")
    held = leap("merge", SLICE, cwd=repo)
    assert held.code == 1 and "leased to 'alice'" in held.err, held
    named = hinted_leap(held.err)
    assert named == [["lease", "release", "--holder", "alice"]], held.err
    released = leap(*named[0], cwd=repo)
    assert released.code == 0, released
    landed = leap("merge", SLICE, cwd=repo)  # the merge the lease stopped, again
    assert landed.code == 0, landed
    assert _merged(repo)


def test_status_after_a_merge_killed_midway_names_the_merge_that_finishes_it(
        tmp_path: Path, scripted_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """status.py: "a stopped merge waits here: `leap merge S` again finishes it and gives
    the lease back"; and `leap lease release`'s own refusal names the same merge."""
    repo = _world(tmp_path, scripted_url)
    _passed(repo)
    from leapgit.scoring import merge as merging

    def killed_here(*args: object) -> None:  # the process dies as the spine would move
        raise SystemExit(137)

    with monkeypatch.context() as mp:
        mp.setattr(merging, "_move", killed_here)
        killed = leap("merge", SLICE, cwd=repo)
    assert killed.code == 137, killed
    assert (repo / ".git" / "leap-merging" / f"{SLICE}.yaml").is_file()
    with Ledger(repo / ".git") as ledger:
        assert leases.active_lease(ledger.require(), "main") is not None  # left open
    status = leap("status", cwd=repo)
    assert status.code == 0, status
    [line] = [x for x in status.out.splitlines() if "a stopped merge waits here" in x]
    [merge] = hinted_leap(line)
    assert merge == ["merge", SLICE], line
    refused = leap("lease", "release", cwd=repo)
    assert refused.code == 1 and hinted_leap(refused.err) == [merge], refused
    done = leap(*merge, cwd=repo)
    assert done.code == 0, done
    assert _merged(repo)
    with Ledger(repo / ".git") as ledger:
        assert leases.active_lease(ledger.require(), "main") is None
    after = leap("status", cwd=repo)
    assert "integrator lease" not in after.out, after.out


@pytest.mark.parametrize("way", ["the-tracked-remote", "track-the-given-one"])
def test_a_run_given_a_remote_the_spine_does_not_track_leads_on_either_way(
        tmp_path: Path, scripted_url: str, way: str) -> None:
    """drive.py: "a run shares one remote [L9]; `leap run S ... --remote origin`, or make
    main track other's first (`git config branch.main.remote other`), then `leap run S ...
    --remote other` again". Either way, as printed, the run gets past the refusal and
    publishes the balls to the workers of the remote it names (no worker runs here: the
    run's --max-minutes, as typed, ends its wait)."""
    from leapgit.ledger import query
    from tests.scoring.tiny import served

    repo = _world(tmp_path, scripted_url)
    served(tmp_path, repo)
    other = tmp_path / "other.git"
    git("init", "-q", "--bare", "-b", "main", str(other), cwd=tmp_path)
    assert leap("hooks", "install", "--server", cwd=other).code == 0
    git("remote", "add", "other", str(other), cwd=repo)
    git("push", "-q", "other", "main", "leap/ledger", cwd=repo)
    refused = leap("run", SLICE, "--remote", "other", "--max-minutes", "0.05", cwd=repo)
    assert refused.code == 2 and "a run shares one remote" in refused.err, refused
    runs = hinted_leap(refused.err)
    [config] = [shlex.split(c)[1:] for c in re.findall(r"`(git [^`]*)`", refused.err)]
    assert config == ["config", "branch.main.remote", "other"], refused.err
    if way == "the-tracked-remote":
        command, remote = runs[0], "origin"
    else:
        git(*config, cwd=repo)
        command, remote = runs[1], "other"
    assert command[:2] == ["run", SLICE] and command[-2:] == ["--remote", remote], runs
    ran = leap(*command, cwd=repo)
    assert "a run shares one remote" not in ran.out + ran.err, ran
    with Ledger(repo / ".git") as ledger:
        view = ledger.require()
        for ball in ("sub", "doc"):
            thrown = query.throw(view, SLICE, ball, 1)
            assert thrown is not None and thrown.published, (ball, ran.out[-2000:])
    there = git("ls-tree", "-r", "--name-only", "leap/ledger", f"slices/{SLICE}",
                cwd=tmp_path / ("origin.git" if remote == "origin" else "other.git"))
    assert "throw.yaml" in there, (remote, there)


def test_status_of_balls_published_to_workers_names_the_worker_and_the_run_that_land_them(
        tmp_path: Path, scripted_url: str) -> None:
    """report.py: "next: a worker builds its rounds (`leap worker --remote origin`); `leap
    run S --remote origin` scores them". The worker, run exactly as printed (here, in this
    clone; it polls until stopped), builds both balls' rounds; the run then lands."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.scoring.tiny import served
    from tests.support import IDENTITY

    repo = _world(tmp_path, scripted_url)
    bare = served(tmp_path, repo)
    published = leap("run", SLICE, "--remote", "origin", "--max-minutes", "0.02", cwd=repo)
    assert published.code == 3, published  # no worker yet: its wait ends, nothing lost
    status = leap("status", cwd=repo)
    lines = [x for x in status.out.splitlines() if "a worker builds its rounds" in x]
    assert len(lines) == 2, status.out
    worker, run = hinted_leap(lines[0])
    assert worker == ["worker", "--remote", "origin"], lines
    assert run == ["run", SLICE, "--remote", "origin"], lines
    proc = subprocess.Popen([sys.executable, "-m", "leapgit", *worker], cwd=repo,
                            env={**os.environ, **IDENTITY}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            names = git("ls-tree", "-r", "--name-only", "leap/ledger", cwd=bare)
            if sum("/receipts/" in n for n in names.splitlines()) >= 2:
                break
            time.sleep(0.2)
        else:
            raise AssertionError("the worker built no rounds")
    finally:
        proc.send_signal(signal.SIGINT)
        said, _ = proc.communicate(timeout=30)
    assert "2 ball(s) built" in said, said[-2000:]
    landed = leap(*run, cwd=repo)
    assert landed.code == 0 and "landed" in landed.out, landed.out[-2000:]
    assert _merged(repo)


def test_scoring_a_published_ball_no_worker_built_yet_names_a_command_that_moves_it(
        tmp_path: Path, scripted_url: str) -> None:
    """score.py (_ready, from_the_remote): "tiny/sub has no round yet: nothing to score
    [L7]; it is published to workers, whose rounds land on the remote: `leap score tiny
    sub --remote origin` scores the remote's copy". Run as printed, that command must not
    say the same thing and name itself again (a circle of one): with no round on the
    remote either, what moves the ball is a worker (`leap worker --remote origin`, as
    `leap status` says)."""
    from tests.scoring.tiny import served

    repo = _world(tmp_path, scripted_url)
    served(tmp_path, repo)
    assert leap("throw", SLICE, "--remote", "origin", cwd=repo).code == 0
    said = leap("score", SLICE, "sub", cwd=repo)
    assert said.code == 3 and "has no round yet" in said.err, said
    [score] = hinted_leap(said.err)
    assert score == ["score", SLICE, "sub", "--remote", "origin"], said.err
    followed = leap(*score, cwd=repo)
    assert followed.code == 3 and score not in hinted_leap(followed.err), (
        f"`leap {' '.join(score)}` names itself again: {followed.err}")
    [worker] = hinted_leap(followed.err)
    assert worker == ["worker", "--remote", "origin", "--slice", SLICE], followed.err
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.support import IDENTITY

    proc = subprocess.Popen([sys.executable, "-m", "leapgit", *worker], cwd=repo,
                            env={**os.environ, **IDENTITY}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:  # the worker builds (it polls until stopped); then "this command scores them"
        deadline = time.monotonic() + 60
        while (scored := leap(*score, cwd=repo)).code == 3 and \
                "has no round yet" in scored.err and time.monotonic() < deadline:
            time.sleep(0.5)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    assert scored.code == 0 and "pass" in scored.out, scored


def test_a_landed_balls_branch_moved_without_the_hook_leads_back_to_a_landing(
        tmp_path: Path, scripted_url: str) -> None:
    """A commit on a merged ball's branch that no post-commit hook saw (hooks off, as with a
    core.hooksPath of another tool): `leap merge` records the reopen and names "first `leap
    score S sub`"; that score refuses the unrecorded commit and names the `git ... reset
    --keep` that keeps it aside, "then `leap score S sub`"; followed as printed, the ball
    passes again and the merge lands. No two commands send the user to each other."""
    import subprocess

    repo = _world(tmp_path, scripted_url)
    _passed(repo)
    assert leap("merge", SLICE, cwd=repo).code == 0
    wt = tmp_path / "repo.leap-worktrees" / SLICE / "sub"
    (wt / "pkg" / "calc.py").write_text((wt / "pkg" / "calc.py").read_text() + "# more\n")
    git("-c", "core.hooksPath=/dev/null", "commit", "-qam", "one more byte", cwd=wt)
    held = leap("merge", SLICE, cwd=repo)
    assert held.code == 3 and "sub reopened" in held.err, held
    [score] = hinted_leap(held.err)
    assert score == ["score", SLICE, "sub"], held.err
    refused = leap(*score, cwd=repo)
    assert refused.code == 1 and "unrecorded round" in refused.err, refused
    [reset] = re.findall(r"`(git -C [^`]*)`", refused.err)
    done = subprocess.run(reset, shell=True, cwd=repo, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    [again] = hinted_leap(refused.err)
    assert again == score, refused.err
    scored = leap(*again, cwd=repo)
    assert scored.code == 0, scored
    landed = leap("merge", SLICE, cwd=repo)
    assert landed.code == 0, landed
    assert leap("audit", cwd=repo).code == 0


def test_leap_round_on_a_ball_published_to_workers_touches_nothing_in_the_throwers_clone(
        tmp_path: Path, scripted_url: str) -> None:
    """A hunt: in the clone that published a ball, `leap round S B --outcome 1` read the
    throw's worktree (none: each worker builds in its own clone) as the current folder,
    recorded round 1 as a refuse (". is not a registered worktree") and rolled the scope
    back into the main checkout, so no worker could build the ball. It is refused, with
    nothing recorded or touched, and names the worker that builds the ball."""
    from tests.scoring.tiny import served

    repo = _world(tmp_path, scripted_url)
    served(tmp_path, repo)
    assert leap("throw", SLICE, "--remote", "origin", cwd=repo).code == 0
    before = git("rev-parse", "leap/ledger", cwd=repo)
    checkout = git("status", "--porcelain", "--untracked-files=all", cwd=repo)
    said = leap("round", SLICE, "sub", "--outcome", "1", "--evidence", "done", cwd=repo)
    assert said.code != 0 and "published to workers" in said.err, said
    assert git("rev-parse", "leap/ledger", cwd=repo) == before  # nothing recorded
    assert git("status", "--porcelain", "--untracked-files=all", cwd=repo) == checkout
    assert ["worker", "--remote", "origin", "--slice", SLICE] in hinted_leap(said.err), said


def test_a_rethrow_of_a_published_ball_in_flight_names_the_worker_of_its_remote(
        tmp_path: Path, scripted_url: str) -> None:
    """A hunt: `leap throw S --ball B` of a ball published to workers and in flight is
    refused (L3) naming `leap worker --remote REMOTE --slice S`, a placeholder, where the
    spine tracks origin. It names origin; the worker so named builds the ball's round."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.scoring.tiny import served
    from tests.support import IDENTITY

    repo = _world(tmp_path, scripted_url)
    bare = served(tmp_path, repo)
    assert leap("throw", SLICE, "--ball", "sub", "--remote", "origin", cwd=repo).code == 0
    again = leap("throw", SLICE, "--ball", "sub", cwd=repo)
    assert again.code == 1 and "re-throwing a ball in flight is refused" in again.err, again
    [worker] = hinted_leap(again.err)
    assert worker == ["worker", "--remote", "origin", "--slice", SLICE], again.err
    proc = subprocess.Popen([sys.executable, "-m", "leapgit", *worker], cwd=repo,
                            env={**os.environ, **IDENTITY}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while "/receipts/" not in git("ls-tree", "-r", "--name-only", "leap/ledger",
                                      cwd=bare) and time.monotonic() < deadline:
            time.sleep(0.3)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    assert "/receipts/" in git("ls-tree", "-r", "--name-only", "leap/ledger", cwd=bare)
