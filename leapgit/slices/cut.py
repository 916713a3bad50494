"""Record a checked slice in the ledger: one commit holding the slice and every ball."""

from __future__ import annotations

from leapgit.errors import RuleViolation
from leapgit.ledger import layout
from leapgit.ledger.store import Ledger, Written
from leapgit.records import trailers as tr
from leapgit.records import yamlio
from leapgit.records.types import BallRecord, SliceRecord
from leapgit.slices.check import CheckedSlice
from leapgit.timeutil import now_iso


def record_cut(ledger: Ledger, checked: CheckedSlice, base: str) -> tuple[SliceRecord, Written]:
    draft = checked.draft
    view = ledger.require()
    if view.exists(layout.slice_dir(draft.slice)):
        raise RuleViolation(
            f"slice {draft.slice!r} is already cut", file=draft.source, field="slice",
            rule="L8", hint="records are never rewritten: choose a new slice id",
        )
    at = now_iso()
    rec = SliceRecord(
        slice=draft.slice, spine=draft.spine, base=base, balls=tuple(b.id for b in draft.balls),
        waves=checked.waves, cut_at=at, description=draft.description,
    )
    files = {layout.slice_path(draft.slice): yamlio.dumps(rec.to_dict())}
    for ball in draft.balls:
        ball_rec = BallRecord(
            slice=draft.slice, ball=ball.id, spec_version=1, goal=ball.goal, spec=ball.spec,
            scope=checked.scopes[ball.id], proof=ball.proof, rollback=ball.rollback,
            depends_on=ball.depends_on, metric=ball.metric, tests=ball.tests,
            live_proof=ball.live_proof, recorded_at=at,
        )
        files[layout.ball_path(draft.slice, ball.id)] = yamlio.dumps(ball_rec.to_dict())
    written = ledger.append(
        files,
        f"cut slice {draft.slice}: {len(draft.balls)} balls in {len(checked.waves)} waves",
        [(tr.SLICE, draft.slice), (tr.BASE, base), (tr.SPINE, draft.spine)]
        + [(tr.BALL, b.id) for b in draft.balls],
    )
    return rec, written
