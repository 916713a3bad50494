"""Red first (T7.1): record the commit holding the failing contract test before the build,
after checking, in a throwaway worktree, that the ball's proof really fails there. From then
on the test files it adds are frozen for the builder (T9: never weaken or edit the failing
tests): ``RedRecord.frozen_changes`` is the one check, used by rounds, hooks, score and
audit."""

from __future__ import annotations

from dataclasses import dataclass

from leapgit import git
from leapgit.errors import Hold, RuleViolation, UsageError
from leapgit.git import blob_at, changed_files, is_ancestor
from leapgit.ledger import history, layout, query
from leapgit.ledger.store import LedgerView
from leapgit.ledger.workspace import Workspace
from leapgit.records import trailers as tr
from leapgit.records import yamlio
from leapgit.records.scoring import FileBlob, RedRecord, RunEvidence
from leapgit.scoring.commands import run_command
from leapgit.slices.diff import out_of_scope
from leapgit.timeutil import now_iso

RULE = "T7.1"


@dataclass(frozen=True)
class RedResult:
    record: RedRecord
    ledger_commit: str


def _base(ws: Workspace, view: LedgerView, slice_id: str, ball_id: str) -> str:
    """L5: the base the red adds to: a dependent ball's is its stack base, which holds its
    dependencies' passed candidates (`leap ball base` names it; a hold until they pass)."""
    from leapgit.worktrees.stack import ball_base

    return ball_base(ws.paths.root, view, slice_id, ball_id).commit


def record_red(ws: Workspace, slice_id: str, ball_id: str, rev: str,
               timeout: float | None = None) -> RedResult:
    from leapgit.tribunal.worktree import temporary

    root = ws.paths.root
    with ws.ledger() as ledger:
        view = ledger.require()
        ball = query.load_ball(view, slice_id, ball_id)
        commit = git.rev_parse(rev, root)
        if commit is None:
            raise UsageError(f"no commit {rev!r}", field="COMMIT")
        base = _base(ws, view, slice_id, ball_id)
        if any(query.receipts(view, slice_id, ball_id, e)
               for e in query.episodes(view, slice_id, ball_id)):
            raise RuleViolation(f"{slice_id}/{ball_id} already has rounds: red comes first, "
                                "before the build", rule=RULE,
                                hint="respec the ball and record red before re-throwing it")
        if not is_ancestor(root, base, commit) or commit == base:
            raise RuleViolation(f"red commit {commit[:12]} does not add to the ball's base "
                                f"{base[:12]}", field="COMMIT", rule=RULE,
                                hint="commit the failing test on top of the ball's base "
                                f"(`leap ball base {slice_id} {ball_id}` names it)")
        tests = changed_files(root, base, commit)
        outside = out_of_scope(tests, ball)
        if outside:
            raise RuleViolation(f"the red commit changes files outside the ball's scope: "
                                f"{', '.join(outside)}", field="COMMIT", rule="L4")
        with temporary(root, commit, prefix="leap-red-") as tree:
            run = run_command("red", ball.proof, tree,
                              timeout=timeout or ws.config.tribunal.test_timeout)
        evidence = RunEvidence("red", run.command, run.exit_code, run.seconds,
                               run.output_tail, f"red {commit[:12]}")
        if run.timed_out:
            raise Hold(f"the proof timed out at the red commit {commit[:12]}: not a red",
                       rule=RULE)
        if run.ok:
            raise RuleViolation(f"the proof `{ball.proof}` passes at {commit[:12]}: a red test "
                                "that passes is refused", rule=RULE,
                                hint="commit a test that fails for the missing behaviour")
        number = history.next_number(view, f"{layout.ball_dir(slice_id, ball_id)}/reds")
        record = RedRecord(slice_id, ball_id, number, commit, base,
                           tuple(FileBlob(p, blob_at(root, commit, p)) for p in tests),
                           evidence, now_iso())
        written = ledger.append(
            {layout.red_path(slice_id, ball_id, number): yamlio.dumps(record.to_dict())},
            f"red {number} of {slice_id}/{ball_id}: {len(tests)} frozen test file(s)",
            [(tr.SLICE, slice_id), (tr.BALL, ball_id), (tr.RED, commit)])
    return RedResult(record, written.commit)
