"""Where each ball of a slice stands, read from the ledger, and whether it may be thrown (L5).

A ball is ready only when every dependency returned 1. A refuse blocks every descendant; a
hold checkpoints every descendant. Both are derived from the ledger on every read, never
stored, so they cannot go stale when a ball is resumed or re-specified.

A ball counts as ``1`` only when ``leap score`` passed it and no byte change reopened it
(``hookimpl.rules.passes.current_pass``: the one definition of "passed", shared with
``pre-receive``, ``leap merge`` and ``leap audit``). A builder's receipt is never a pass
(L7: the builder never grades itself). A score of -1 on the episode's last round refuses it;
a score of 0 on the last round the limit allows ends the episode as a hold (L6: round four
cannot create round five), which `leap throw --resume` resumes like a checkpoint.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from leapgit.ledger import query
from leapgit.ledger.view import LedgerView
from leapgit.records.types import SliceRecord, StackEntry
from leapgit.rules.episodes import (
    Episode,
    answers_findings,
    current_episode,
    ends_episode,
    escalated,
)

Own = Literal["cut", "in-flight", "pass", "refuse", "hold"]
Verdict = Literal["ready", "waiting", "blocked", "held", "in-flight", "passed", "refused",
                  "checkpoint", "hold"]


@dataclass(frozen=True)
class BallStanding:
    ball: str
    wave: int
    depends_on: tuple[str, ...]
    spec_version: int
    own: Own
    episode: Episode | None
    verdict: Verdict
    by: str | None = None  # the ancestor that blocks or holds it, or the dependency it awaits
    by_checkpoint: bool = False  # a holding ancestor ended at a checkpoint (else by its score)
    reopened: StackEntry | None = None  # the stacked dependency reopened after its throw (L8)
    restack: bool = False  # every dependency passed again: it is thrown on a fresh stack (L5)

    @property
    def stuck(self) -> bool:
        return self.own in ("hold", "refuse")

    @property
    def repairable(self) -> bool:
        """L3: a stuck ball gets a repaired spec; so does one never thrown, which has no
        round yet (T7.1: its spec and its red can be redone before the build)."""
        return self.stuck or self.own == "cut"

    def why(self) -> str:
        if self.verdict == "blocked":
            return f"blocked: its ancestor {self.by} was refused (-1)"
        if self.verdict == "held" and self.reopened is not None:
            from leapgit.rules.stack import stale_reason

            again = (f"; {self.reopened.ball} passed again: {self.ball} is thrown again on "
                     "its new candidate (a restack)" if self.restack else "")
            return f"held: {stale_reason(self.ball, self.reopened)}{again}"
        if self.verdict == "held":
            how = "with a checkpoint" if self.by_checkpoint else "(its last round scored 0)"
            return f"held: its ancestor {self.by} ended at 0 {how}"
        if self.verdict == "waiting":
            return f"waiting: dependency {self.by} has not passed (1) yet"
        if self.verdict == "in-flight" and self.episode:
            ep = self.episode
            where = "built by workers" if ep.throw.published else \
                f"worktree {ep.throw.worktree}"
            return (f"in flight: episode {ep.throw.episode}, {len(ep.receipts)} round(s) used, "
                    f"{where}")
        return self.verdict


def own_state(episode: Episode | None, passed: bool = False, scored_refuse: bool = False,
              scored_hold: bool = False) -> Own:
    if episode is None:
        return "cut"
    # L7: a builder's claim is never a pass; only leap score's pass record counts.
    if passed:
        return "pass"
    if scored_refuse or (episode.receipts and episode.receipts[-1].outcome == -1):
        return "refuse"
    if episode.checkpoint is not None or scored_hold:
        return "hold"
    return "in-flight"


def scored(view: LedgerView, slice_id: str, ball: str, episode: Episode | None,
           round_cap: int = 4) -> tuple[bool, bool, bool]:
    """(passed, refused, held): what ``leap score`` made of the ball. A score of this
    episode's last round refuses it with a -1; with a 0 it holds it once that round was the
    last the limit allows (before that, the builder goes on with its next round)."""
    if episode is None:  # a ball never thrown: `leap status` imports no pass rule for it
        return False, False, False
    from leapgit.ledger.history import graded_last
    from leapgit.rules.passes import current_pass

    if current_pass(view, slice_id, ball) is not None:
        return True, False, False
    last = graded_last(view, slice_id, ball, episode.throw.episode, len(episode.receipts))
    if last is None:
        return False, False, False

    # T7.6: a refusal on the tribunal's findings goes back to the builder, as a hold does
    held = last.outcome == 0 or answers_findings(last)
    return False, ends_episode(last), (held and episode.spent(round_cap)) or \
        escalated(view, last)


def _ancestors(deps: dict[str, tuple[str, ...]], ball: str) -> list[str]:
    """Every ancestor, nearest first."""
    seen: list[str] = []
    todo = list(deps.get(ball, ()))
    while todo:
        node = todo.pop(0)
        if node not in seen:
            seen.append(node)
            todo.extend(deps.get(node, ()))
    return seen


def assess(view: LedgerView, rec: SliceRecord, round_cap: int = 4
           ) -> dict[str, BallStanding]:
    """The standing of every ball of the slice, in the slice's order (``round_cap``: the
    configured ``Config.round_cap``, which decides when a held score ends an episode)."""
    deps: dict[str, tuple[str, ...]] = {}
    versions: dict[str, int] = {}
    own: dict[str, tuple[Own, Episode | None]] = {}
    for ball in rec.balls:
        record = query.load_ball(view, rec.slice, ball)
        deps[ball] = record.depends_on
        versions[ball] = record.spec_version
        episode = (current_episode(view, rec.slice, ball)
                   if query.episodes(view, rec.slice, ball) else None)
        own[ball] = (own_state(episode, *scored(view, rec.slice, ball, episode, round_cap)),
                     episode)
    out: dict[str, BallStanding] = {}
    for ball in rec.balls:
        wave = next((i for i, w in enumerate(rec.waves) if ball in w), 0)
        state, episode = own[ball]
        reopened = _reopened(view, state, episode)
        verdict, by = ("held", reopened.ball) if reopened is not None else \
            _verdict(ball, state, deps, own)
        held = own[by][1] if verdict == "held" and by is not None else None
        restack = reopened is not None and _restacking(view, rec.slice, ball)
        out[ball] = BallStanding(ball, wave, deps[ball], versions[ball], state, episode,
                                 verdict, by, held is not None and held.checkpoint is not None,
                                 reopened, restack)
    return out


def _reopened(view: LedgerView, state: Own, episode: Episode | None) -> StackEntry | None:
    """L8 over L5: a dependency reopened after the ball was thrown on its candidate holds
    the ball (in flight, passed or at a checkpoint) until that candidate passes again: its
    work stands on bytes that no longer stand. A refused ball is refused anyway."""
    if episode is None or not episode.throw.stack or state in ("cut", "refuse"):
        return None
    from leapgit.rules.stack import landed, stale

    found = stale(view, episode.throw)
    return None if found is None or landed(view, episode.throw.slice, episode.throw.ball) \
        else found


def _restacking(view: LedgerView, slice_id: str, ball: str) -> bool:
    from leapgit.rules.stack import restacking

    return restacking(view, slice_id, ball) is not None


def _verdict(
    ball: str, state: Own, deps: dict[str, tuple[str, ...]],
    own: dict[str, tuple[Own, Episode | None]],
) -> tuple[Verdict, str | None]:
    if state == "hold":  # L6: at a checkpoint, or its last round scored 0 (no checkpoint)
        episode = own[ball][1]
        return ("checkpoint" if episode is not None and episode.checkpoint else "hold"), None
    if state != "cut":
        named: dict[Own, Verdict] = {"in-flight": "in-flight", "pass": "passed",
                                     "refuse": "refused"}
        return named[state], None
    ancestors = _ancestors(deps, ball)
    for kind, verdict in (("refuse", "blocked"), ("hold", "held")):
        # L5: a refuse blocks every descendant; a hold checkpoints every descendant.
        hit = next((a for a in ancestors if own[a][0] == kind), None)
        if hit is not None:
            return verdict, hit  # type: ignore[return-value]
    waiting = next((d for d in deps.get(ball, ()) if own[d][0] != "pass"), None)
    if waiting is not None:
        return "waiting", waiting
    return "ready", None
