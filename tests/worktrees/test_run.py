"""`leap throw --run`: real builder processes, parallel waves, breach and rollback (L6, L9),
the four-round limit with a checkpoint and a resumed episode, timeouts, and Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from leapgit.errors import RuleViolation
from leapgit.ledger import layout, query
from leapgit.ledger.store import Ledger
from leapgit.procs import alive
from leapgit.records import yamlio
from leapgit.records.scoring import FileBlob, RedRecord, RunEvidence
from leapgit.rules.episodes import current_episode
from leapgit.worktrees.rounds import record_round
from tests.reds import red_of, red_ready, shell_red
from tests.support import IDENTITY, git, hinted_leap, leap, make_repo, ref
from tests.worktrees.conftest import (
    DIAMOND,
    DIAMOND_REDS,
    mark_passed,
    set_config,
    tree_hash,
    worktree_of,
)

Builder = Callable[..., str]

TIMED = """
ball = os.environ["LEAP_BALL"]
start = time.time()
pathlib.Path(f"src/{ball.lower()}.py").write_text(f"{ball} = 'built'\\n")
time.sleep(float(os.environ.get("SLEEP", "0.6")))
with open(os.environ["TIMES"], "a") as fh:
    fh.write(json.dumps([ball, start, time.time()]) + "\\n")
pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 1\\nevidence: wrote it\\n")
"""


def _receipts(repo: Path, ball: str, episode: int | None = None) -> list:  # type: ignore[type-arg]
    with Ledger(repo / ".git") as ledger:
        view = ledger.require()
        ep = episode or current_episode(view, "dia", ball).throw.episode
        return query.receipts(view, "dia", ball, ep)


# a builder that writes its ball's file with the round's number and never claims a pass:
# four holds, then the episode's checkpoint (L6)
HOLDS = """
    b = os.environ["LEAP_BALL"]; r = os.environ["LEAP_ROUND"]
    pathlib.Path(f"src/{b.lower()}.py").write_text(f"{b} = {r}\\n")
    sys.exit(1)
"""


def _at_checkpoint(repo: Path, builder: Builder, *balls: str) -> None:
    """``balls`` (all of the slice's ready ones when none are named) thrown and built to
    their checkpoint by ``HOLDS``."""
    set_config(repo, builder=builder(HOLDS))
    picked = [a for b in balls for a in ("--ball", b)]
    assert leap("throw", "dia", *picked, "--run", cwd=repo).code == 3


def _removed_by_hand(repo: Path, *balls: str) -> None:
    """Each ball's worktree and branch removed, as a user does with git."""
    for ball in balls:
        git("worktree", "remove", "--force", str(worktree_of(repo, ball)), cwd=repo)
        git("branch", "-D", f"leap/ball/dia/{ball}", cwd=repo)


def test_diamond_runs_in_waves_b_and_c_in_parallel(diamond: Path, builder: Builder,
                                                     tmp_path: Path) -> None:
    times = tmp_path / "times.jsonl"
    set_config(diamond, builder=builder("import json\n" + TIMED))
    env = {"TIMES": str(times)}
    r = leap("throw", "dia", "--run", cwd=diamond, env=env)
    assert r.code == 0, r
    assert "A: 1 round(s), last pass (claim): wrote it" in r.out
    assert _receipts(diamond, "A")[0].claim is True  # L7: the builder's 1 is only a claim
    mark_passed(diamond, "A")
    r = leap("throw", "dia", "--run", "--jobs", "4", cwd=diamond, env=env)
    assert r.code == 0, r
    assert "threw 2 ball(s)" in r.out
    mark_passed(diamond, "B")
    mark_passed(diamond, "C")
    assert leap("throw", "dia", "--run", cwd=diamond, env=env).code == 0
    spans = {b: (s, e) for b, s, e in (json.loads(x) for x in times.read_text().splitlines())}
    assert list(spans) == ["A", "B", "C", "D"] or set(spans) == {"A", "B", "C", "D"}
    assert spans["A"][1] < min(spans["B"][0], spans["C"][0])
    assert max(spans["B"][0], spans["C"][0]) < min(spans["B"][1], spans["C"][1])  # overlap
    assert spans["D"][0] > max(spans["B"][1], spans["C"][1])
    commit = _receipts(diamond, "D")[0].commit
    body = git("log", "-1", "--format=%B", commit, cwd=worktree_of(diamond, "D"))
    assert "Leap-Round: 1" in body and "Leap-Outcome: 1" in body and "Leap-Evidence: wrote it" \
        in body


def test_breach_is_refused_and_only_its_scope_rolled_back(diamond: Path, builder: Builder,
                                                          tmp_path: Path) -> None:
    leap("throw", "dia", cwd=diamond)
    mark_passed(diamond, "A")
    set_config(diamond, builder=builder("""
        ball = os.environ["LEAP_BALL"]
        if ball == "B":
            pathlib.Path("src/b.py").write_text("B = 'mine'\\n")
            pathlib.Path("src/b_new.py").write_text("new\\n")
            pathlib.Path("src/c.py").write_text("C = 'stolen'\\n")  # C's file: a breach
            pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 1\\nevidence: ok\\n")
        else:
            time.sleep(0.3)
            pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 0\\nevidence: no\\n")
    """))
    leap("throw", "dia", "--ball", "C", cwd=diamond)
    c_tree = worktree_of(diamond, "C")
    a_tree = worktree_of(diamond, "A")
    before = {p: tree_hash(p) for p in (diamond, c_tree, a_tree)}
    git_before = git("rev-parse", "main", "leap/ball/dia/C", cwd=diamond)
    r = leap("throw", "dia", "--ball", "B", "--run", cwd=diamond)
    assert r.code == 1, r
    assert "scope breach (L4, L9): src/c.py outside the scope of B" in r.out
    assert "rolled back (restore-scope): 2 scope file(s) restored" in r.out
    b_tree = worktree_of(diamond, "B")
    assert (b_tree / "src/b.py").read_text() == "B = 1\n"  # scope back at its base blob
    assert not (b_tree / "src/b_new.py").exists()  # absent at the base: absent again
    receipt = _receipts(diamond, "B")[0]
    assert receipt.outcome == -1 and receipt.claim is False and receipt.commit
    assert {p: tree_hash(p) for p in before} == before  # byte for byte untouched
    assert git("rev-parse", "main", "leap/ball/dia/C", cwd=diamond) == git_before
    status = leap("status", "dia", cwd=diamond).out
    assert "blocked: its ancestor B was refused (-1)" in status


def test_never_succeeding_builder_four_rounds_then_checkpoint_and_resume(
        diamond: Path, builder: Builder) -> None:
    set_config(diamond, builder=builder("""
        r = os.environ["LEAP_ROUND"]
        prev = pathlib.Path(os.environ["LEAP_HANDOFF"]).read_text()
        pathlib.Path("src/a.py").write_text(f"A = {r}\\n")
        print("round", r, "previous receipt seen:", "previous_receipt: null" not in prev)
        sys.exit(1)
    """))
    r = leap("throw", "dia", "--run", cwd=diamond)
    assert r.code == 3, r
    assert "A: 4 round(s), last hold: the builder exited 1 without a report" in r.out
    assert "checkpoint written" in r.out
    rounds = _receipts(diamond, "A", 1)
    assert [x.round for x in rounds] == [1, 2, 3, 4] and {x.outcome for x in rounds} == {0}
    assert "previous receipt seen: True" in Path(rounds[1].log or "").read_text()
    with Ledger(diamond / ".git") as ledger:
        cp = query.checkpoint(ledger.require(), "dia", "A", 1)
        assert cp is not None and cp.rounds_used == 4 and len(cp.tried) == 4
        with pytest.raises(RuleViolation, match="episode 1 of dia/A is closed"):
            record_round(ledger, "dia", "A", outcome=0, evidence="x", round_cap=4)
    r = leap("round", "dia", "A", "--outcome", "0", "--evidence", "one more", cwd=diamond)
    assert r.code == 1 and "is closed" in r.err and "[L6]" in r.err
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 3  # needs --resume
    r = leap("throw", "dia", "--ball", "A", "--resume", cwd=diamond)
    assert r.code == 0 and "episode 2" in r.out and "after episode 1" in r.out, r
    with Ledger(diamond / ".git") as ledger:
        ep = current_episode(ledger.require(), "dia", "A")
    assert ep.throw.episode == 2 and ep.throw.resumed_from == 1 and not ep.receipts


def test_a_resume_whose_branch_and_worktree_were_removed_goes_on_from_the_last_round(
        diamond: Path, builder: Builder) -> None:
    """The dogfooding review: at a checkpoint, with the ball's worktree and branch removed
    by hand, `leap throw --resume` failed with git's "invalid reference" (exit 2, no hint).
    A resume goes on with the episode's candidate, which the ledger names: the branch comes
    back at the last round's commit, and the new episode starts there."""
    _at_checkpoint(diamond, builder)
    last = _receipts(diamond, "A", 1)[-1]
    assert last.round == 4 and last.commit
    _removed_by_hand(diamond, "A")
    r = leap("throw", "dia", "--ball", "A", "--resume", cwd=diamond)
    assert r.code == 0 and "episode 2" in r.out, r
    assert f"the branch leap/ball/dia/A was gone: put back at the last commit the ledger " \
        f"recorded on it, {last.commit[:12]}" in r.out, r  # in the throw's report
    assert ref(diamond, "refs/heads/leap/ball/dia/A") == last.commit
    assert (worktree_of(diamond, "A") / "src/a.py").read_text() == "A = 4\n"


def test_a_resume_whose_removed_branch_s_commits_are_gone_too_puts_nothing_back(
        diamond: Path, builder: Builder) -> None:
    """A blind review: with the branch removed and its rounds' commits pruned, the put-back
    stood at the red (a commit it lacked reads as no descendant), and the new episode went
    on from round 0's bytes while the ledger said it resumed round 4's. It refuses now, and
    records no episode."""
    _at_checkpoint(diamond, builder)
    last = _receipts(diamond, "A", 1)[-1]
    _removed_by_hand(diamond, "A")
    git("reflog", "expire", "--expire=now", "--all", cwd=diamond)
    git("gc", "-q", "--prune=now", cwd=diamond)
    assert subprocess.run(["git", "cat-file", "-e", last.commit], cwd=diamond).returncode
    r = leap("throw", "dia", "--ball", "A", "--resume", cwd=diamond)
    assert r.code == 2 and "are not in this clone" in r.err, r
    assert ref(diamond, "refs/heads/leap/ball/dia/A") is None
    with Ledger(diamond / ".git") as ledger:
        assert query.episodes(ledger.require(), "dia", "A") == [1]


def test_a_resume_puts_a_removed_branch_back_on_its_findings_red(
        tmp_path: Path, builder: Builder) -> None:
    """A blind review: the branch put back by a resume stood at the last round's commit,
    below the test author's red for the tribunal's findings (T7.6) that the ledger holds on
    top of it: every candidate of the new episode would then have been refused for not
    holding that red, and the red's commit left to `git gc`. The branch comes back at the
    newest commit the ledger records on it (``place.recorded_tip``), the finding's red."""
    repo = make_repo(tmp_path / "repo", {"src/a.py": "A = 1\n", "src/b.py": "B = 1\n",
                                         "src/c.py": "C = 1\n", "src/d.py": "D = 1\n",
                                         "README.md": "# demo\n"})
    assert leap("init", cwd=repo).code == 0
    (tmp_path / "dia.yaml").write_text(DIAMOND.replace(
        "scope: [src/a.py, tests/a.sh]", "scope: [src/a.py, tests/a.sh, tests/a2.sh]"))
    assert leap("slice", "cut", str(tmp_path / "dia.yaml"), cwd=repo).code == 0
    red_ready(repo, "dia", DIAMOND_REDS)
    set_config(repo, builder=builder("""
        r = int(os.environ["LEAP_ROUND"])
        if r < 4:
            pathlib.Path("src/a.py").write_text(f"A = {r + 10}\\n")
        sys.exit(1)
    """))
    assert leap("throw", "dia", "--run", cwd=repo).code == 3  # a checkpoint after round 4
    wt = worktree_of(repo, "A")
    (wt / "tests/a2.sh").write_text("exit 1\n")  # the author's red for a finding, on top
    git("add", "tests/a2.sh", cwd=wt)
    git("commit", "-qm", "red: finding", cwd=wt)
    finding = git("rev-parse", "HEAD", cwd=wt)
    rec = RedRecord("dia", "A", 2, finding, git("rev-parse", "HEAD~1", cwd=wt),
                    (FileBlob("tests/a2.sh", git("rev-parse", "HEAD:tests/a2.sh", cwd=wt)),),
                    RunEvidence("red", "false", 1), "2024-01-01T00:00:00Z", answers=1,
                    episode=1)
    with Ledger(repo / ".git") as ledger:
        ledger.append({layout.red_path("dia", "A", 2): yamlio.dumps(rec.to_dict())},
                      "finding red")
    git("worktree", "remove", "--force", str(wt), cwd=repo)
    git("branch", "-D", "leap/ball/dia/A", cwd=repo)
    r = leap("throw", "dia", "--ball", "A", "--resume", cwd=repo)
    assert r.code == 0 and f"put back at the last commit the ledger recorded on it, " \
        f"{finding[:12]}" in r.out, r
    assert ref(repo, "refs/heads/leap/ball/dia/A") == finding


def test_no_fifth_round_after_four_claims(diamond: Path) -> None:
    leap("throw", "dia", cwd=diamond)
    wt = worktree_of(diamond, "A")
    for n in range(1, 5):
        (wt / "src/a.py").write_text(f"A = {n}\n")
        r = leap("round", "dia", "A", "--outcome", "1" if n == 4 else "0",
                 "--evidence", f"try {n}", cwd=wt)
        assert r.code == (0 if n == 4 else 3), r
    r = leap("round", "dia", "A", "--outcome", "1", "--evidence", "five", cwd=wt)
    assert r.code == 1 and "there is no fifth round [L6]" in r.err
    with Ledger(diamond / ".git") as ledger:
        with pytest.raises(RuleViolation, match="no fifth round"):
            record_round(ledger, "dia", "A", outcome=0, evidence="x", round_cap=4)


def test_timeout_ends_the_round_at_zero(diamond: Path, builder: Builder) -> None:
    set_config(diamond, builder=builder("time.sleep(30)\n"), timeout=0.5, round_limit=1)
    started = time.monotonic()
    r = leap("throw", "dia", "--run", cwd=diamond)
    assert time.monotonic() - started < 10
    assert r.code == 3 and "the builder timed out after 0.5 s" in r.out, r


def test_sigint_stops_four_builders_and_records_their_rounds(tmp_path: Path,
                                                             builder: Builder) -> None:
    from tests.support import make_repo

    repo = make_repo(tmp_path / "repo", {f"src/f{i}.py": f"X = {i}\n" for i in range(4)})
    assert leap("init", cwd=repo).code == 0
    balls = "\n".join(f"  - {{id: b{i}, goal: g, spec: s, scope: [src/f{i}.py, tests/b{i}.sh],"
                      f" proof: sh tests/b{i}.sh,"
                      f" tests: 'test ! -e tests/b{i}.sh || sh tests/b{i}.sh',"
                      " rollback: restore-scope}" for i in range(4))
    (tmp_path / "four.yaml").write_text(f"slice: four\nspine: integrator\nballs:\n{balls}\n")
    assert leap("slice", "cut", str(tmp_path / "four.yaml"), cwd=repo).code == 0
    for i in range(4):  # T7.1: red first
        red_of(repo, "four", f"b{i}", shell_red(f"b{i}", f"src/f{i}.py", "done"))
    pids = tmp_path / "pids"
    pids.mkdir()
    set_config(repo, builder=builder(f"""
        pathlib.Path("{pids}", str(os.getpid())).write_text("")
        pathlib.Path("src", "f" + os.environ["LEAP_BALL"][1:] + ".py").write_text("half\\n")
        time.sleep(60)
    """))
    proc = subprocess.Popen([sys.executable, "-m", "leapgit", "throw", "four", "--run",
                             "--jobs", "4"], cwd=repo, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, **IDENTITY})
    deadline = time.monotonic() + 20
    while len(list(pids.iterdir())) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(list(pids.iterdir())) == 4
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, (out, err)
    assert "interrupted" in out and "Traceback" not in err
    for pid in (int(p.name) for p in pids.iterdir()):
        assert not alive(pid)  # every builder is gone
    with Ledger(repo / ".git") as ledger:
        view = ledger.require()
        for i in range(4):
            got = query.receipts(view, "four", f"b{i}", 1)
            assert len(got) == 1 and got[0].outcome == 0, got
            assert got[0].evidence.startswith("interrupted (SIGINT)")
    assert git("fsck", "--strict", "--no-progress", cwd=repo) == ""


def test_sigint_to_the_process_group_never_kills_leaps_own_commit_or_rollback(
        tmp_path: Path, builder: Builder) -> None:
    from tests.support import make_repo

    repo = make_repo(tmp_path / "repo", {"src/f.py": "X = 1\n", "src/g.py": "G = 1\n"})
    assert leap("init", cwd=repo).code == 0
    marks = tmp_path / "marks"
    marks.mkdir()
    slow = tmp_path / "slow.py"  # a slow step that says when it starts and when it is done
    slow.write_text("import os, pathlib, sys, time\n"  # marks of its own each time it runs
                    f"pathlib.Path('{marks}', f'{{sys.argv[1]}}-started-{{os.getpid()}}')"
                    ".write_text('')\n"
                    "time.sleep(1.5)\n"
                    f"pathlib.Path('{marks}', f'{{sys.argv[1]}}-done-{{os.getpid()}}')"
                    ".write_text('')\n")
    (tmp_path / "one.yaml").write_text(
        "slice: one\nspine: integrator\nballs:\n"
        "  - {id: b, goal: g, spec: s, scope: [src/f.py, tests/b.sh], proof: sh tests/b.sh,\n"
        "     tests: 'test ! -e tests/b.sh || sh tests/b.sh',\n"
        f"     rollback: '{sys.executable} {slow} rollback && echo X = 1 > src/f.py'}}\n"
        "  - {id: c, goal: g, spec: s, scope: [src/g.py], proof: 'true', tests: 'true',"
        " rollback: restore-scope}\n")
    assert leap("slice", "cut", str(tmp_path / "one.yaml"), cwd=repo).code == 0
    red_of(repo, "one", "b", shell_red("b", "src/f.py", "X = 2"))  # T7.1: red first
    # a signing program: git runs it as a child of leap's own `git commit` of the round,
    # and of no other git (no hook runs for a round's commit); it must live through the
    # Ctrl-C to its end, and so must the commit
    signer = tmp_path / "signer.sh"
    signer.write_text(f"#!/bin/sh\n{sys.executable} {slow} commit\ncat > /dev/null\n"
                      "printf -- '-----BEGIN PGP SIGNATURE-----\\nx\\n"
                      "-----END PGP SIGNATURE-----\\n'\n"
                      "printf '\\n[GNUPG:] SIG_CREATED D 1 8 00 0 x\\n' >&2\n")
    signer.chmod(0o755)
    git("config", "commit.gpgSign", "true", cwd=repo)
    git("config", "gpg.program", str(signer), cwd=repo)
    set_config(repo, builder=builder("""
        pathlib.Path("src/f.py").write_text("X = 2\\n")
        pathlib.Path("src/g.py").write_text("G = 'not mine'\\n")  # a breach: -1, roll back
        pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 1\\nevidence: ok\\n")
    """))
    proc = subprocess.Popen([sys.executable, "-m", "leapgit", "throw", "one", "--ball", "b",
                             "--run"],
                            cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, **IDENTITY}, start_new_session=True)
    def runs(step: str, mark: str) -> set[str]:
        return {p.name.rsplit("-", 1)[1] for p in marks.glob(f"{step}-{mark}-*")}

    for step in ("commit", "rollback"):  # Ctrl-C in the terminal: the whole group gets it
        deadline = time.monotonic() + 20
        while not runs(step, "started") and time.monotonic() < deadline:
            time.sleep(0.02)
        assert runs(step, "started"), proc.communicate(timeout=10)
        os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "Traceback" not in err, (out, err)
    for step in ("commit", "rollback"):  # every run of the slow step that started, ended
        assert runs(step, "started") and runs(step, "done") == runs(step, "started"), step
    with Ledger(repo / ".git") as ledger:
        got = query.receipts(ledger.require(), "one", "b", 1)
    assert len(got) == 1 and got[0].outcome == -1 and got[0].commit, got
    wt = repo.parent / "repo.leap-worktrees" / "one" / "b"
    assert (wt / "src/f.py").read_text() == "X = 1\n"  # the rollback ran to its end


@pytest.mark.parametrize("target", ["user checkout", "sibling worktree"])
def test_a_write_into_a_tree_not_the_balls_own_holds_the_round(
        diamond: Path, builder: Builder, target: str) -> None:
    leap("throw", "dia", cwd=diamond)
    mark_passed(diamond, "A")
    assert leap("throw", "dia", "--ball", "C", cwd=diamond).code == 0  # thrown, idle
    tree = diamond if target == "user checkout" else worktree_of(diamond, "C")
    victim = tree / ("README.md" if target == "user checkout" else "src/c.py")
    set_config(diamond, builder=builder(f"""
        pathlib.Path("src/b.py").write_text("B = 2\\n")
        with open("{victim}", "a") as fh:  # by absolute path: no scope check sees it
            fh.write("# was here\\n")
        pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 1\\nevidence: done\\n")
    """), round_limit=1)
    r = leap("throw", "dia", "--ball", "B", "--run", cwd=diamond)
    assert r.code == 3, r
    got = _receipts(diamond, "B")
    assert len(got) == 1 and got[0].outcome == 0 and got[0].claim is False, got
    assert f"{tree} changed while the builder of B ran" in got[0].evidence


def test_a_config_hint_in_a_ball_worktree_sends_no_one_to_leap_init(diamond: Path) -> None:
    """A blind review: run in a ball worktree (a checkout without the untracked config,
    which the main checkout holds), a missing builder.identity said "run `leap init`
    first", which a ball worktree refuses (L4). It names the key alone, as in the main
    checkout."""
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    said = leap("score", "dia", "A", cwd=worktree_of(diamond, "A"))
    assert said.code == 2 and "builder.identity" in said.err, said
    assert "leap init" not in said.err, said.err


def test_a_resume_that_fails_after_putting_a_branch_back_takes_it_away_again(
        diamond: Path, builder: Builder) -> None:
    """A blind review: B's branch was put back, then C's resume failed (its commits are
    gone): the throw wrote nothing, but B's branch stayed where it was put, and no line
    said so. Nothing half-written: the branch goes as it came."""
    red_ready(diamond, "dia", DIAMOND_REDS)
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    (worktree_of(diamond, "A") / "src/a.py").write_text("A = 2\n")
    git("commit", "-qam", "a", cwd=worktree_of(diamond, "A"))
    mark_passed(diamond, "A")
    _at_checkpoint(diamond, builder, "B", "C")
    b_tip = ref(diamond, "refs/heads/leap/ball/dia/B")
    c_tip = ref(diamond, "refs/heads/leap/ball/dia/C")
    assert b_tip is not None and c_tip is not None
    git("update-ref", "refs/keep/b", b_tip, cwd=diamond)  # B's commits stay, C's go
    _removed_by_hand(diamond, "B", "C")
    git("reflog", "expire", "--expire=now", "--all", cwd=diamond)
    git("gc", "-q", "--prune=now", cwd=diamond)
    assert subprocess.run(["git", "cat-file", "-e", c_tip], cwd=diamond).returncode
    r = leap("throw", "dia", "--ball", "B", "--ball", "C", "--resume", cwd=diamond)
    assert r.code == 2 and "are not in this clone" in r.err, r
    assert ref(diamond, "refs/heads/leap/ball/dia/B") is None, r  # taken away again
    assert not worktree_of(diamond, "B").exists()
    assert ref(diamond, "refs/keep/b") == b_tip  # its commits where they were


def _half_made_at_checkpoint(repo: Path, builder: Builder) -> tuple[Path, str]:
    """A at its checkpoint, its worktree removed by hand and then left half-made by a
    resume killed inside its `git worktree add`: locked by git, its index without an entry,
    some files unwritten. (A's path, the last round's commit.)"""
    _at_checkpoint(repo, builder)
    last = _receipts(repo, "A", 1)[-1].commit
    path = worktree_of(repo, "A")
    git("worktree", "remove", "--force", str(path), cwd=repo)
    git("worktree", "add", "-q", str(path), "leap/ball/dia/A", cwd=repo)
    admin = Path(git("rev-parse", "--absolute-git-dir", cwd=path))
    (admin / "locked").write_text("initializing\n")  # what the kill left
    (admin / "index").unlink()
    (path / "README.md").unlink()
    return path, last


def test_a_resume_whose_worktree_a_kill_left_half_made_makes_it_again(
        diamond: Path, builder: Builder) -> None:
    """Left open by a blind review: the next resume took a half-made worktree as the
    ball's own, where the builder's round would see every file deleted. Holding no work, it
    is made again on the branch, which stays, and the throw says so. A worktree of the
    user's, moved by hand, is not forgotten by git on the way (a blind review: the removal
    ran `git worktree prune`, and `git worktree repair` could no longer find it)."""
    path, last = _half_made_at_checkpoint(diamond, builder)
    mine = diamond.parent / "mine"
    git("worktree", "add", "-q", "-b", "mine", str(mine), cwd=diamond)
    mine.rename(diamond.parent / "mine-moved")
    r = leap("throw", "dia", "--ball", "A", "--resume", cwd=diamond)
    assert r.code == 0 and "episode 2" in r.out, r
    assert f"its worktree {path} was half-made (a `git worktree add` killed midway) and " \
        "held no work: made again" in r.out, r
    assert ref(diamond, "refs/heads/leap/ball/dia/A") == last
    assert git("status", "--porcelain", cwd=path) == "", git("status", cwd=path)
    assert (path / "README.md").is_file() and (path / "src/a.py").read_text() == "A = 4\n"
    git("worktree", "repair", str(diamond.parent / "mine-moved"), cwd=diamond)
    assert str(diamond.parent / "mine-moved") in git("worktree", "list", cwd=diamond)


def test_a_half_made_worktree_holding_someone_s_files_is_not_made_again_over_them(
        diamond: Path, builder: Builder) -> None:
    """A blind review: files in a half-made worktree that its commit does not hold (git's
    checkout writes none of them, ignored ones included) are someone's: the resume refuses,
    names them, and its hint, followed, makes the worktree again."""
    path, _ = _half_made_at_checkpoint(diamond, builder)
    (path / "mine.txt").write_text("notes\n")
    exclude = Path(git("rev-parse", "--git-common-dir", cwd=diamond)) / "info" / "exclude"
    exclude = exclude if exclude.is_absolute() else diamond / exclude
    exclude.parent.mkdir(parents=True, exist_ok=True)
    exclude.write_text("*.local\n")
    (path / "notes.local").write_text("kept\n")
    r = leap("throw", "dia", "--ball", "A", "--resume", cwd=diamond)
    assert r.code == 2 and "is half-made" in r.err and "mine.txt" in r.err \
        and "notes.local" in r.err, r
    assert (path / "mine.txt").read_text() == "notes\n" and (path / "notes.local").is_file()
    (path / "mine.txt").rename(diamond.parent / "mine.txt")  # "move them out of it"
    (path / "notes.local").rename(diamond.parent / "notes.local")
    [again] = hinted_leap(r.err)
    assert again == ["throw", "dia", "--ball", "A", "--resume"], r.err
    resumed = leap(*again, cwd=diamond)
    assert resumed.code == 0 and "made again" in resumed.out, resumed


def test_a_resume_of_a_worktree_locked_on_a_disk_not_mounted_does_not_fail_on_it(
        diamond: Path, builder: Builder) -> None:
    """A blind review: a ball worktree its user locked (`git worktree lock`) and whose
    folder is away made the half-made check fail with "no such folder", exit 2 and no hint.
    It is no half-made worktree: the resume goes on as before the check."""
    _at_checkpoint(diamond, builder)
    path = worktree_of(diamond, "A")
    git("worktree", "lock", "--reason", "usb disk", str(path), cwd=diamond)
    path.rename(diamond.parent / "away")
    r = leap("throw", "dia", "--ball", "A", "--resume", cwd=diamond)
    assert r.code == 0 and "episode 2" in r.out, r
