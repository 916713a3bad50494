"""Record a checked slice in the ledger: one commit holding the slice and every ball."""

from __future__ import annotations

from leapgit import git
from leapgit.errors import RuleViolation, UsageError, combine
from leapgit.ledger import layout
from leapgit.ledger.store import Ledger, LedgerView, Written
from leapgit.records import trailers as tr
from leapgit.records import yamlio
from leapgit.records.types import BallRecord, SliceRecord
from leapgit.slices.check import CheckedSlice, claimed_elsewhere
from leapgit.timeutil import now_iso


def check_against_ledger(ledger: Ledger, view: LedgerView, checked: CheckedSlice,
                         base: str) -> None:
    """What the cut checks against the ledger (a project base, a new slice id, files no
    open slice holds): `leap slice check` runs it too, so its "ok" says the cut will take
    the draft (it said ok to drafts the cut then refused: a bad-input hunt)."""
    draft = checked.draft
    _project_base(ledger, view, base)
    if view.exists(layout.slice_dir(draft.slice)):
        raise RuleViolation(
            f"slice {draft.slice!r} is already cut", file=draft.source, field="slice",
            rule="L8", hint="records are never rewritten: choose a new slice id",
        )
    claimed = combine(claimed_elsewhere(view, checked))
    if claimed is not None:
        raise claimed


def record_cut(ledger: Ledger, checked: CheckedSlice, base: str) -> tuple[SliceRecord, Written]:
    draft = checked.draft
    view = ledger.require()
    check_against_ledger(ledger, view, checked, base)
    at = now_iso()
    rec = SliceRecord(
        slice=draft.slice, spine=draft.spine, base=base, balls=tuple(b.id for b in draft.balls),
        waves=checked.waves, cut_at=at, description=draft.description,
        live_proof=draft.live_proof,
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


def _project_base(ledger: Ledger, view: LedgerView, base: str) -> None:
    """The base is a commit of the project: the ledger is an orphan branch of records, so a
    commit sharing history with it is the ledger's own (or a copy's), never a base to
    build on (`leap ball base` would hand it out)."""
    assert view.commit is not None  # ``require``d
    if git.run(["merge-base", base, view.commit], ledger.git_dir, check=False).returncode == 0:
        raise UsageError(f"{base[:12]} is a commit of the ledger ({ledger.ref}), not of the "
                         "project", field="--base", hint="cut from a commit of the project, "
                         "e.g. the spine's tip (the default is HEAD)")
