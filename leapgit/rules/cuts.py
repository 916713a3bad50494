"""A cut on the ledger (L1), judged on the server as `leap slice cut` judges its draft
(``slices.check.check_slice``, ``slices.cut.claimed_elsewhere``): a slice record lands only
with the first spec of every ball it names, in waves that are its dependency order, and the
slice those specs make passes the cut's own check; a first spec joins no slice cut before.
A slice record alone would stop every clone's `leap status` on the ball it lacks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from leapgit.errors import LeapError
from leapgit.ledger import layout
from leapgit.records.types import BallRecord, StampedScope
from leapgit.rules.refusal import Refusal

if TYPE_CHECKING:
    from leapgit.ledger.store import LedgerView
    from leapgit.records.types import SliceRecord
    from leapgit.rules.context import PushContext

HINT = ("cut slices with `leap slice cut`, which writes the slice and every ball's first "
        "spec in one commit")


def check_cut(ctx: PushContext, ref: str, sha: str, path: str, rec: SliceRecord,
              view: LedgerView) -> list[Refusal]:
    """``view``: the ledger as the cut's commit leaves it."""
    specs = {b: view.record(layout.ball_path(rec.slice, b), BallRecord) for b in rec.balls}
    out = [Refusal("L1", ref, sha, path, f"names ball {b}, whose first spec "
                   f"({layout.ball_path(rec.slice, b)}) the cut lacks", HINT)
           for b, spec in specs.items() if spec is None]
    if out:
        return out
    return _as_drafted(ctx, ref, sha, path, rec, view,
                       [s for s in specs.values() if s is not None])


def check_first_spec(ref: str, sha: str, path: str, rec: BallRecord, view: LedgerView,
                     before: LedgerView) -> list[Refusal]:
    """A first spec comes with its slice's cut: never into a slice cut before, never one
    its slice does not name."""
    if before.exists(layout.slice_path(rec.slice)):
        return [Refusal("L1", ref, sha, path, f"slice {rec.slice} was cut without it: a "
                        "ball joins no slice after its cut", "cut a new slice for the work")]
    from leapgit.records.types import SliceRecord

    cut = view.record(layout.slice_path(rec.slice), SliceRecord)
    if cut is None or rec.ball not in cut.balls:
        return [Refusal("L1", ref, sha, path, f"slice {rec.slice} does not name ball "
                        f"{rec.ball}", HINT)]
    return []


def _as_drafted(ctx: PushContext, ref: str, sha: str, path: str, rec: SliceRecord,
                view: LedgerView, specs: list[BallRecord]) -> list[Refusal]:
    """L1, L2, L4: the cut's check of the slice the specs make, at the slice's base as the
    server stores it; the waves and the stamps are the ones that check gives."""
    from leapgit.records.drafts import BallDraft, SliceDraft
    from leapgit.slices.check import check_slice
    from leapgit.slices.cut import claimed_elsewhere
    from leapgit.slices.scope import TreeResolver

    draft = SliceDraft(source=path, slice=rec.slice, spine=rec.spine,
                       balls=tuple(BallDraft.from_record(s) for s in specs))
    based = ctx.objects.has(rec.base)
    tree = ctx.objects.commit(rec.base).tree if based else None
    try:
        checked = check_slice(draft, TreeResolver(ctx.objects.repo, tree, None))
    except LeapError as exc:
        return [Refusal(p.rule or "L1", ref, sha, path, p.message, p.hint or HINT)
                for p in exc.problems]
    out = [Refusal(e.problems[0].rule or "L4", ref, sha, path, e.problems[0].message,
                   e.problems[0].hint or HINT) for e in claimed_elsewhere(view, checked)]
    if rec.waves != checked.waves:
        out.append(Refusal("L1", ref, sha, path, f"waves {[list(w) for w in rec.waves]} are "
                           "not the balls' dependency order "
                           f"{[list(w) for w in checked.waves]}", HINT))
    if based:  # the stamps are the base's blobs (without the base, nothing to hold them to)
        out += [Refusal("L2", ref, sha, layout.ball_path(rec.slice, s.ball), f"scope entry "
                        f"{e.path!r} is stamped {e.blob[:12]}, not the slice base's "
                        f"{_stamp(checked.scopes[s.ball], e.path)}", HINT)
                for s in specs for e in s.scope
                if (e.path, e.blob, e.resolved) not in
                {(c.path, c.blob, c.resolved) for c in checked.scopes[s.ball]}]
    return out


def _stamp(stamps: tuple[StampedScope, ...], path: str) -> str:
    found = next((s for s in stamps if s.path == path), None)
    return found.blob[:12] if found is not None else "nothing"
