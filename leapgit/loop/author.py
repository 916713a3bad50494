"""The test author (T7.1): a role distinct from the builder that writes a ball's failing
contract test before the build, as the thrower writes the contract.

`leap run` asks it once per ball that has no red: ``red.command`` runs in a throwaway
worktree detached at the ball's base (L5: a dependent ball's stack base, which holds its
dependencies' passed code), with a handoff naming the goal, the spec, the scope, the proof
and the tests. It must commit the failing test inside the ball's scope; that commit is then
recorded exactly as `leap red` records one (red for the right reason: the tests green at the
base, the proof failing at the red because a test ran and failed). The author never sees
the builder's conversation, and the builder never writes its own contract.

The worktree is thrown away only after the red is recorded (nothing unrecorded is lost: a
run killed meanwhile leaves it, and the next run asks the author again)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from leapgit import git
from leapgit.errors import Hold, InvalidRecord, UsageError
from leapgit.ledger import history, query
from leapgit.ledger.workspace import Workspace
from leapgit.records import yamlio
from leapgit.rules.episodes import findings_to_answer
from leapgit.scoring.commands import run_command
from leapgit.scoring.findingred import record_finding_red
from leapgit.scoring.red import RedResult, record_red
from leapgit.tribunal.worktree import RED_TREES, LeftTree, discard, left_behind, temporary
from leapgit.worktrees.builder import require_program
from leapgit.worktrees.handoff import environment
from leapgit.worktrees.stack import ball_base

CONFIG = ".leap/config.yaml"
AUTHOR_PREFIX, FINDINGS_PREFIX = RED_TREES
NOTE = ("You are the test author (T7.1). Commit, in this worktree, a test that fails for the "
        "missing behaviour the goal and spec describe, inside the scope, and nothing else. "
        "Run the proof: it must run that test and fail. Do not implement the behaviour.")


@dataclass(frozen=True)
class Authored:
    red: RedResult
    seconds: float
    log: Path


def check_author(ws: Workspace, then: str) -> None:
    """The author is a role of its own (T4, T7.1): never the builder's own session; and a
    command that cannot start is refused before any ball is thrown, as the builder's is (it
    would hold every ball that needs a red, each after a throwaway tree). ``then``: what goes
    on once the config is mended."""
    cfg = ws.config
    if cfg.red_command and cfg.red_identity and cfg.red_identity == cfg.builder_identity:
        raise UsageError("the test author is declared as the builder itself: the one who "
                         "writes the contract cannot be the one who meets it", file=CONFIG,
                         field="red.identity", rule="T7.1",
                         hint="give the test author an identity of its own (another session)")
    if cfg.red_command:
        require_program(cfg.red_command, ws.paths.root, config_root=ws.main_top,
                        field="red.command", rule="T7.1", then=then)


def author_red(ws: Workspace, slice_id: str, ball_id: str,
               say: Callable[[str], None] = lambda line: None,
               stop: threading.Event | None = None) -> Authored:
    """T7.1: the ball's red, written by the test author and recorded. An author a killed
    run left at work on it is waited for, and its commit is its word (``_left_author``):
    never a second author beside it. ``say``: what the run tells meanwhile; ``stop``: set
    when the run stops (no more waiting)."""
    command = ws.config.red_command
    if not command:
        raise UsageError("no test author is configured", file=CONFIG, field="red.command",
                         rule="T7.1", hint="set red.command, or record a red by hand with "
                         f"`leap red {slice_id} {ball_id} COMMIT`")
    root = ws.paths.root
    with ws.ledger() as ledger:
        view = ledger.require()
        ball = query.load_ball(view, slice_id, ball_id)
        base = ball_base(root, view, slice_id, ball_id, ws.config.spine).commit
    log = ws.paths.common_dir / "leap" / "logs" / slice_id / ball_id / "red-author.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    left = _left_author(ws, slice_id, ball_id, base, say, stop)
    if left is not None:
        try:
            recorded = record_red(ws, slice_id, ball_id, left.head, authored=True)
        finally:
            discard(root, left)  # its commit kept under refs/leap/kept/ when not recorded
        return Authored(recorded, time.monotonic() - start, log)
    with temporary(root, base, prefix=AUTHOR_PREFIX) as tree:
        handoff = tree.parent / "handoff.yaml"
        handoff.write_bytes(yamlio.dumps({
            "kind": "red-handoff", "note": NOTE, "slice": slice_id, "ball": ball_id,
            "goal": ball.goal, "spec": ball.spec, "scope": list(ball.paths),
            "proof": ball.proof, "tests": ball.tests, "base": base}))
        env = environment({
            "LEAP_SLICE": slice_id, "LEAP_BALL": ball_id, "LEAP_GOAL": ball.goal,
            "LEAP_SPEC": ball.spec, "LEAP_PROOF": ball.proof, "LEAP_SCOPE": "\n".join(ball.paths),
            "LEAP_BASE": base, "LEAP_HANDOFF": str(handoff), "LEAP_WORKTREE": str(tree),
            "LEAP_ROLE": "test-author"})
        _run(command, tree, env, log, ws.config.red_timeout, slice_id)
        head = git.out(["rev-parse", "HEAD"], tree)
        if head == base:
            raise Hold(f"the test author made no commit for {slice_id}/{ball_id} (see {log})",
                       rule="T7.1", hint=f"fix red.command, then `leap run {slice_id}` asks "
                       "it again")
        recorded = record_red(ws, slice_id, ball_id, head, authored=True)
    return Authored(recorded, time.monotonic() - start, log)


def _left_author(ws: Workspace, slice_id: str, ball_id: str, base: str,
                 say: Callable[[str], None], stop: threading.Event | None,
                 prefix: str = AUTHOR_PREFIX) -> LeftTree | None:
    """A test author a killed run left writing this ball's red (its throwaway tree, whose
    maker is gone, with the handoff of this ball at this base): waited for while it works
    there, at most red.timeout, as a person would; its tree then, when it committed (else
    thrown away, and the author is asked anew). Still at work after that: a hold naming
    the tree, never a second author beside it."""
    for left in left_behind(ws.paths.root, prefix):
        try:
            handoff = yamlio.loads(yamlio.read_bytes(left.tree.parent / "handoff.yaml"),
                                   "handoff.yaml")
        except InvalidRecord:
            continue  # not readable as a handoff: no author of ours (reap_left's)
        if not isinstance(handoff, dict) or (handoff.get("slice"), handoff.get("ball"),
                                             handoff.get("base")) != (slice_id, ball_id, base):
            continue
        timeout = ws.config.red_timeout
        began = time.monotonic()
        if left.at_work():
            say(f"a test author a killed run left still writes {slice_id}/{ball_id}'s "
                f"{'findings tests' if prefix == FINDINGS_PREFIX else 'red'} in "
                f"{left.tree}: waiting for it to end (at most red.timeout, {timeout:g} s); "
                "then its commit is recorded (T7.1)")
        while left.at_work():
            if stop is not None and stop.is_set():
                raise Hold(f"stopped while a test author a killed run left still works in "
                           f"{left.tree}", rule="T7.1",
                           hint=f"`leap run {slice_id}` waits for it again")
            if time.monotonic() > began + timeout:
                raise Hold(f"a test author a killed run left still works in {left.tree}, "
                           f"past red.timeout ({timeout:g} s)", rule="T7.1",
                           hint=f"stop the processes working there, then `leap run "
                                f"{slice_id}`")
            time.sleep(0.2)
        head = git.out(["rev-parse", "HEAD"], left.tree)
        if head != base:
            return replace(left, head=head)
        discard(ws.paths.root, left)
    return None


FINDINGS_NOTE = (
    "You are the test author (T7.6). The blind tribunal refused this candidate; its open "
    "findings are below. For each finding you can check against these files, add a NEW test "
    "file inside the scope that fails for the finding's real reason, and commit it; change "
    "no existing file (frozen tests stay as they are), and do not fix the code. A finding "
    "the files do not bear out gets no test (T9). Commit nothing if none can be tested.")


def author_finding_red(ws: Workspace, slice_id: str, ball_id: str,
                       say: Callable[[str], None] = lambda line: None,
                       stop: threading.Event | None = None) -> Authored | None:
    """T7.6: the open findings of the ball's latest score become new failing tests, on the
    refused candidate, recorded as a finding's red (``scoring.findingred``); None when the
    author committed nothing (no finding could be tested: the builder still gets them).
    An author a killed run left at work on them is waited for (``_left_author``)."""
    command = ws.config.red_command
    assert command
    root = ws.paths.root
    with ws.ledger() as ledger:
        view = ledger.require()
        score = history.scores(view, slice_id, ball_id)[-1]
        found = findings_to_answer(view, slice_id, ball_id)
        ball = query.load_ball_version(view, slice_id, ball_id, score.spec_version)
    assert found is not None
    log = ws.paths.common_dir / "leap" / "logs" / slice_id / ball_id / \
        f"red-author-score-{score.score}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    left = _left_author(ws, slice_id, ball_id, score.commit, say, stop, FINDINGS_PREFIX)
    if left is not None:
        try:
            recorded = record_finding_red(ws, slice_id, ball_id, left.head, score.score)
        finally:
            discard(root, left)
        return Authored(recorded, time.monotonic() - start, log)
    with temporary(root, score.commit, prefix=FINDINGS_PREFIX) as tree:
        handoff = tree.parent / "handoff.yaml"
        handoff.write_bytes(yamlio.dumps({
            "kind": "red-handoff", "note": FINDINGS_NOTE, "slice": slice_id, "ball": ball_id,
            "goal": ball.goal, "spec": ball.spec, "scope": list(ball.paths),
            "proof": ball.proof, "tests": ball.tests, "base": score.commit,
            "findings": found.to_dict()}))
        env = environment({
            "LEAP_SLICE": slice_id, "LEAP_BALL": ball_id, "LEAP_GOAL": ball.goal,
            "LEAP_SPEC": ball.spec, "LEAP_PROOF": ball.proof, "LEAP_SCOPE": "\n".join(ball.paths),
            "LEAP_BASE": score.commit, "LEAP_HANDOFF": str(handoff), "LEAP_WORKTREE": str(tree),
            "LEAP_ROLE": "test-author", "LEAP_FINDINGS": str(len(found.findings))})
        _run(command, tree, env, log, ws.config.red_timeout, slice_id)
        head = git.out(["rev-parse", "HEAD"], tree)
        if head == score.commit:
            return None
        recorded = record_finding_red(ws, slice_id, ball_id, head, score.score)
    return Authored(recorded, time.monotonic() - start, log)


def _run(command: str, cwd: Path, env: dict[str, str], log: Path, timeout: float,
         slice_id: str) -> None:
    """The author in a process group of its own: a timeout stops everything it started."""
    try:
        run = run_command("red", command, cwd, timeout=timeout, env=env)
    except OSError as exc:
        raise Hold(f"the test author could not start: {exc}", rule="T7.1",
                   hint=f"fix red.command; `leap run {slice_id}` asks it again") from exc
    with open(log, "ab") as out:
        out.write(f"$ {command}\n{run.stdout}".encode())
    if run.timed_out:
        raise Hold(f"the test author timed out after {timeout:.0f} s (see {log})",
                   rule="T7.1", hint=f"raise red.timeout or fix red.command; `leap run "
                   f"{slice_id}` asks it again")
    if run.stopped_from_outside:  # a kill, not the command's doing: nothing to fix
        raise Hold(f"the test author {run.ended()}, a signal from outside it (see {log})",
                   rule="T7.1", hint=f"`leap run {slice_id}` asks it again")
    if not run.ok:
        raise Hold(f"the test author {run.ended()} (see {log})", rule="T7.1",
                   hint=f"fix red.command; `leap run {slice_id}` asks it again")
    if not (cwd / ".git").is_file():  # it removed the tree it was given, or its .git file
        raise Hold(f"the test author removed its worktree {cwd} or the .git file in it (see "
                   f"{log}): no commit of it can be read", rule="T7.1",
                   hint=f"make red.command write in the tree it is given, and leave it there; "
                   f"`leap run {slice_id}` asks it again")
