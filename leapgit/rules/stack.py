"""Stacked bases, judged (L5): a dependent ball is thrown from the slice's base with each
dependency's passed candidate merged in (``worktrees.stack`` builds it). Its throw record
names the stack; these judgments hold it to the ledger.

- ``stack_problems``: a recorded stack base is what it claims: its parents are the slice's
  base and then each dependency's candidate commit as the stack names it, each a recorded
  pass of that dependency (score outcome 1, that candidate tree, that commit), one per
  dependency; and it carries no byte of its own (every path it changes against the slice's
  base holds a dependency candidate's bytes of a path that candidate changed). The server
  asks it of every push of the ball's branch (``rules.balls``) and of a spine integration of
  its candidate (``rules.spine``): a forged stack is refused.
- ``stale``: the stack entry whose dependency no longer stands passed with that candidate
  (reopened, L8, or re-passed with other bytes): the dependent holds (``rules.readiness``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from leapgit.ledger.store import LedgerView
    from leapgit.records.types import BallRecord, StackEntry, ThrowRecord
    from leapgit.rules.objects import Objects


def stale(view: LedgerView, thrown: ThrowRecord) -> StackEntry | None:
    """L8: the first dependency of the throw's stack whose standing pass is no longer the
    candidate the ball was thrown on; None when every one stands (or there is no stack)."""
    from leapgit.rules.passes import standing_pass

    for entry in thrown.stack:
        passed = standing_pass(view, thrown.slice, entry.ball)
        if passed is None or passed.candidate != entry.candidate:
            return entry
    return None


def current_stale(view: LedgerView, slice_id: str, ball_id: str) -> StackEntry | None:
    """``stale`` of the ball's latest throw (None when it was never thrown)."""
    from leapgit.ledger import query

    for episode in reversed(query.episodes(view, slice_id, ball_id)):
        thrown = query.throw(view, slice_id, ball_id, episode)
        if thrown is not None:
            return stale(view, thrown)
    return None


def stale_reason(ball: str, entry: StackEntry) -> str:
    return (f"its dependency {entry.ball} was reopened (L8) after {ball} was thrown on its "
            f"candidate {entry.candidate[:12]} (score {entry.score})")


def stack_problems(objects: Objects, view: LedgerView, slice_base: str, ball: BallRecord,
                   base: str, stack: Sequence[StackEntry]) -> list[str]:
    """Why the recorded stack base ``base`` of ``ball`` is not the stack it claims; empty
    when it is."""
    if not objects.has(base):
        return [f"the stack base {base[:12]} is not here"]
    out = _named(ball, stack)
    out.extend(_passes(objects, view, ball.slice, stack))
    allowed = {slice_base, *(e.commit for e in stack)}
    parents = [] if base == slice_base else [p.decode() for p in objects.commit(base).parents]
    out.extend(f"its parent {p[:12]} is neither the slice's base {slice_base[:12]} nor a "
               f"recorded passed candidate of {', '.join(ball.depends_on)}"
               for p in parents if p not in allowed)
    merged = [c for c in dict.fromkeys(e.commit for e in stack) if c != slice_base]
    if not out and not merged and base != slice_base:
        out.append(f"its candidates are the slice's base {slice_base[:12]}: the stack base is "
                   "that commit")
    elif not out and merged and parents != [slice_base, *merged]:
        out.append(f"its parents {', '.join(p[:12] for p in parents)} are not the slice's "
                   "base and then the stack's candidates, as its throw record names them")
    return out or _foreign_bytes(objects, slice_base, base, stack)


def _named(ball: BallRecord, stack: Sequence[StackEntry]) -> list[str]:
    named = [e.ball for e in stack]
    if sorted(named) == sorted(set(ball.depends_on)) and len(set(named)) == len(named):
        return []
    return [f"the stack names {', '.join(named) or 'no ball'}; {ball.slice}/{ball.ball} "
            f"depends on {', '.join(ball.depends_on) or 'no ball'}, each once"]


def _passes(objects: Objects, view: LedgerView, slice_id: str, stack: Sequence[StackEntry]
            ) -> list[str]:
    from leapgit.errors import LeapError
    from leapgit.ledger import layout
    from leapgit.records.scoring import ScoreRecord

    out = []
    for e in stack:
        try:
            rec = view.record(layout.score_path(slice_id, e.ball, e.score), ScoreRecord)
        except LeapError as exc:
            rec, why = None, exc.lines()[0]
        else:
            why = "no such record"
        if rec is None or rec.outcome != 1 or (rec.candidate, rec.commit) != \
                (e.candidate, e.commit):
            got = why if rec is None else (f"outcome {rec.outcome}, candidate "
                                           f"{rec.candidate[:12]} at {rec.commit[:12]}")
            out.append(f"score {e.score} of {e.ball} is no recorded pass of candidate "
                       f"{e.candidate[:12]} at {e.commit[:12]} ({got})")
        elif not objects.has(e.commit) or objects.commit(e.commit).tree.decode() != \
                e.candidate:
            out.append(f"the candidate commit {e.commit[:12]} of {e.ball} is not here with "
                       f"tree {e.candidate[:12]}")
    return out


def _foreign_bytes(objects: Objects, slice_base: str, base: str,
                   stack: Sequence[StackEntry]) -> list[str]:
    """Every path the stack base changes against the slice's base holds the bytes one of
    its candidates has there, a path that candidate changed; every path a candidate changed
    holds one candidate's bytes (a merge that dropped or rewrote bytes is no stack)."""
    first = objects.commit(slice_base).tree
    tree = objects.commit(base).tree
    brought = {e.commit: (objects.commit(e.commit).tree,
                          objects.touched(first, objects.commit(e.commit).tree))
               for e in stack}
    changed = objects.touched(first, tree)
    out = []
    for path in sorted(changed.union(*(paths for _, paths in brought.values()))):
        options = {objects.blob_id_at(t, path) for t, paths in brought.values() if path in paths}
        if objects.blob_id_at(tree, path) not in options:
            what = "which no dependency's candidate changed" if not options else \
                "with bytes no dependency's candidate has there"
            out.append(f"it changes {path} against the slice's base, {what}")
    return out
