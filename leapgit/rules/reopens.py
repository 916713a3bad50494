"""A reopen on the ledger (L8; issue 18 F6): a record that voids a ball's pass names a real
byte change, one the server can see. It voids a pass of that ball, for the candidate it
names; and

- ``where: spine``: that pass landed (a merge record of the slice names it), ``commit`` is
  on the spine as the server stores it, after the slice's latest merge, and the ball's
  scope files the record names (``paths``; every scope file of the passed spec version
  when it names none) hold there other bytes, or another mode, than the merged candidate:
  a change only in someone's clone, or none at all, reopens nothing;
- ``where: ball-branch``: the branch moved to ``found``, another tree than the passed
  candidate; when the server holds ``commit`` (a builder's round usually reaches it after
  the ledger that records it), its tree is ``found``.

Who may write one is the signed rule's (``signed_ledger._reopen_role``, S3)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from leapgit.errors import LeapError
from leapgit.ledger import history, query
from leapgit.rules.refusal import Refusal

if TYPE_CHECKING:
    from leapgit.ledger.view import LedgerView
    from leapgit.records.scoring import ReopenRecord, ScoreRecord
    from leapgit.records.types import BallRecord
    from leapgit.rules.context import PushContext

HINT = ("a reopen names a byte change of the passed candidate that the server holds: "
        "`leap merge SLICE` and `leap score SLICE BALL` record one when they find it")


def check_reopen(ctx: PushContext, ref: str, sha: str, path: str, rec: ReopenRecord,
                 view: LedgerView) -> list[Refusal]:
    """L8: the reopen voids a pass of its ball and names the byte change that voids it."""
    name = f"{rec.slice}/{rec.ball}"
    passed = next((s for s in history.scores(view, rec.slice, rec.ball)
                   if s.score == rec.score), None)
    if passed is None or passed.outcome != 1 or passed.candidate != rec.candidate:
        return [Refusal("L8", ref, sha, path, f"voids score {rec.score} of {name}, which is no "
                        f"pass of candidate {rec.candidate[:12]}", HINT)]
    try:
        ball = query.load_ball_version(view, rec.slice, rec.ball, passed.spec_version)
    except LeapError as exc:
        return [Refusal("L8", ref, sha, path, exc.lines()[0], HINT)]
    why = (_spine_change(ctx, view, rec, passed, ball) if rec.where == "spine"
           else _branch_change(ctx, rec))
    return [Refusal("L8", ref, sha, path, w, HINT) for w in why]


def _spine_change(ctx: PushContext, view: LedgerView, rec: ReopenRecord, passed: ScoreRecord,
                  ball: BallRecord) -> list[str]:
    from leapgit.slices.diff import allowed_paths

    records = history.merge_records(view, rec.slice)
    if passed.score not in history.merged_scores(records).get(rec.ball, ()):
        return [f"score {passed.score} of {rec.slice}/{rec.ball} never landed on the spine: "
                "no spine commit can change it"]
    tip, since, commit = ctx.stored_tip(ctx.spine_ref), records[-1].tip, rec.commit
    if commit is None or tip is None or commit == since or not ctx.objects.has(commit) or \
            not ctx.objects.has(since) or not ctx.objects.is_ancestor(since, commit) or \
            not ctx.objects.is_ancestor(commit, tip):
        return [f"spine commit {str(commit)[:12]} is not on the spine the server stores "
                f"({str(tip)[:12]}) after the slice's merge {since[:12]}: a change only in "
                "a clone, or before the merge, reopens nothing there"]
    scope = allowed_paths(ball)
    named = list(rec.paths) or sorted(scope)
    outside = [p for p in named if p not in scope]
    if outside:
        return [f"names {', '.join(outside)}, no file of the scope of {rec.slice}/{rec.ball}"]
    at, merged = ctx.objects.commit(commit).tree, passed.candidate.encode()
    same = [p for p in named if ctx.objects.entry_at(at, p) == ctx.objects.entry_at(merged, p)]
    # every file it names changed; naming none, at least one of the scope's did
    unchanged = same if rec.paths else (same if len(same) == len(named) else [])
    if unchanged:
        return [f"spine commit {commit[:12]} holds the merged candidate's bytes of "
                f"{', '.join(unchanged)}: no byte change"]
    return []


def _branch_change(ctx: PushContext, rec: ReopenRecord) -> list[str]:
    if rec.found is None or rec.found == rec.candidate:
        return [f"names no tree other than the passed candidate {rec.candidate[:12]}: no byte "
                "change"]
    if rec.commit is not None and ctx.objects.has(rec.commit) and \
            ctx.objects.commit(rec.commit).tree.decode() != rec.found:
        return [f"commit {rec.commit[:12]} holds tree "
                f"{ctx.objects.commit(rec.commit).tree.decode()[:12]}, not {rec.found[:12]}"]
    return []
