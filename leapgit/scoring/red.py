"""Red first (T7.1): record the commit holding the failing contract test before the build,
after checking, in a throwaway worktree, that the ball's proof really fails there. From then
on the test files it adds are frozen for the builder (T9: never weaken or edit the failing
tests): ``RedRecord.frozen_changes`` is the one check, used by rounds, hooks, score and
audit."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from leapgit import git
from leapgit.errors import Hold, RuleViolation, UsageError
from leapgit.ledger import layout, query
from leapgit.ledger.store import LedgerView
from leapgit.records import yamlio
from leapgit.records.scoring import FileBlob, RedRecord, RunEvidence
from leapgit.records.types import ABSENT
from leapgit.scoring import history
from leapgit.scoring.commands import run_command
from leapgit.slices.diff import out_of_scope
from leapgit.timeutil import now_iso
from leapgit.workspace import Workspace

RULE = "T7.1"


@dataclass(frozen=True)
class RedResult:
    record: RedRecord
    ledger_commit: str


def changed_files(root: Path, base: str, commit: str) -> list[str]:
    raw = git.run(["diff", "--name-only", "-z", "--no-renames", base, commit], root).stdout
    return sorted(p.decode("utf-8", "surrogateescape") for p in raw.split(b"\0") if p)


def blob_at(root: Path, commit: str, path: str) -> str:
    proc = git.run(["rev-parse", "--verify", "--quiet", f"{commit}:{path}"], root, check=False)
    return proc.stdout.decode().strip() or ABSENT


def is_ancestor(root: Path, older: str, newer: str) -> bool:
    return git.run(["merge-base", "--is-ancestor", older, newer], root,
                   check=False).returncode == 0


def start_point(view: LedgerView, root: Path, slice_id: str, ball_id: str, base: str) -> str:
    """Where a fresh ball branch starts: its red commit when one descends from ``base``, so
    the builder finds the failing test in its worktree; else ``base``."""
    red = history.latest_red(view, slice_id, ball_id)
    if red is not None and is_ancestor(root, base, red.commit):
        return red.commit
    return base


def _base(view: LedgerView, slice_id: str, ball_id: str) -> str:
    from leapgit.hookimpl.rules.balls import recorded_base

    return recorded_base(view, slice_id, ball_id).commit


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
        base = _base(view, slice_id, ball_id)
        if any(query.receipts(view, slice_id, ball_id, e)
               for e in query.episodes(view, slice_id, ball_id)):
            raise RuleViolation(f"{slice_id}/{ball_id} already has rounds: red comes first, "
                                "before the build", rule=RULE,
                                hint="respec the ball and record red before re-throwing it")
        if not is_ancestor(root, base, commit) or commit == base:
            raise RuleViolation(f"red commit {commit[:12]} does not add to the ball's base "
                                f"{base[:12]}", field="COMMIT", rule=RULE,
                                hint="commit the failing test on top of the ball's base")
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
            [("Leap-Slice", slice_id), ("Leap-Ball", ball_id), ("Leap-Red", commit)])
    return RedResult(record, written.commit)
