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
- ``restacking``: once every dependency stands passed again, with other bytes, the held
  dependent is thrown again on a fresh stack of those passes (a restack), whatever its own
  episode reached (in flight, held, even passed: its work stands on bytes that no longer
  stand). Its red goes first, carried onto the fresh stack base byte for byte
  (``carry_problems``: the red's ``carries``), then a throw whose stack stands
  (``restacks``); a pass of the earlier episode no longer stands (``rules.passes``). The
  client's `leap red --carry`, `leap throw` and `leap run` and the server ask these.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from leapgit.errors import LeapError
from leapgit.ledger import history, layout, query
from leapgit.ledger.history import reds
from leapgit.records.scoring import ScoreRecord
from leapgit.records.types import StackEntry
from leapgit.rules.episodes import episode_reds
from leapgit.rules.passes import current_pass, standing_pass

if TYPE_CHECKING:
    from leapgit.ledger.view import LedgerView
    from leapgit.records.scoring import RedRecord
    from leapgit.records.types import BallRecord, ThrowRecord
    from leapgit.rules.objects import Objects


def stale(view: LedgerView, thrown: ThrowRecord) -> StackEntry | None:
    """L8: the first dependency of the throw's stack whose standing pass is no longer the
    candidate the ball was thrown on; None when every one stands (or there is no stack)."""
    for entry in thrown.stack:
        passed = standing_pass(view, thrown.slice, entry.ball)
        if passed is None or passed.candidate != entry.candidate:
            return entry
    return None


def current_stale(view: LedgerView, slice_id: str, ball_id: str) -> StackEntry | None:
    """``stale`` of the ball's latest throw (None when it was never thrown)."""
    for episode in reversed(query.episodes(view, slice_id, ball_id)):
        thrown = query.throw(view, slice_id, ball_id, episode)
        if thrown is not None:
            return stale(view, thrown)
    return None


def restacking(view: LedgerView, slice_id: str, ball_id: str) -> ThrowRecord | None:
    """L5, L8: the ball's current throw, when its stack went stale (``stale``) and every
    dependency of the ball stands passed again (the ball is thrown again on the fresh
    stack); else None."""
    numbers = query.episodes(view, slice_id, ball_id)
    thrown = query.throw(view, slice_id, ball_id, numbers[-1]) if numbers else None
    if thrown is None or not thrown.stack or stale(view, thrown) is None:
        return None
    ball = query.load_ball(view, slice_id, ball_id)
    if any(current_pass(view, slice_id, dep) is None for dep in ball.depends_on):
        return None
    return None if landed(view, slice_id, ball_id) else thrown


def landed(view: LedgerView, slice_id: str, ball_id: str) -> bool:
    """The ball's standing pass is on the spine (a merge of the slice records it): its
    bytes stand there, and a dependency that passed again since lands beside them (the
    re-merge's aggregate review judges the two together); it is never restacked."""
    passed = standing_pass(view, slice_id, ball_id)
    if passed is None or not view.exists(layout.merge_path(slice_id)):
        return False
    merged = history.merged_scores(history.merge_records(view, slice_id))
    return passed.score in merged.get(ball_id, ())


def restacks(view: LedgerView, previous: ThrowRecord, thrown: ThrowRecord) -> bool:
    """L5, L8: ``thrown`` restacks the ball: the episode before it stands on a stale stack,
    and ``thrown`` starts afresh from it on a stack of the passes that stand now."""
    if not (previous.stack and thrown.stack and thrown.resumed_from == previous.episode
            and thrown.base != previous.base and stale(view, previous) is not None
            and stale(view, thrown) is None):
        return False
    from leapgit.rules.balls import contract_red

    ball = query.load_ball(view, thrown.slice, thrown.ball)
    if sorted(e.ball for e in thrown.stack) != sorted(set(ball.depends_on)) or \
            len(thrown.stack) != len(set(ball.depends_on)):
        return False  # the stack names each dependency once (``_named``)
    red = contract_red(history.reds(view, thrown.slice, thrown.ball))
    return red is not None and red.carries is not None and red.base == thrown.base


def carried_tests(view: LedgerView, thrown: ThrowRecord, carried: RedRecord
                  ) -> dict[str, tuple[str, str]]:
    """T7.1, T7.6 over a restack: what the red that carries ``carried`` (the contract red)
    freezes, ``{path: (blob, the red commit that holds it)}``: the contract red's tests, and
    the tests the test author wrote for the findings of the episodes the stale throw's
    branch held (they stay frozen: a restack never drops a finding's test)."""
    reds = episode_reds(view, thrown.slice, thrown.ball, thrown.episode)
    out = {t.path: (t.blob, carried.commit) for t in carried.tests}
    for red in reds:
        if red.finding:
            out.update({t.path: (t.blob, red.commit) for t in red.tests})
    return out


def carry_problems(objects: Objects, view: LedgerView, rec: RedRecord, slice_base: str,
                   ball: BallRecord) -> list[str]:
    """T7.1 over a restack: a red that ``carries`` an earlier red onto the ball's fresh stack
    base. Its ball is restacking (``restacking``); its frozen tests are the carried red's,
    byte for byte; and, once its commits are here (the client's check, or a push that
    brings them), its base is a stack of the passes that stand now (``stack_problems``) and
    its commit adds exactly those tests to that base, its one parent."""
    from leapgit.rules.balls import contract_red

    # the contract red that stood before this one: never itself, nor a later one
    carried = contract_red([r for r in reds(view, rec.slice, rec.ball) if r.red < rec.red])
    if carried is None or carried.red != rec.carries:
        return [f"red {rec.red} carries red {rec.carries}, which is not the contract red of "
                f"{rec.slice}/{rec.ball} before it"]
    thrown = restacking(view, rec.slice, rec.ball)
    if thrown is None:
        return [f"{rec.slice}/{rec.ball} is not restacking: its stack stands, or a dependency "
                "has not passed again"]
    want = {path: blob for path, (blob, _) in carried_tests(view, thrown, carried).items()}
    out = [f"red {rec.red} freezes {', '.join(sorted(set(rec.frozen()) ^ set(want)))} against "
           f"red {carried.red} and the findings' tests: a carry freezes the same tests"] \
        if set(rec.frozen()) != set(want) else \
        [f"red {rec.red} changes {path}, frozen by red {carried.red} or a finding's red: a "
         "carry keeps its bytes" for path, blob in sorted(rec.frozen().items())
         if want[path] != blob]
    if out or not (objects.has(rec.base) and objects.has(rec.commit)):
        return out  # a record names its commits; the ball branch that holds them is judged

    layers = [_entry(dep, current_pass(view, rec.slice, dep)) for dep in ball.depends_on]
    out.extend(stack_problems(objects, view, slice_base, ball, rec.base, layers))
    if out:
        return out
    commit = objects.commit(rec.commit)
    if [p.decode() for p in commit.parents] != [rec.base]:
        return [f"the red commit {rec.commit[:12]} is not one commit on its base "
                f"{rec.base[:12]}"]
    base_tree = objects.commit(rec.base).tree
    changed = objects.touched(base_tree, commit.tree)
    if changed != set(rec.frozen()):
        return [f"the red commit {rec.commit[:12]} changes {', '.join(sorted(changed))}, "
                "not exactly its frozen tests"]
    held = {path: (objects.blob_id_at(commit.tree, path) or b"").decode()
            for path in rec.frozen()}
    return [f"the red commit holds {path} as {held[path][:12] or 'nothing'}, not the frozen "
            f"{blob[:12]}" for path, blob in sorted(rec.frozen().items()) if held[path] != blob]


def _entry(dep: str, passed: ScoreRecord | None) -> StackEntry:
    assert passed is not None  # ``restacking`` held: every dependency stands passed
    return StackEntry(dep, passed.score, passed.candidate, passed.commit)


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
