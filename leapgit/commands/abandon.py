"""`leap slice abandon SLICE --reason TEXT`: give up a slice that never merged. One abandon
record on the ledger; from then on its balls refuse throws (L3), `leap worktree prune`
removes its worktrees, `leap status` and `leap audit` show it abandoned, and its scope files
are free for a new slice to claim (L4)."""

from __future__ import annotations

from pathlib import Path

from leapgit.errors import RuleViolation, UsageError
from leapgit.ledger import layout, query
from leapgit.ledger.workspace import open_workspace
from leapgit.records import trailers as tr
from leapgit.records import yamlio
from leapgit.records.abandon import AbandonRecord
from leapgit.timeutil import now_iso


def abandon(slice_id: str, reason: str, start: Path | str = ".") -> AbandonRecord:
    if not reason.strip():
        raise UsageError("--reason is empty: say why the slice is given up",
                         field="reason", hint=f"`leap slice abandon {slice_id} --reason TEXT`")
    ws = open_workspace(start)
    with ws.ledger() as ledger:
        view = ledger.require()
        query.load_slice(view, slice_id)  # an unknown slice is named, with the known ones
        done = query.abandoned(view, slice_id)
        if done is not None:
            raise RuleViolation(f"slice {slice_id} was abandoned at {done.abandoned_at}: "
                                f"{done.reason}", rule="L8",
                                hint="records are never rewritten: it stays abandoned")
        if view.exists(layout.merge_path(slice_id)):
            raise RuleViolation(f"slice {slice_id} is merged: a merged slice is written "
                                "truth on the spine and cannot be abandoned", rule="L8",
                                hint="change its files in a new slice")
        rec = AbandonRecord(slice_id, reason.strip(), now_iso())
        ledger.append({layout.abandon_path(slice_id): yamlio.dumps(rec.to_dict())},
                      f"abandon slice {slice_id}: {tr.one_line(rec.reason)}",
                      [(tr.SLICE, slice_id), (tr.OUTCOME, "abandon")])
    return rec


def abandon_lines(rec: AbandonRecord) -> list[str]:
    return [f"slice {rec.slice} abandoned: {rec.reason}",
            f"its worktrees are prunable: `leap worktree prune {rec.slice}`"]
