"""What counts as a full pass: the one place that says so (L7, L8). Readiness (L5), the
server's ``pre-receive``, ``leap merge`` and ``leap audit`` all ask these functions.

A ball has passed when its latest score record (``balls/<b>/scores/<n>.yaml``, written only
by ``leap score``, ``claim: false``) has outcome 1, no reopen record voids it (L8: a byte
change reopens), and its provenance chain is whole (L7.5): the tribunal summary and every
verdict it names exist, passed, and name the same candidate tree; at least two reviewers
sat from families other than the builder's (L7.3); the tests ran green; the live proof ran
green when the ball declares one. A builder's receipt, claim or not, is never a pass.
The server also takes a score, of any outcome, only when it grades a recorded claim of the
ball by its commit and candidate (``round_problems``), as `leap score` writes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, TypeVar

from leapgit.errors import LeapError, RuleViolation
from leapgit.ledger import query
from leapgit.ledger.view import LedgerView
from leapgit.records.scoring import MergeRecord, ReopenRecord, ScoreRecord
from leapgit.records.types import Receipt

if TYPE_CHECKING:
    from typing import Protocol

    from leapgit.records.kinds import Loadable

    class Graded(Loadable, Protocol):
        """A tribunal record that grades a candidate tree: a summary or a verdict."""

        @property
        def tree(self) -> str: ...
        @property
        def outcome(self) -> str: ...

G = TypeVar("G", bound="Graded")

MIN_REVIEWERS = 2


class NoFullPass(RuleViolation):
    """The ledger holds no full pass for this candidate; the message says what it holds."""


def provenance_problems(receipt: Receipt) -> list[str]:
    """A receipt's own provenance field, when it carries one, names its own candidate."""
    prov = receipt.provenance
    if prov is None or receipt.candidate is None or prov.candidate == receipt.candidate:
        return []
    return [f"provenance names candidate {prov.candidate[:12]}, the receipt "
            f"{receipt.candidate[:12]}: the same hash must appear in every record"]


def _family(builder: str) -> str | None:
    from leapgit.tribunal.identity import parse_builder

    try:
        return parse_builder(builder).family
    except LeapError:
        return None


def _linked(view: LedgerView, path: str, record_type: type[G], candidate: str
            ) -> tuple[G | None, str | None]:
    from leapgit.records.kinds import kind_of

    try:
        rec = view.record(path, record_type)
    except LeapError as exc:
        return None, f"{path} is not a valid record ({exc.lines()[0]})"
    if rec is None:
        return None, f"the linked {kind_of(record_type)} record {path} is missing"
    if rec.tree != candidate:
        return rec, (f"{path} names candidate {rec.tree[:12]}, the pass "
                     f"{candidate[:12]}: the same hash must appear in every record")
    if rec.outcome != "pass":
        return rec, f"{path} says {rec.outcome}, not pass"
    return rec, None


def pass_problems(view: LedgerView, rec: ScoreRecord) -> list[str]:
    """What a pass record lacks of its provenance chain (L7.5); empty when whole."""
    from leapgit.records.tribunal_run import SummaryRecord, VerdictRecord

    if rec.outcome != 1:
        return [f"score {rec.score} of {rec.slice}/{rec.ball} is {rec.outcome}, not a pass"]
    prov = rec.provenance
    if prov is None:
        return ["the pass carries no provenance (task, builder, spec, reviewers, verdicts, "
                "tests, live proof, candidate)"]
    problems: list[str] = []
    if prov.candidate != rec.candidate:
        problems.append(f"provenance names candidate {prov.candidate[:12]}, the pass "
                        f"{rec.candidate[:12]}: the same hash must appear in every record")
    if (prov.slice, prov.ball) != (rec.slice, rec.ball):
        problems.append(f"provenance names task {prov.slice}/{prov.ball}")
    if prov.spec_version != rec.spec_version:
        problems.append(f"provenance names spec version {prov.spec_version}, the pass "
                        f"{rec.spec_version}")
    problems.extend(red_problems(view, rec))
    family = _family(prov.builder)
    if family is None:
        problems.append(f"the builder {prov.builder!r} is not declared in full (T4)")
    summary, why = _linked(view, prov.summary, SummaryRecord, rec.candidate)
    if why:
        problems.append(why)
    elif summary is not None and (summary.run_id != prov.run_id or (
            family and summary.builder_family.casefold() != family.casefold())):
        problems.append(f"{prov.summary} is for another run or builder than the pass names")
    for path in prov.verdicts:
        _, why = _linked(view, path, VerdictRecord, rec.candidate)
        if why:
            problems.append(why)
    others = [r for r in prov.reviewers
              if family is None or r.family.casefold() != family.casefold()]
    if len(others) < MIN_REVIEWERS or len(prov.verdicts) < MIN_REVIEWERS:
        problems.append(f"{len(others)} reviewer(s) from families other than the builder's; "
                        f"at least {MIN_REVIEWERS} must sit (L7.3)")
    if not prov.tests or not all(t.ok for t in prov.tests):
        problems.append("no green test run backs the pass (L7.4): missing proof is never a pass")
    if prov.live_proof is not None and not prov.live_proof.ok:
        problems.append("the live proof did not pass (L7.4)")
    if prov.live_proof is None:
        try:
            ball = query.load_ball_version(view, rec.slice, rec.ball, rec.spec_version)
        except LeapError:
            ball = None
        if ball is None:
            problems.append(f"spec version {rec.spec_version} of {rec.slice}/{rec.ball} is "
                            "missing or unreadable: the task of the chain")
        elif ball.live_proof:
            problems.append("the ball declares a live proof, and the pass holds none (L7.4)")
    return problems


def red_problems(view: LedgerView, rec: ScoreRecord) -> list[str]:
    """T7.1: a pass names the red its tests were frozen by, one the ledger holds and that
    still counts (a red replaced before the first round does not)."""
    from leapgit.ledger import history

    prov = rec.provenance
    if prov is None:
        return []
    if prov.red is None:
        return ["the pass names no red commit: the failing contract test comes first "
                f"(T7.1, `leap red {rec.slice} {rec.ball} COMMIT`)"]
    if all(r.red != prov.red for r in history.reds(view, rec.slice, rec.ball)):
        return [f"the pass names red {prov.red}, which the ledger does not hold for "
                f"{rec.slice}/{rec.ball} (T7.1: the failing contract test comes first, "
                f"`leap red {rec.slice} {rec.ball} COMMIT`)"]
    return []


def round_problems(view: LedgerView, rec: ScoreRecord) -> list[str]:
    """What makes a score, of any outcome, one `leap score` never writes (L7): it grades a
    recorded round of a thrown episode, a claim, by that round's commit and candidate, under
    the spec version thrown, from the throw's base (the spine judges the candidate's
    history from it). The round need not be the last: a scoring takes minutes, and the
    builder may go on. A round that made no commit (`leap round` on an unchanged
    worktree) records none, so nothing binds the commit graded there: the receipt would have
    to record the commit the round started from."""
    where = f"episode {rec.episode} of {rec.slice}/{rec.ball}"
    thrown = query.throw(view, rec.slice, rec.ball, rec.episode)
    if thrown is None:
        return [f"{where} was never thrown"]
    receipts = query.receipts(view, rec.slice, rec.ball, rec.episode)
    if not 1 <= rec.rounds <= len(receipts):
        return [f"the score grades round {rec.rounds}, but {where} holds {len(receipts)} "
                "recorded round(s)"]
    graded = receipts[rec.rounds - 1]
    problems = []
    if not (graded.claim and graded.outcome == 1):
        problems.append(f"round {graded.round} of {where} claims no pass: there is nothing to "
                        "score")
    if rec.spec_version != thrown.spec_version:
        problems.append(f"the score names spec version {rec.spec_version}, {where} was thrown "
                        f"with version {thrown.spec_version}")
    if rec.base != thrown.base:  # the spine judges the candidate's history from it
        problems.append(f"the score names base {rec.base[:12]}, {where} was thrown from "
                        f"{thrown.base[:12]}")
    if graded.commit is not None and graded.commit != rec.commit:
        problems.append(f"the score grades commit {rec.commit[:12]}, round {graded.round} "
                        f"recorded {graded.commit[:12]}")
    if graded.candidate is not None and graded.candidate != rec.candidate:
        problems.append(f"the score grades candidate {rec.candidate[:12]}, round "
                        f"{graded.round} recorded {graded.candidate[:12]}: the same hash must "
                        "appear in every record")
    return problems


def grade_problems(view: LedgerView, rec: ScoreRecord) -> list[str]:
    """What makes a score of 0 or -1 one `leap score` never writes (L7): ``round_problems``,
    and more. One that grades the last round ends the episode (``readiness.scored``); an
    earlier one is history, written while the builder went on, and ends nothing. After a
    pass that stands, only a score of a newer claim counts: a score by hand must not void a
    pass."""
    from leapgit.rules import aggregate

    problems = round_problems(view, rec)
    receipts = query.receipts(view, rec.slice, rec.ball, rec.episode)
    standing = standing_pass(view, rec.slice, rec.ball, before=rec.score)
    newest = max(query.episodes(view, rec.slice, rec.ball), default=rec.episode)
    blamed = aggregate.score_problems(view, rec, standing)  # L8, T7.6: the merged result
    if blamed is not None:
        return problems + blamed
    if standing is not None and (standing.commit == rec.commit or rec.episode != newest
                                 or rec.rounds != len(receipts)):
        problems.append(f"score {standing.score} passed the ball and stands; a score after "
                        "it grades only a newer claim")
    return problems


def standing(scores: Sequence[ScoreRecord], reopens: Iterable[ReopenRecord]
             ) -> ScoreRecord | None:
    """L8: the pass that stands, of a ball's ``scores`` (in number order): the latest, when
    it passed and no reopen voided it (a byte change reopens). Provenance unchecked."""
    latest = scores[-1] if scores else None
    if latest is None or latest.outcome != 1:
        return None
    return None if any(r.score == latest.score for r in reopens) else latest


def standing_pass(view: LedgerView, slice_id: str, ball_id: str, before: int | None = None
                  ) -> ScoreRecord | None:
    """``standing``, read from the ledger; ``before``: of the scores numbered below it. A
    pass of an episode older than the ball's newest throw stands no more: only a restack
    throws a passed ball again (L8)."""
    from leapgit.ledger import history

    found = history.scores(view, slice_id, ball_id)
    if before is not None:
        found = [s for s in found if s.score < before]
    if not found or found[-1].outcome != 1:
        return None  # nothing to void: the reopens are not read
    if found[-1].episode < max(query.episodes(view, slice_id, ball_id), default=0):
        return None  # L5, L8: a later throw (a restack, ``rules.stack``) superseded it
    return standing(found, history.reopens(view, slice_id, ball_id))


def current_pass(view: LedgerView, slice_id: str, ball_id: str) -> ScoreRecord | None:
    """The ball's pass record when it has passed (L7, L8); None otherwise."""
    rec = standing_pass(view, slice_id, ball_id)
    return rec if rec is not None and not pass_problems(view, rec) else None


def full_pass(view: LedgerView, slice_id: str, ball_id: str, candidate_tree: str
              ) -> ScoreRecord:
    """The pass record for exactly ``candidate_tree``, or ``NoFullPass`` saying why not."""
    from leapgit.ledger import history

    found = history.scores(view, slice_id, ball_id)
    if not found:
        raise NoFullPass(f"the ledger holds no pass for ball {slice_id}/{ball_id}: no score "
                         "record (a builder's receipt, claim or not, is never a pass; run "
                         f"`leap score {slice_id} {ball_id}`)", rule="L7")
    rec = standing_pass(view, slice_id, ball_id)
    if rec is None:
        last = found[-1]
        newest = max(query.episodes(view, slice_id, ball_id), default=0)
        why = (f"passed episode {last.episode}, which a restack superseded (L5)"
               if last.outcome == 1 and last.episode < newest else
               "was reopened by a byte change (L8)" if last.outcome == 1 else
               f"scored {last.outcome}: {last.reason}")
        raise NoFullPass(f"ball {slice_id}/{ball_id} has no standing pass: score "
                         f"{last.score} {why}", rule="L8" if last.outcome == 1 else "L7")
    if rec.candidate != candidate_tree:
        raise NoFullPass(f"the pass of {slice_id}/{ball_id} is for candidate "
                         f"{rec.candidate[:12]}, got {candidate_tree[:12]}", rule="L8")
    problems = pass_problems(view, rec)
    if problems:
        raise NoFullPass("; ".join(problems), rule="L7.5")
    return rec


def is_full_pass(view: LedgerView, slice_id: str, ball_id: str, candidate_tree: str) -> bool:
    try:
        full_pass(view, slice_id, ball_id, candidate_tree)
    except NoFullPass:
        return False
    return True


def incomplete(view: LedgerView, slice_id: str) -> list[str]:
    """L8: the balls of the slice that hold no full pass, each with why; empty when the
    slice is complete (every ball passed)."""
    out = []
    for ball in query.load_slice(view, slice_id).balls:
        if current_pass(view, slice_id, ball) is None:
            last = standing_pass(view, slice_id, ball)
            out.append(f"{ball} has no full pass" + (" (its pass lacks provenance)"
                                                       if last is not None else ""))
    return out


def merge_problems(view: LedgerView, rec: MergeRecord) -> list[str]:
    """L8: a slice pass record names, for every ball it merges, the full pass of exactly
    that candidate, and the slice is complete."""
    out = [f"{rec.slice} is not complete: {why}" for why in incomplete(view, rec.slice)]
    for m in rec.merges:
        try:
            passed = full_pass(view, rec.slice, m.ball, m.candidate)
        except NoFullPass as exc:
            out.append(f"{m.ball}: {exc.problems[0].message}")
            continue
        if passed.score != m.score:
            out.append(f"{m.ball}: merged as score {m.score}, the full pass is score "
                       f"{passed.score}")
    return out
