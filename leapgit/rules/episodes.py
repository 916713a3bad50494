"""Episodes and round receipts, read back (L6): an episode is a throw and its receipts (a
round commit carries its receipt in ``Leap-*`` trailers: ``records.trailers``); what to do
once an episode is closed or spent. The write half is ``worktrees.rounds.record_round``."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from leapgit.errors import UsageError
from leapgit.ledger import layout, query
from leapgit.ledger.view import LedgerView
from leapgit.records.types import STOPPED, Checkpoint, Receipt, ThrowRecord

if TYPE_CHECKING:
    from collections.abc import Sequence

    from leapgit.records.scoring import RedRecord, ScoreRecord
    from leapgit.records.tribunal_run import FindingRecord, SummaryRecord


def answers_findings(score: ScoreRecord) -> bool:
    """T7.6: the tribunal refused the candidate on its findings (or its mechanical checks):
    the builder's next round answers them, so the episode goes on as after a hold. Every
    other -1 (source check, keep-or-revert, tests, provenance) ends the episode (L6, L7)."""
    last = score.steps[-1] if score.steps else None
    return score.outcome == -1 and last is not None and last.step == "tribunal" \
        and last.result == "fail"


def escalated(view: LedgerView, score: ScoreRecord | None) -> bool:
    """T9: the tribunal's NEW findings were flat or rising two rounds in a row; its score
    held (0) with the escalation (its run's summary says so), and a person decides: the
    episode ends as a hold, which `leap ball respec` repairs or `leap throw --resume`
    resumes."""
    if score is None or score.outcome != 0 or score.rule != "T9" or not score.run_id:
        return False
    from leapgit.records.tribunal_run import SummaryRecord

    summary = view.record(f"{layout.tribunal_dir(score.run_id, score.slice, score.ball)}"
                          "/summary.yaml", SummaryRecord)
    return summary is not None and summary.escalated


def ends_episode(score: ScoreRecord | None) -> bool:
    """The score refused its round (-1) for a reason the builder cannot answer in a next
    round: the ball is respecced and thrown again (L3, L6)."""
    return score is not None and score.outcome == -1 and not answers_findings(score)


class Findings(NamedTuple):
    """What the tribunal's refusal hands the builder's next round (T7.6): the findings of
    the refusing run, each with its status against the round before; and the fingerprints
    that round resolved. ``unsupported``: findings whose quoted evidence the envelope never
    held (T9): reported as such, never handed over as fact."""

    score: int
    run_id: str
    round: int
    findings: tuple[dict[str, object], ...]
    unsupported: tuple[dict[str, object], ...]
    resolved: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return {"score": self.score, "tribunal_run": self.run_id,
                "tribunal_round": self.round, "open": list(self.findings),
                "unsupported": list(self.unsupported), "resolved": list(self.resolved)}


def findings_to_answer(view: LedgerView, slice_id: str, ball_id: str) -> Findings | None:
    """The ball's latest score, when it refused on the tribunal's findings, as the next
    round must answer them (T7.6); None otherwise (a pass, a hold, or no score)."""
    from leapgit.ledger import history, layout
    from leapgit.records.tribunal_run import SummaryRecord

    if not history.has(view, slice_id, ball_id, "scores"):
        return None
    score = history.scores(view, slice_id, ball_id)[-1]
    if not answers_findings(score) or not score.run_id:
        return None
    summary = view.record(f"{layout.tribunal_dir(score.run_id, slice_id, ball_id)}"
                          "/summary.yaml", SummaryRecord)
    if summary is None:  # L8: the aggregate review's refusal, its share for this ball
        from leapgit.rules import aggregate

        summary = aggregate.refusing(view, slice_id, score.run_id)
        blamed = aggregate.findings(view, score)
        if summary is None or blamed is None:
            return None
        return _findings(score, summary, blamed)
    # T7.6: blocker, major and minor findings are answered; an info note is not a finding
    # to fix (a passing juror's observation)
    return _findings(score, summary, [f for f in summary.findings if f.severity != "info"])


def _findings(score: ScoreRecord, summary: SummaryRecord, asked: Sequence[FindingRecord]
              ) -> Findings:
    told = [f.to_dict() for f in asked if f.supported]
    unsupported = [f.to_dict() for f in asked if not f.supported]
    return Findings(score.score, summary.run_id, summary.round, tuple(told),
                    tuple(unsupported), summary.resolved)


class Episode(NamedTuple):
    throw: ThrowRecord
    receipts: tuple[Receipt, ...]
    checkpoint: Checkpoint | None
    refused_by_score: int | None = None  # the score that refused its last round (-1)

    def spent(self, round_cap: int) -> bool:
        """Every round the cap allows is used (``Config.round_cap``)."""
        return len(self.receipts) >= round_cap  # L6: round four cannot create round five

    @property
    def closed(self) -> str | None:
        """Why no further round may be recorded in this episode, or None."""
        if self.checkpoint is not None:
            t = self.throw
            return (f"it ended at 0 with a checkpoint; `leap throw {t.slice} --ball {t.ball} "
                    "--resume` starts a new episode")
        if self.receipts and self.receipts[-1].outcome == -1:
            t = self.throw
            return (f"its last round was refused (-1); respec the ball (`leap ball respec "
                    f"{t.slice} {t.ball} FILE`) and throw it again")
        if self.refused_by_score is not None:
            t = self.throw
            return (f"score {self.refused_by_score} refused its last round (-1); respec the "
                    f"ball (`leap ball respec {t.slice} {t.ball} FILE`) and throw it again")
        return None


def unscored_claim(view: LedgerView, episode: Episode) -> Receipt | None:
    """The episode's last round when it claims a pass that waits for `leap score` (L7: a
    claim is never a pass): no score graded it, or the pass that did was reopened (L8)."""
    t = episode.throw
    last = episode.receipts[-1] if episode.receipts else None
    if last is None or not (last.claim and last.outcome == 1):
        return None
    from leapgit.ledger import history
    from leapgit.rules.passes import standing_pass

    graded = history.graded_last(view, t.slice, t.ball, t.episode, len(episode.receipts))
    if graded is None:
        return last
    # the latest score graded the claim: it still waits when that pass no longer stands
    return last if graded.outcome == 1 and standing_pass(view, t.slice, t.ball) is None \
        else None


def kept_ref(slice_id: str, ball_id: str, tip: str) -> str:
    """Where a ball's commit that no branch holds any longer is kept (nothing lost): one
    put back past its last round (``put_back``), an episode's branch dropped for a fresh
    one (``worktrees.prune.drop_refused``)."""
    return f"refs/leap/kept/{slice_id}/{ball_id}/{tip[:12]}"


def put_back(episode: Episode, tip: str | None, worktree: str | None = None) -> str:
    """L6: when the ball branch's ``tip`` is past where the episode's last round left it (a
    commit no receipt records), the commands that keep that commit under a ref of its own
    and put the branch back, ending in ", then "; else "". They name the ball's worktree
    (``worktree``, else the one its throw names), so they move the ball's branch wherever
    they are typed, never the checkout the user stands in."""
    last = episode.receipts[-1] if episode.receipts else None
    # where the last round left the branch: its commit, or (a round that made none) the
    # newest recorded before it; --keep keeps uncommitted changes, and refuses to lose them
    ended = next((r.commit for r in reversed(episode.receipts) if r.commit), None)
    if tip is None or last is None or ended is None or ended == tip:
        return ""
    import shlex  # only here: the post-commit hook loads this module

    t = episode.throw
    where = worktree or t.worktree
    git = f"git -C {shlex.quote(where)}" if where else "git"
    kept = kept_ref(t.slice, t.ball, tip)
    # on the ball's branch first: `reset` moves whatever branch the worktree stands on
    return (f"`{git} switch -q {shlex.quote(t.branch)} && {git} update-ref {kept} {tip[:12]} && "
            f"{git} reset --keep {ended[:12]}` keeps the commit past round {last.round} at "
            f"{kept} and puts the branch back where round {last.round} left it, then ")


def score_hint(episode: Episode, claim: Receipt, spent: bool, tip: str | None = None,
               worktree: str | None = None) -> str:
    """``spent``: the claim is on the last round the limit allows, so a hold ends the
    episode; before that, the builder goes on after a hold. ``tip``: the ball branch's, when
    a commit past the claim must go first (``put_back``)."""
    t = episode.throw
    then = (f"a hold then resumes with `leap throw {t.slice} --ball {t.ball} --resume`"
            if spent else f"after a hold the builder goes on with round {claim.round + 1}")
    return (put_back(episode, tip, worktree) +
            f"`leap score {t.slice} {t.ball}` grades round {claim.round}'s claim; {then}")


def spent_hint(view: LedgerView, episode: Episode, commit: str | None = None,
               worktree: str | None = None) -> str:
    """What to do once an episode's rounds are spent (L6): score a last claim that waits for
    it, else resume; for ``commit``, a commit past the last round (the post-commit hook),
    put the branch back at that round first."""
    t = episode.throw
    last = episode.receipts[-1] if episode.receipts else None
    back = put_back(episode, commit, worktree)
    if episode.refused_by_score is not None or (last is not None and last.outcome == -1):
        return (f"{t.slice}/{t.ball} was refused (-1): respec the ball (`leap ball respec "
                f"{t.slice} {t.ball} FILE`) and throw it again")
    claim = unscored_claim(view, episode)
    if claim is not None:
        return score_hint(episode, claim, True, commit, worktree)
    from leapgit.rules.passes import current_pass

    passed = current_pass(view, t.slice, t.ball)
    if passed is not None:
        return (f"{t.slice}/{t.ball} passed (score {passed.score}) and takes no further round"
                + (f"; {back.removesuffix(', then ')}" if back else ""))
    return back + f"`leap throw {t.slice} --ball {t.ball} --resume` starts a new episode"


def episode_of(view: LedgerView, thrown: ThrowRecord) -> Episode:
    """The episode ``thrown`` began: its receipts, checkpoint and refusing score."""
    slice_id, ball_id, number = thrown.slice, thrown.ball, thrown.episode
    receipts = tuple(query.receipts(view, slice_id, ball_id, number))
    return Episode(
        throw=thrown, receipts=receipts,
        checkpoint=query.checkpoint(view, slice_id, ball_id, number),
        refused_by_score=_refused_by(view, slice_id, ball_id, number, len(receipts)),
    )


def way_to_pass(view: LedgerView, slice_id: str, ball_id: str) -> str:
    """The command that brings a ball not passed on toward its pass: `leap score` when its
    episode holds a claim no score judged yet; else `leap run`, which takes it on from where
    it stands (its red, a throw, its rounds, a score). `leap score` of a ball never thrown,
    or whose builder claimed nothing yet, only refuses."""
    if query.episodes(view, slice_id, ball_id) and \
            unscored_claim(view, current_episode(view, slice_id, ball_id)) is not None:
        return f"`leap score {slice_id} {ball_id}`"
    return f"`leap run {slice_id}`"


def stopped_by_leap(episode: Episode) -> bool:
    """L6: the episode ended at 0 because leap stopped its last round (``STOPPED``), and
    the builder said 0 in none of its rounds: the person's interrupts, not the builder's
    word. `leap run` resumes such an episode by itself, and it is no hold of the builder's
    (four Ctrl-C during builds used up an episode, a fifth set blamed the spec: a
    walk-away hunt). A builder that held its rounds and was stopped in the last one held
    the episode: a deadline that lands in a last round does not skip the L3 stop."""
    checkpoint = episode.checkpoint
    return checkpoint is not None and (checkpoint.reason or "").startswith(STOPPED + ":") \
        and not any(r.claim and r.outcome == 0 for r in episode.receipts)


def held_by_builder(view: LedgerView, thrown: ThrowRecord) -> int:
    """How many of the episodes ``thrown`` resumed from, back to the first, ended at 0 by
    the builder's word (``stopped_by_leap``: not those leap stopped). Each step goes to
    an earlier episode (``check_resumed_from``); a ledger that says otherwise ends the walk."""
    held = 0
    while thrown.resumed_from is not None and thrown.resumed_from < thrown.episode:
        earlier = query.throw(view, thrown.slice, thrown.ball, thrown.resumed_from)
        if earlier is None:
            break
        if not stopped_by_leap(episode_of(view, earlier)):
            held += 1
        thrown = earlier
    return held


def check_resumed_from(thrown: ThrowRecord) -> str | None:
    """L6: a throw resumes an earlier episode of its ball, or none; what is wrong, else
    None. A throw that names itself or a later episode would make every walk back
    through ``resumed_from`` go round in circles."""
    if thrown.resumed_from is None or thrown.resumed_from < thrown.episode:
        return None
    return (f"episode {thrown.episode} of {thrown.slice}/{thrown.ball} says it resumes "
            f"episode {thrown.resumed_from}; a throw resumes an earlier episode")


def current_episode(view: LedgerView, slice_id: str, ball_id: str) -> Episode:
    numbers = query.episodes(view, slice_id, ball_id)
    for number in reversed(numbers):
        thrown = query.throw(view, slice_id, ball_id, number)
        if thrown is not None:
            return episode_of(view, thrown)
    query.load_ball(view, slice_id, ball_id)  # a ball the slice does not hold is unknown
    raise UsageError(f"ball {ball_id!r} of slice {slice_id!r} has not been thrown",
                     hint=f"run `leap throw {slice_id} --ball {ball_id}` first")


def _refused_by(view: LedgerView, slice_id: str, ball_id: str, episode: int, rounds: int
                ) -> int | None:
    """L6, L7: a score of -1 on the episode's last round ends it; a builder's next round
    would undo the grade (the scorer decides, never the builder)."""
    from leapgit.ledger import history

    last = history.graded_last(view, slice_id, ball_id, episode, rounds)
    return last.score if last is not None and ends_episode(last) else None


def starts_afresh(refused: bool, respecced: bool, scope_changed: bool) -> bool:
    """L3, L6: a ball's next throw drops its branch and starts from the base when it was
    refused, or respecced to another scope, and a respec came since; otherwise it goes on
    with the branch (a resumed hold keeps its candidate). `leap throw`, `leap worktree
    prune` and the reds of a resumed episode (``episode_reds``) ask this one rule."""
    return respecced and (refused or scope_changed)


def episode_reds(view: LedgerView, slice_id: str, ball_id: str, episode: int | None
                 ) -> list[RedRecord]:
    """The reds that hold for the rounds of ``episode`` (None: none thrown yet): the
    contract reds, then the finding reds (T7.6) of that episode and of the episodes whose
    branch it goes on with (a resumed hold keeps its candidate, and the tests on it stay
    frozen, no rounds). The rules find the contract red in it with
    ``rules.balls.contract_red``. The throws are read only when an earlier episode has a
    finding's red."""
    from leapgit.ledger import history

    if episode is None:
        return history.reds_of_episodes(view, slice_id, ball_id, set())
    earlier = {n for n in history.finding_episodes(view, slice_id, ball_id) if n < episode}
    held = branch_episodes(view, slice_id, ball_id, episode) if earlier else {episode}
    return history.reds_of_episodes(view, slice_id, ball_id, held)


def branch_episodes(view: LedgerView, slice_id: str, ball_id: str, episode: int
                     ) -> set[int]:
    """``episode`` and the earlier episodes its branch goes on with: each throw's
    ``resumed_from``, back while the throw kept the one before's base, stack and branch
    and did not start afresh (a throw after a refuse, or after a respec that changed the
    scope, names ``resumed_from`` too, but holds none of the earlier candidates)."""
    out = {episode}
    thrown = query.throw(view, slice_id, ball_id, episode)
    while thrown is not None and thrown.resumed_from is not None:
        earlier = query.throw(view, slice_id, ball_id, thrown.resumed_from)
        if earlier is None or earlier.episode in out or not _goes_on(view, thrown, earlier):
            break
        out.add(earlier.episode)
        thrown = earlier
    return out


def _goes_on(view: LedgerView, thrown: ThrowRecord, earlier: ThrowRecord) -> bool:
    """Did ``thrown`` keep ``earlier``'s branch (same base, stack and branch, and no fresh
    start by ``starts_afresh``)?"""
    if (thrown.base, thrown.stack, thrown.branch) != \
            (earlier.base, earlier.stack, earlier.branch):
        return False
    if thrown.spec_version == earlier.spec_version:
        return True  # no respec since: a resume (a refused ball is thrown again only respecced)

    def scope(version: int) -> set[str]:
        return set(query.load_ball_version(view, thrown.slice, thrown.ball, version).paths)

    ended = episode_of(view, earlier)
    refused = bool(ended.receipts and ended.receipts[-1].outcome == -1) or \
        ended.refused_by_score is not None
    return not starts_afresh(refused, True, scope(thrown.spec_version) !=
                             scope(earlier.spec_version))


def drops_branch(view: LedgerView, thrown: ThrowRecord, tip: str) -> bool:
    """L3, L6: ``tip`` is the branch an earlier episode left, which ``thrown``, a throw that
    started afresh (``starts_afresh``), replaces by a branch from its base. Only a commit
    the earlier episodes recorded (a receipt's commit, or their base) is such a tip: a
    commit on top of it that no receipt records is a round, and rewritten rounds are still
    rounds. A red's commit is recorded as well (a refused round that made no commit left
    the branch at its red). A fresh branch off another base needs no such leave: the old
    tip does not descend from the new base (``rules.balls``)."""
    if thrown.resumed_from is None:
        return False
    earlier = query.throw(view, thrown.slice, thrown.ball, thrown.resumed_from)
    if earlier is None or _goes_on(view, thrown, earlier):
        return False
    from leapgit.ledger import history

    recorded = {earlier.base}
    for number in query.episodes(view, thrown.slice, thrown.ball):
        if number < thrown.episode:
            recorded.update(r.commit for r in query.receipts(view, thrown.slice, thrown.ball,
                                                             number) if r.commit)
    # a red's commit is recorded too: a branch a refused round never moved off its red
    recorded.update(r.commit for r in history.reds_of_episodes(
        view, thrown.slice, thrown.ball, set(range(1, thrown.episode))))
    return tip in recorded
