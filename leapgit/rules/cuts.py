"""A cut on the ledger (L1), judged on the server as `leap slice cut` judges its draft
(``slices.check.check_slice``): a slice record lands only with the first spec of every ball
it names, each named once, in waves that are its dependency order, on a base that is a
commit, and the slice those specs make passes the cut's own check of itself; a first spec
joins no slice cut before. A slice record alone would stop every clone's `leap status` on
the ball it lacks.

A file another open slice holds (L4) is judged here as the cut judges it on its clone
(``slices.check.claimed_elsewhere``), against the ledger pushed: a clone whose ledger was
stale cut over an open slice's file, and both slices stood (a walk-away hunt). The refused
clone's `leap sync --take-remote` leaves its cut out, kept under a ref."""

from __future__ import annotations

from typing import TYPE_CHECKING

from leapgit.errors import LeapError
from leapgit.ledger import layout
from leapgit.records.drafts import BallDraft, SliceDraft
from leapgit.records.types import ABSENT, BallRecord, SliceRecord, StampedScope
from leapgit.rules.refusal import Refusal
from leapgit.slices.check import check_slice, claimed_elsewhere
from leapgit.slices.scope import TreeResolver

if TYPE_CHECKING:
    from leapgit.ledger.view import LedgerView
    from leapgit.rules.context import PushContext

HINT = ("cut slices with `leap slice cut FILE`, which writes the slice and every ball's "
        "first spec in one commit")


def check_cut(ctx: PushContext, ref: str, sha: str, path: str, rec: SliceRecord,
              view: LedgerView) -> list[Refusal]:
    """``view``: the ledger as the cut's commit leaves it."""
    twice = sorted({b for b in rec.balls if rec.balls.count(b) > 1})
    if twice:
        return [Refusal("L1", ref, sha, path, f"names ball {', '.join(twice)} more than once",
                        HINT)]
    if ctx.objects.has(rec.base) and ctx.objects.type_of(rec.base) != "commit":
        return [Refusal("L1", ref, sha, path, f"its base {rec.base[:12]} is a "
                        f"{ctx.objects.type_of(rec.base)}, not a commit", HINT)]
    specs = {b: view.record(layout.ball_path(rec.slice, b), BallRecord) for b in rec.balls}
    out = [Refusal("L1", ref, sha, path, f"names ball {b}, whose first spec "
                   f"({layout.ball_path(rec.slice, b)}) the cut lacks", HINT)
           for b, spec in specs.items() if spec is None]
    if out:
        return out
    return _as_drafted(ctx, ref, sha, path, rec, [s for s in specs.values() if s is not None],
                       view)


def check_first_spec(ref: str, sha: str, path: str, rec: BallRecord, view: LedgerView,
                     before: LedgerView) -> list[Refusal]:
    """A first spec comes with its slice's cut: never into a slice cut before, never one
    its slice does not name."""
    if before.exists(layout.slice_path(rec.slice)):
        return [Refusal("L1", ref, sha, path, f"slice {rec.slice} was cut without it: a "
                        "ball joins no slice after its cut", "cut a new slice for the work")]

    cut = view.record(layout.slice_path(rec.slice), SliceRecord)
    if cut is None or rec.ball not in cut.balls:
        return [Refusal("L1", ref, sha, path, f"slice {rec.slice} does not name ball "
                        f"{rec.ball}", HINT)]
    return []


def _as_drafted(ctx: PushContext, ref: str, sha: str, path: str, rec: SliceRecord,
                specs: list[BallRecord], view: LedgerView) -> list[Refusal]:
    """L1, L2, L4: the cut's check of the slice the specs make, at the slice's base as the
    server stores it; the waves and the stamps are the ones that check gives."""
    draft = SliceDraft(source=path, slice=rec.slice, spine=rec.spine,
                       balls=tuple(BallDraft.from_record(s) for s in specs),
                       description=rec.description, live_proof=rec.live_proof)
    based = ctx.objects.has(rec.base)
    tree = ctx.objects.commit(rec.base).tree if based else None
    try:
        checked = check_slice(draft, TreeResolver(ctx.objects.repo, tree, None))
    except LeapError as exc:
        return [Refusal(p.rule or "L1", ref, sha, path,
                        f"{p.field}: {p.message}" if p.field else p.message, p.hint or HINT)
                for p in exc.problems]
    # the cut's own hint (merge that slice, or abandon it) is for a clone that owns it; here
    # the slice is another clone's, still open (a blind review: a stale clone abandoned it)
    out = [Refusal("L4", ref, sha, path, f"{p.field}: {p.message}" if p.field else p.message,
                   "this cut was made on a ledger that lacked that open slice: once this cut "
                   "is left out, cut again over files no open slice holds")
           for clash in claimed_elsewhere(view, checked) for p in clash.problems]
    if rec.waves != checked.waves:
        out.append(Refusal("L1", ref, sha, path, f"waves {[list(w) for w in rec.waves]} are "
                           "not the balls' dependency order "
                           f"{[list(w) for w in checked.waves]}", HINT))
    if based:  # the stamps are the base's blobs (without the base, nothing to hold them to)
        for spec in specs:
            out += _stamps(ref, sha, layout.ball_path(rec.slice, spec.ball), spec.scope,
                           checked.scopes[spec.ball])
    return out


def _stamps(ref: str, sha: str, path: str, recorded: tuple[StampedScope, ...],
            base: tuple[StampedScope, ...]) -> list[Refusal]:
    """L2: each scope entry stamped with its blob at the slice's base, and a file the base
    holds resolved as the base resolves it (a file the base lacks may be reached through a
    symlink of the clone's work tree, which the server never sees)."""
    want = {s.path: s for s in base}
    out = []
    for entry in recorded:
        found = want.get(entry.path)
        if found is None or found.blob != entry.blob or (
                entry.blob != ABSENT and found.resolved != entry.resolved):
            out.append(Refusal("L2", ref, sha, path, f"scope entry {entry.path!r} is stamped "
                               f"{entry.blob[:12]} (resolved {entry.resolved or entry.path!r}),"
                               f" not as the slice's base has it: "
                               f"{found.blob[:12] if found else 'nothing'} (resolved "
                               f"{(found.resolved or found.path) if found else '-'!r})", HINT))
    return out
