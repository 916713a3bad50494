"""A respec on the ledger (L3, L2, L4): spec version ``v > 1`` of a ball
(``balls/<b>/specs/<v>.yaml``), judged on the server as `leap ball respec` judges it
before writing one (issue 18 F5). Only a stuck ball is repaired (ended at 0 or refused
-1; never one in flight, never one that passed, whose candidate the spine may hold), or one
never thrown (no round yet, T7.1: its spec and red can be redone before the build); the
versions follow each other; dependencies are fixed at the cut; and the whole slice, the
repaired ball among the other balls' current specs, passes the cut's own L2 and L4 check
(every path inside the repository, scopes disjoint) at the spine's tip as stored. So a
respec cannot widen a passed ball's scope, nor take another ball's file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from leapgit.errors import LeapError
from leapgit.ledger import query
from leapgit.rules.readiness import assess
from leapgit.rules.refusal import Refusal

if TYPE_CHECKING:
    from leapgit.ledger.view import LedgerView
    from leapgit.records.types import BallRecord
    from leapgit.rules.context import PushContext

HINT = ("respec only a stuck ball or one not thrown yet, with `leap ball respec SLICE BALL "
        "FILE`, which checks the whole slice")


def check_respec(ctx: PushContext, ref: str, sha: str, path: str, rec: BallRecord,
                 view: LedgerView, before: LedgerView) -> list[Refusal]:
    """L3: a respec repairs a stuck ball; L4, L2 (``_scopes``). ``view``: the ledger as
    the commit leaves it; ``before``: as it stood before (the standing a respec needs is the
    one it repairs)."""
    if rec.spec_version == 1:  # a cut: the slice's own records
        from leapgit.rules.cuts import check_first_spec

        return check_first_spec(ref, sha, path, rec, view, before)
    name = f"{rec.slice}/{rec.ball}"
    try:
        slice_rec = query.load_slice(view, rec.slice)
        previous = query.load_ball_version(view, rec.slice, rec.ball, rec.spec_version - 1)
    except LeapError as exc:
        return [Refusal("L3", ref, sha, path, f"spec version {rec.spec_version} of {name} "
                        f"repairs nothing the ledger holds ({exc.lines()[0]})", HINT)]
    if rec.ball not in slice_rec.balls:
        return [Refusal("L4", ref, sha, path, f"slice {rec.slice} has no ball {rec.ball}",
                        HINT)]
    standing = assess(before, slice_rec, ctx.config.round_cap)[rec.ball]
    if not standing.repairable:
        return [Refusal("L3", ref, sha, path, f"{name} is {standing.verdict}: only a stuck "
                        "ball (ended at 0, or refused -1) or one not thrown yet gets a "
                        "repaired spec", HINT)]
    out = []
    if rec.depends_on != previous.depends_on:
        out.append(Refusal("L4", ref, sha, path, f"depends_on {list(rec.depends_on)}, spec "
                           f"version {previous.spec_version} {list(previous.depends_on)}: "
                           "dependencies are fixed when the slice is cut",
                           "re-cut the slice instead"))
    return out + _scopes(ctx, ref, sha, path, rec, before, slice_rec.base)


def _scopes(ctx: PushContext, ref: str, sha: str, path: str, rec: BallRecord,
            before: LedgerView, slice_base: str) -> list[Refusal]:
    """L2, L4: the cut's check of the whole slice, the respecced ball in its new version,
    every other ball in its current one, resolved at the spine's stored tip; the record's
    paths are the ones that check resolves."""
    from leapgit.records.drafts import BallDraft, SliceDraft
    from leapgit.slices.check import check_slice
    from leapgit.slices.scope import TreeResolver

    slice_rec = query.load_slice(before, rec.slice)
    others = [BallDraft.from_record(query.load_ball(before, rec.slice, b))
              for b in slice_rec.balls if b != rec.ball]
    # the repaired ball last, so a collision names the ball whose file it takes
    draft = SliceDraft(source=path, slice=rec.slice, spine=slice_rec.spine,
                       balls=(*others, BallDraft.from_record(rec)))
    tip = ctx.objects.ref(ctx.spine_ref) or slice_base
    tree = ctx.objects.commit(tip).tree if ctx.objects.has(tip) else None
    try:
        checked = check_slice(draft, TreeResolver(ctx.objects.repo, tree, None))
    except LeapError as exc:
        return [Refusal(p.rule or "L4", ref, sha, path, p.message, p.hint or HINT)
                for p in exc.problems]
    want = {(s.path, s.resolved) for s in checked.scopes[rec.ball]}
    return [Refusal("L2", ref, sha, path, f"scope entry {s.path!r} (resolved "
                    f"{s.resolved or s.path!r}) is not the file the spine's tip resolves it to",
                    HINT) for s in rec.scope if (s.path, s.resolved) not in want]
