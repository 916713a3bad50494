"""Rounds and receipts (L6): one round is one receipt in the ledger; round four cannot
create round five; a fourth round without a pass ends the episode at 0 with a durable
checkpoint, written in the same ledger commit as the receipt.

Every path that records a round (the post-commit hook, `leap round`, a builder run) comes
through ``record_round``; no other code counts rounds.
"""

from __future__ import annotations

import os
from typing import Literal, NamedTuple

from leapgit.errors import (
    InvalidRecord,
    LedgerBusy,
    LedgerConflict,
    RuleViolation,
)
from leapgit.ledger import layout
from leapgit.ledger.store import Ledger, Written
from leapgit.records import trailers as tr
from leapgit.records import yamlio
from leapgit.records.cache import blob_id
from leapgit.records.types import OUTCOME_NAMES, STOPPED, STUCK, Checkpoint, Receipt
from leapgit.rules.episodes import Episode, current_episode, spent_hint
from leapgit.timeutil import now_iso

# Set on a `git commit` that leapgit makes and records itself (`leap round`, `--run`): the
# post-commit hook then leaves the round to it, so each round is recorded once, with its log.
RECORDING_ENV = "LEAP_RECORDS_ROUND"
# Set in a builder's environment by `leap throw --run`, which folds the builder's own commits
# without round trailers into the round it closes and judges their sum (issue 14): the
# post-commit hook leaves such a commit to it.
FOLDING_ENV = "LEAP_FOLDS_COMMITS"
_CONFLICT_RETRIES = 5


class RoundRecorded(NamedTuple):
    receipt: Receipt
    checkpoint: Checkpoint | None
    written: Written | None  # None when this commit's round was already recorded


# what a receipt keeps of a round's evidence: a builder's report is read up to 64 KiB, its
# commit's Leap-Evidence trailer is not (the commit keeps every byte of it); a receipt past
# the ledger's 1 MiB cap could not be written, and the round would end at -1 for its size
MAX_EVIDENCE = 64 * 1024


def cut_evidence(evidence: str) -> str:
    if len(evidence) <= MAX_EVIDENCE:
        return evidence
    return f"{evidence[:MAX_EVIDENCE]}… (cut at {MAX_EVIDENCE} of {len(evidence)} characters)"


def record_round(
    ledger: Ledger, slice_id: str, ball_id: str, *, outcome: Literal[-1, 0, 1], evidence: str,
    round_cap: int, commit: str | None = None, candidate: str | None = None,
    recorded_by: str = "cli", claim: bool = True, log: str | None = None,
    expect_round: int | None = None, quick: bool = False, stuck: bool = False,
    worktree: str | None = None, stopped: str | None = None,
) -> RoundRecorded:
    """Record the next round of the ball's current episode. Retries when a concurrent writer
    took the same round number; a commit already recorded is not recorded twice.
    ``worktree``: where the round was built, which a refusal's hint names.

    ``quick`` (the post-commit hook): a record whose every string is one line is written
    without parsing it back (see ``_checked``). ``stopped``: why leap stopped this round (a
    Ctrl-C): a checkpoint it writes says so (``STOPPED``)."""
    evidence = cut_evidence(evidence)
    for _ in range(_CONFLICT_RETRIES):
        view = ledger.require()
        episode = current_episode(view, slice_id, ball_id)
        if commit is not None:
            for done in episode.receipts:
                if done.commit == commit:
                    return RoundRecorded(done, episode.checkpoint, None)
        try:
            return _record(ledger, episode, outcome, evidence, round_cap, commit, candidate,
                           recorded_by, claim, log, expect_round, quick, stuck, worktree,
                           stopped)
        except LedgerConflict:
            continue  # another writer recorded a round first: count again
    # no rule refused the round (not a RuleViolation): the hook names `leap round`
    raise LedgerBusy(f"could not record a round for {slice_id}/{ball_id}: the ledger kept "
                     "changing under us; nothing was written", hint="try again")


def _record(
    ledger: Ledger, episode: Episode, outcome: Literal[-1, 0, 1], evidence: str,
    round_cap: int, commit: str | None, candidate: str | None, recorded_by: str,
    claim: bool, log: str | None, expect_round: int | None, quick: bool,
    stuck: bool = False, worktree: str | None = None, stopped: str | None = None,
) -> RoundRecorded:
    """``stuck``: a 0 after the same failure of the round before ends the episode now, with
    a checkpoint (``STUCK``), instead of burning the rounds left (L6, issue 14 item 9)."""
    t = episode.throw
    if type(outcome) is not int or outcome not in (-1, 0, 1):
        raise InvalidRecord(f"outcome must be -1, 0 or 1, got {outcome!r}", field="outcome",
                            rule="L6")
    why_closed = episode.closed
    if why_closed:
        raise RuleViolation(f"episode {t.episode} of {t.slice}/{t.ball} is closed: {why_closed}",
                            rule="L6")
    round_no = len(episode.receipts) + 1
    if episode.spent(round_cap):  # L6: round four cannot create round five
        raise RuleViolation(
            f"{t.slice}/{t.ball} already used {round_no - 1} rounds in episode {t.episode}; "
            "there is no fifth round", rule="L6",
            hint=spent_hint(ledger.require(), episode, commit, worktree),
        )
    if expect_round is not None and expect_round != round_no:
        raise RuleViolation(
            f"the commit says round {expect_round}, but this is round {round_no} of episode "
            f"{t.episode}", rule="L6", hint="fix the Leap-Round trailer",
        )
    at = now_iso()
    receipt = Receipt(
        slice=t.slice, ball=t.ball, episode=t.episode, round=round_no, outcome=outcome,
        evidence=evidence, recorded_at=at, claim=claim, commit=commit, candidate=candidate,
        recorded_by=recorded_by, log=log,
        worker=worker_name() if t.published else None,  # L9: the live claim's holder
    )
    records: dict[str, Receipt | Checkpoint] = {
        layout.receipt_path(t.slice, t.ball, t.episode, round_no): receipt}
    checkpoint = None
    early = stuck and round_no < round_cap and episode.receipts \
        and episode.receipts[-1].outcome == 0
    if (round_no >= round_cap or early) and outcome == 0:
        checkpoint = Checkpoint(
            slice=t.slice, ball=t.ball, episode=t.episode, rounds_used=round_no,
            tried=tuple(r.evidence for r in (*episode.receipts, receipt)),
            last_evidence=evidence, recorded_at=at, candidate=candidate, commit=commit,
            reason=STUCK if early else f"{STOPPED}: {stopped}" if stopped else
            f"round limit {round_no} reached without a pass (L6)",
        )
        records[layout.checkpoint_path(t.slice, t.ball, t.episode)] = checkpoint
    files = {path: _checked(record, path, quick) for path, record in records.items()}
    subject = (f"round {round_no} of {t.slice}/{t.ball}: {OUTCOME_NAMES[outcome]}"
               + (" (claim)" if claim and outcome == 1 else "")
               + ("; checkpoint" if checkpoint else ""))
    trailers = [(tr.SLICE, t.slice), (tr.BALL, t.ball), (tr.EPISODE, str(t.episode)),
                (tr.ROUND, str(round_no)), (tr.OUTCOME, str(outcome))]
    if candidate:
        trailers.append((tr.CANDIDATE, candidate))
    written = ledger.append(files, subject, trailers)
    if ledger.records is not None:  # the hook reads them back next round: parsed already

        for path, record in records.items():
            ledger.records.put(blob_id(files[path]), record.to_dict())
    return RoundRecorded(receipt, checkpoint, written)


def _checked(record: Receipt | Checkpoint, path: str, quick: bool = False) -> bytes:
    """The record's bytes, only when they read back as a valid record: the ledger is
    append-only, so an invalid record written once would break every later read.

    ``quick`` skips the read-back (and the ~40 ms of loading a YAML parser and a schema
    validator) when it cannot fail: every string one line, so ``yamlio.dumps`` writes JSON
    scalars that YAML reads back exactly, and every field typed by the record class; the
    tests check such records against the schema, and the server validates every record."""
    raw = record.to_dict()
    data = yamlio.dumps(raw)
    if len(data) > yamlio.MAX_BYTES:
        raise InvalidRecord(f"too large ({len(data)} bytes)", file=path)
    if quick and yamlio.all_quoted(raw):
        return data
    from leapgit.records import schema

    schema.validate_record(yamlio.loads(data, path), path)
    return data


WORKER_ENV = "LEAP_WORKER"  # `leap worker` sets it: the name its claims hold (issue 16)


def worker_name() -> str | None:
    """The worker this process builds for (``LEAP_WORKER``), as its receipts name it."""
    return os.environ.get(WORKER_ENV) or None
