"""Red first (T7.1): record the commit holding the failing contract test before the build,
after checking, in throwaway worktrees, that the ball's `tests` are green at its base (else
every mechanical check would be INVALID, T9) and that its proof really fails at the red
commit, for the right reason: a test ran and failed (``scoring.runner``). From then on the
test files it adds are frozen for the builder (T9: never weaken or edit the failing tests):
``RedRecord.frozen_changes`` is the one check, used by rounds, hooks, score and audit.

While the ball has no round and is not in flight, a red can be redone: the new red replaces
the earlier ones (``replaces``; ``ledger.history.reds`` reads only the reds that count)."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from leapgit import git
from leapgit.errors import Hold, RuleViolation, UsageError
from leapgit.git import blob_at, changed_files, is_ancestor
from leapgit.ledger import history, layout, query
from leapgit.ledger.view import LedgerView
from leapgit.ledger.workspace import Workspace
from leapgit.records import trailers as tr
from leapgit.records import yamlio
from leapgit.records.scoring import FileBlob, RedRecord, RunEvidence
from leapgit.records.types import BallRecord
from leapgit.rules.balls import contract_red
from leapgit.rules.commits import check_commit
from leapgit.rules.objects import Objects
from leapgit.rules.stack import carried_tests, carry_problems, restacking
from leapgit.scoring.commands import CommandRun, run_command, run_fresh
from leapgit.scoring.runner import before_tests, imported_from
from leapgit.slices.diff import out_of_scope
from leapgit.timeutil import now_iso
from leapgit.tribunal.changes import read_change
from leapgit.tribunal.mechanical import fake_green
from leapgit.tribunal.worktree import temporary
from leapgit.worktrees.stack import ball_base

RULE = "T7.1"


@dataclass(frozen=True)
class RedResult:
    record: RedRecord
    ledger_commit: str


def _base(ws: Workspace, view: LedgerView, slice_id: str, ball_id: str) -> str:
    """L5: the base the red adds to: a dependent ball's is its stack base, which holds its
    dependencies' passed candidates (`leap ball base` names it; a hold until they pass)."""
    return ball_base(ws.paths.root, view, slice_id, ball_id, ws.config.spine).commit


def record_red(ws: Workspace, slice_id: str, ball_id: str, rev: str,
               timeout: float | None = None, *, authored: bool = False) -> RedResult:
    """T7.1: ``rev`` recorded as the ball's red once it fails for the right reason.
    ``authored``: the red is the test author's (``leap run``), and a refusal's hint says to
    mend the author and run again, not to make a commit by hand."""
    root = ws.paths.root
    limit = timeout or ws.config.tribunal.test_timeout
    with ws.ledger() as ledger:
        view = ledger.require()
        ball = query.load_ball(view, slice_id, ball_id)
        query.require_not_abandoned(view, slice_id, "its balls take no red")
        commit = git.rev_parse(rev, root)
        if commit is None:
            raise UsageError(f"no commit {rev!r}", field="COMMIT", rule="T7.1",
                             hint="name the commit that adds the ball's failing test")
        base = _base(ws, view, slice_id, ball_id)
        replaced = _replaceable(view, slice_id, ball_id)
        if not is_ancestor(root, base, commit) or commit == base:
            raise RuleViolation(f"red commit {commit[:12]} does not add to the ball's base "
                                f"{base[:12]}", field=None if authored else "COMMIT",
                                rule=RULE, hint="make red.command commit the failing test on "
                                f"the base it is given, {_again(ball, '', True)}" if authored
                                else "commit the failing test on top of the ball's base "
                                f"(`leap ball base {slice_id} {ball_id}` names it)")
        tests = changed_files(root, base, commit)
        outside = out_of_scope(tests, ball)
        if outside:
            raise RuleViolation(f"the red commit changes files outside the ball's scope: "
                                f"{', '.join(outside)}", field=None if authored else "COMMIT",
                                rule="L4", hint=("make red.command keep to the scope ("
                                f"{', '.join(ball.paths)}), {_again(ball, '', True)}")
                                if authored else "commit only the ball's own test files")
        _branch_rules(ws, Objects(ledger.repo), ball, base, commit, authored)
        _green_at_base(root, ball, base, limit, authored)
        run = _fails_at_red(root, ball, commit, limit, authored)
        _tests_run_the_red(root, ball, base, commit, tests, limit, authored)
        number = history.next_number(view, f"{layout.ball_dir(slice_id, ball_id)}/reds")
        evidence = RunEvidence("red", run.command, run.exit_code, run.seconds,
                               run.output_tail, f"red {commit[:12]}")
        record = RedRecord(slice_id, ball_id, number, commit, base,
                           tuple(FileBlob(p, blob_at(root, commit, p)) for p in tests),
                           evidence, now_iso(), replaced[-1].red if replaced else None)
        written = ledger.append(
            {layout.red_path(slice_id, ball_id, number): yamlio.dumps(record.to_dict())},
            f"red {number} of {slice_id}/{ball_id}: {len(tests)} frozen test file(s)",
            [(tr.SLICE, slice_id), (tr.BALL, ball_id), (tr.RED, commit)])
    return RedResult(record, written.commit)


def _branch_rules(ws: Workspace, objects: Objects, ball: BallRecord, base: str, commit: str,
                  authored: bool) -> None:
    """The red's commits judged as `pre-receive` judges them on the ball branch, where the
    throw puts them (``check_commit`` for a red test: a scope path no symlink out of the
    repository nor a gitlink, L2; no merge, L9; a message git's readers read alike): a
    red the server would refuse, or whose link the builder's first round would be refused
    for, is refused here, before anything runs or is recorded."""
    ref = f"refs/heads/{ws.config.ball_branch(ball.slice, ball.ball)}"
    for made in objects.new_commits(commit, [base]):
        found = check_commit(objects, ref, ball, made, ws.config.round_cap, red_test=True)
        if found:
            first = found[0]
            where = f"{first.path}: " if first.path else ""
            raise RuleViolation(
                f"red commit {made.id.decode()[:12]}: {where}{first.message}",
                field=None if authored else "COMMIT", rule=first.rule,
                hint=(f"make red.command commit its test as plain files of the scope in a "
                      f"plain commit, {_again(ball, '', True)}" if authored else
                      "commit the failing test as plain files of the ball's scope, in plain "
                      f"commits on its base (`leap ball base {ball.slice} {ball.ball}` names "
                      "it)"))


def carry_red(ws: Workspace, slice_id: str, ball_id: str, timeout: float | None = None
              ) -> RedResult:
    """L5, T7.1: a restack's red. The ball's stack went stale and its dependencies passed
    again (``rules.stack.restacking``): its contract red's frozen tests, byte for byte, go
    onto the fresh stack base as one commit, which must again fail for the right reason
    over tests green at that base, and are recorded as a red that ``carries`` it. Once
    carried, it says so and writes nothing."""
    root, name = ws.paths.root, f"{slice_id}/{ball_id}"
    limit = timeout or ws.config.tribunal.test_timeout
    with ws.ledger() as ledger:
        view = ledger.require()
        ball = query.load_ball(view, slice_id, ball_id)
        query.require_not_abandoned(view, slice_id, "its balls take no red")
        thrown = restacking(view, slice_id, ball_id)
        if thrown is None:
            raise RuleViolation(f"{name} is not restacking: its stack stands, or a dependency "
                                "has not passed again; no red is carried", rule="L5",
                                hint=f"`leap status {slice_id}` says where it stands")
        carried = contract_red(history.reds(view, slice_id, ball_id))
        if carried is None:
            raise RuleViolation(f"{name} has no red to carry", rule=RULE)
        base = _base(ws, view, slice_id, ball_id)
        if carried.carries is not None and carried.base == base:
            return RedResult(carried, ledger.tip() or "")  # carried already
        tests = carried_tests(view, thrown, carried)
        commit = _carried_commit(root, carried, tests, base, name)
        try:
            _green_at_base(root, ball, base, limit)
            run = _fails_at_red(root, ball, commit, limit)
        except (RuleViolation, Hold) as exc:  # its red no longer holds on the new bytes
            if isinstance(exc, Hold) and "stopped before any test ran" not in exc.lines()[0]:
                raise
            raise type(exc)(problems=[exc.problems[0]._replace(hint=(
                f"{name}'s red, as written, does not hold on its dependencies' new bytes: "
                f"its contract must change, and a passed slice's contract is cut anew: `leap "
                f"slice abandon {slice_id} --reason 'its contract changed'`, then `leap slice "
                "cut FILE`"))], details=exc.details) from None
        number = history.next_number(view, f"{layout.ball_dir(slice_id, ball_id)}/reds")
        frozen = tuple(FileBlob(path, blob) for path, (blob, _) in sorted(tests.items()))
        record = RedRecord(slice_id, ball_id, number, commit, base, frozen,
                           RunEvidence("red", run.command, run.exit_code, run.seconds,
                                       run.output_tail, f"red {commit[:12]}"),
                           now_iso(), carries=carried.red)
        slice_base = query.load_slice(view, slice_id).base
        found = carry_problems(Objects(ledger.repo), view, record, slice_base, ball)
        if found:  # the server's own rule, asked before anything is written
            raise RuleViolation(f"the carried red of {name} would be refused: {found[0]}",
                                rule=RULE)
        # a commit leapgit made: referenced before the ledger names it (`git gc` never
        # takes it before a throw builds on it)
        git.run(["update-ref", carried_ref(slice_id, ball_id, number), commit], root)
        written = ledger.append(
            {layout.red_path(slice_id, ball_id, number): yamlio.dumps(record.to_dict())},
            f"red {number} of {name}: red {carried.red} carried onto its fresh stack",
            [(tr.SLICE, slice_id), (tr.BALL, ball_id), (tr.RED, commit)])
    return RedResult(record, written.commit)


def carried_ref(slice_id: str, ball_id: str, red: int) -> str:
    """Where a carried red's commit is kept (``carry_red`` makes that commit itself)."""
    return f"refs/leap/carried/{slice_id}/{ball_id}/{red}"


def _carried_commit(root: Path, red: RedRecord, tests: dict[str, tuple[str, str]], base: str,
                    name: str) -> str:
    """One commit on ``base`` adding the ``tests`` (``{path: (blob, a commit holding
    it)}``, ``rules.stack.carried_tests``) as those commits hold them."""
    with tempfile.TemporaryDirectory(prefix="leap-carry-") as folder:
        env = {"GIT_INDEX_FILE": os.path.join(folder, "index")}
        git.run(["read-tree", base], root, env=env)
        for path, (blob, holder) in sorted(tests.items()):
            mode = git.out(["ls-tree", holder, "--", path], root).split()[0]
            git.run(["update-index", "--add", "--cacheinfo", f"{mode},{blob},{path}"], root,
                    env=env)
        tree = git.run(["write-tree"], root, env=env).stdout.decode().strip()
    message = (f"red: {name}, red {red.red}'s tests carried onto its fresh stack\n\n"
               f"{tr.SLICE}: {red.slice}\n{tr.BALL}: {red.ball}\n").encode()
    args = ["commit-tree", "--no-gpg-sign", tree, "-p", base]
    proc = git.run(args, root, input=message, check=False)
    if proc.returncode != 0 and b"tell me who you are" in proc.stderr:
        proc = git.run(["-c", "user.name=leapgit", "-c", "user.email=leapgit@localhost",
                        *args], root, input=message)
    if proc.returncode != 0:
        raise git.GitFailed(f"git commit-tree failed: {proc.stderr.decode().strip()}")
    return proc.stdout.decode().strip()


def _replaceable(view: LedgerView, slice_id: str, ball_id: str) -> list[RedRecord]:
    """The reds a new red replaces (T7.1: red comes first). Once a round was built on the
    frozen tests, or the ball is in flight from its red, no red is recorded any more."""
    name = f"{slice_id}/{ball_id}"
    episodes = query.episodes(view, slice_id, ball_id)
    reds = history.reds(view, slice_id, ball_id) \
        if history.has(view, slice_id, ball_id, "reds") else []
    stands = (f"its red {reds[-1].red} ({reds[-1].commit[:12]}) stands" if reds else
              "it was built without a red test, so it can never pass: cut the work again "
              "as a new slice")
    for episode in reversed(episodes):
        rounds = query.receipts(view, slice_id, ball_id, episode)
        if rounds:
            raise RuleViolation(f"{name} already has {len(rounds)} round(s) in episode "
                                f"{episode}: red comes first, before the build, and no red "
                                "is redone once a round was built", rule=RULE,
                                hint=f"{stands}; a different test is a different ball")
    if episodes:
        build = (f"; `leap throw {slice_id} --ball {ball_id} --run` builds on it" if reds
                 else "")  # what leads on: the episode in flight continues (issue 14)
        raise RuleViolation(f"{name} is in flight (episode {episodes[-1]}, no round yet): "
                            "its branch starts at the red it was thrown with, so a new red "
                            "comes before the throw", rule=RULE, hint=stands + build)
    return reds


def _again(ball: BallRecord, commit: str, authored: bool) -> str:
    """What records the red once mended: `leap red` of a new commit by hand, or, in `leap
    run`, the run itself, which asks its test author again."""
    if authored:
        return f"then `leap run {ball.slice}` asks the test author (red.command) again"
    return f"then `leap red {ball.slice} {ball.ball} {commit}` again"


def _green_at_base(root: Path, ball: BallRecord, base: str, timeout: float,
                   authored: bool = False) -> None:
    """T9: the mechanical checks run the ball's `tests` at the base; a base that is not
    cleanly green there makes every verdict INVALID, so the red is refused now."""
    name = f"{ball.slice}/{ball.ball}"
    if not ball.tests:
        raise RuleViolation(f"{name} declares no `tests` command: the mechanical checks "
                            "cannot run and no score can ever pass it", field="tests",
                            rule="L1", hint=f"give it one with `leap ball respec {ball.slice} "
                            f"{ball.ball} FILE` (it has no round yet), then record red")
    run, _ = run_fresh("tests", ball.tests, root, base, timeout=timeout,
                       prefix="leap-red-base-")
    if not run.ok:
        raise RuleViolation(f"the ball's tests `{ball.tests}` are not green at its base "
                            f"{base[:12]} ({run.describe()}): every mechanical check would "
                            "be INVALID, and no candidate could pass", rule="T9",
                            hint=f"make the tests pass at the base, or repair the command "
                            f"with `leap ball respec {ball.slice} {ball.ball} FILE`"
                            + (f"; {_again(ball, '', True)}" if authored else ""),
                            details=run.shown("the tests at the base"))


def _tests_run_the_red(root: Path, ball: BallRecord, base: str, commit: str,
                       tests: list[str], timeout: float, authored: bool = False) -> None:
    """T7: the score's fake-green check (``mechanical.fake_green``, this very function) runs
    the ball's `tests` at the base with the red's test files. Where they pass there, they
    never run the red test, and every candidate would be refused as a fake green after its
    rounds were spent (a blind review: an honest build refused, -1): refused now, before
    any round."""
    assert ball.tests  # ``_green_at_base`` refused a ball without a `tests` command
    check = fake_green(root, read_change(root, base, commit), tests, ball.tests, timeout)
    if check.result == "fail":
        raise RuleViolation(
            f"the ball's tests `{ball.tests}` pass at its base with the red's test files "
            f"({', '.join(tests)}): they do not run the red test, so every candidate would "
            "be refused as a fake green", field="tests", rule="T7",
            hint=f"make `tests` run the red test with `leap ball respec {ball.slice} "
            f"{ball.ball} FILE` (it has no round yet), {_again(ball, commit[:12], authored)}")


def _fails_at_red(root: Path, ball: BallRecord, commit: str, timeout: float,
                  authored: bool = False, finding: bool = False) -> CommandRun:
    """T7.1: the proof runs at the red commit and fails there, because a test ran and
    failed; a passing proof, or one that stopped before any test ran, is no red."""
    with temporary(root, commit, prefix="leap-red-") as tree:
        run = run_command("red", ball.proof, tree, timeout=timeout)
    shown = run.shown("the proof at the red commit")
    respec = f"`leap ball respec {ball.slice} {ball.ball} FILE`"
    again = (_again(ball, "", True) if finding else  # mid-episode: no respec (L3)
             f"or repair a proof that is wrong with {respec}; {_again(ball, '', True)}"
             if authored else
             f"{_again(ball, 'COMMIT', False)} (a proof that is wrong is repaired with "
             f"{respec} before the first round)")
    test = "make red.command write a test" if authored else "commit a test"
    if run.ok:
        raise RuleViolation(f"the proof `{ball.proof}` passes at {commit[:12]}: a red test "
                            "that passes is refused", rule=RULE,
                            hint=f"{test} that fails for the missing behaviour, {again}",
                            details=shown)
    why = before_tests(run)
    if why is not None:
        cls = Hold if run.timed_out else RuleViolation
        module = None if run.timed_out else imported_from(run.stdout, ball.paths)
        inside = ("make red.command write its import inside the test function"
                  if authored else "import it inside the test function")
        make = (f"the test imports {module} at its top, which this ball is to write, so "
                f"no test can run until it is there: {inside}, where its absence fails "
                "the test" if module is not None else
                "make the proof run its test (see its output below)")
        raise cls(f"the proof `{ball.proof}` stopped before any test ran at the red commit "
                  f"{commit[:12]} ({why}): not a red, which is a test that runs and fails for "
                  "the missing behaviour", rule=RULE, hint=f"{make}, {again}",
                  details=shown)
    return run
