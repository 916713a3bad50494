"""Score steps 2 and 3 run typed commands in clean throwaway worktrees of one commit.

Tests and live proof (L7.4): first the declared tests run at the base, where they must be
cleanly green (T9: else the harness is INVALID, a hold); then the proof, the declared tests
and the live proof run as typed commands in a clean worktree of the candidate; after each
the candidate is re-hashed (the worktree's tracked files and any new file inside the scope,
written to a throwaway index) and a test that changed any byte is refused. A timeout is a
hold, never a pass.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from leapgit import git
from leapgit.records.scoring import RunEvidence, Step
from leapgit.records.types import BallRecord
from leapgit.scoring.commands import CommandRun, CommandType, run_command, run_fresh
from leapgit.tribunal.worktree import temporary


@dataclass(frozen=True)
class Proved:
    step: Step
    runs: tuple[RunEvidence, ...]
    tests: tuple[RunEvidence, ...]  # proof and tests
    live_proof: RunEvidence | None
    tampered: bool = False  # a run changed bytes of the candidate (L7.4)


def evidence(run: CommandRun, where: str) -> RunEvidence:
    return RunEvidence(run.type, run.command, run.exit_code, run.seconds, run.output_tail,
                       where)


def rehash(tree: Path, scope: tuple[str, ...]) -> str:
    """The tree id of what the worktree holds now: tracked files, plus new files in scope."""
    fd, index = tempfile.mkstemp(prefix="leap-rehash-", suffix=".index")
    os.close(fd)
    env = {"GIT_INDEX_FILE": index}
    try:
        git.run(["read-tree", "HEAD"], tree, env=env)
        git.run(["add", "-u"], tree, env=env)
        new = [p for p in scope if (tree / p).exists() or (tree / p).is_symlink()]
        if new:
            git.run(["add", "-f", "--", *(f":(literal){p}" for p in new)], tree, env=env)
        return git.run(["write-tree"], tree, env=env).stdout.decode().strip()
    finally:
        Path(index).unlink(missing_ok=True)


def _changed(tree: Path, old: str, new: str) -> list[str]:
    raw = git.run(["diff-tree", "-r", "--name-only", "-z", old, new], tree).stdout
    return [p.decode("utf-8", "surrogateescape") for p in raw.split(b"\0") if p]


def commands_of(ball: BallRecord) -> list[tuple[CommandType, str]]:
    out: list[tuple[CommandType, str]] = [("proof", ball.proof)]
    if ball.tests:
        out.append(("tests", ball.tests))
    if ball.live_proof:
        out.append(("live_proof", ball.live_proof))
    return out


def harness(root: Path, base: str, ball: BallRecord, timeout: float) -> Proved | None:
    """T9: the ball's `tests` at the base, before any candidate is judged by them. A base
    that is not cleanly green there (the command is wrong, or names the red test, which is
    not there yet) makes the harness INVALID: a hold, never a -1 charged to the builder."""
    return _at_base(root, base, ball, timeout)[0]


def _at_base(root: Path, base: str, ball: BallRecord, timeout: float,
             again: bool = False) -> tuple[Proved | None, bool]:
    """``harness``, and whether its pass is one kept from an earlier ask."""
    if not ball.tests:
        return None, False
    run, kept = run_fresh("tests", ball.tests, root, base, timeout=timeout,
                          prefix="leap-score-base-", again=again)
    if run.ok:
        return None, kept
    why = ("the tests passed there earlier in this command: the suite is flaky, or something "
           "it needs outside the tree changed (a service, a dependency)") if again else \
        "the ball's `tests` need repair"
    return Proved(Step("tests", "hold", f"the harness is INVALID: {run.describe()} at the base "
                       f"{base[:12]}, so no candidate can be judged by it: {why}; the "
                       "candidate is not charged", "T9"),
                  (evidence(run, f"clean worktree of the base {base[:12]}"),), (), None), kept


def run_proofs(root: Path, base: str, commit: str, candidate: str, ball: BallRecord,
               timeout: float) -> Proved:
    invalid, kept = _at_base(root, base, ball, timeout)
    if invalid is not None:
        return invalid
    proved = prove_candidate(root, commit, candidate, ball, timeout)
    if proved.step.result != "ok" and kept and not proved.tampered:
        # a base pass kept from an earlier ask (``worktree.once_a_tree``) may be stale: a
        # base that is not green now is no -1 charged to the builder (T9); a candidate that
        # changed its own bytes is refused whatever the base says
        invalid, _ = _at_base(root, base, ball, timeout, again=True)
        if invalid is not None:  # the candidate's runs stay in the evidence, before it
            return replace(invalid, runs=(*proved.runs, *invalid.runs))
    return proved


def prove_candidate(root: Path, commit: str, candidate: str, ball: BallRecord,
                    timeout: float) -> Proved:
    """L7.4: the proof, the tests and the live proof in a clean worktree of the candidate,
    each followed by its re-hash; a timeout is a hold, never a pass."""
    runs: list[RunEvidence] = []
    where = f"clean worktree of {commit[:12]}"
    with temporary(root, commit, prefix="leap-score-") as tree:
        for kind, command in commands_of(ball):
            run = run_command(kind, command, tree, timeout=timeout)
            runs.append(evidence(run, where))
            now = rehash(tree, ball.paths)
            if now != candidate:
                changed = ", ".join(_changed(tree, candidate, now)) or "the tree"
                return Proved(Step("tests", "fail", f"{run.describe()}, and it changed bytes "
                                   f"of the candidate: {changed}", "L7.4"),
                              tuple(runs), (), None, tampered=True)
            if run.timed_out:
                return Proved(Step("tests", "hold", f"{run.describe()}: not a pass", "L7.4"),
                              tuple(runs), (), None)
            if not run.ok:
                return Proved(Step("tests", "fail", run.describe(), "L7.4"), tuple(runs), (),
                              None)
    tests = tuple(r for r in runs if r.type in ("proof", "tests"))
    live = next((r for r in runs if r.type == "live_proof"), None)
    said = "; ".join(f"{r.type} exited 0" for r in runs)
    return Proved(Step("tests", "ok", f"{said}; the candidate re-hashed unchanged"),
                  tuple(runs), tests, live)
