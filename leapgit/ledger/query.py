"""Reading typed records back from a ledger view. Every record read is validated again:
the ledger is data, and data from a branch anyone can push to is input."""

from __future__ import annotations

from typing import NamedTuple

from leapgit.errors import InvalidRecord, RuleViolation, UsageError
from leapgit.ledger import layout
from leapgit.ledger.view import LedgerView
from leapgit.records.abandon import AbandonRecord
from leapgit.records.types import BallRecord, Checkpoint, Receipt, SliceRecord, ThrowRecord


def slice_ids(view: LedgerView) -> list[str]:
    return view.list("slices")


def load_slice(view: LedgerView, slice_id: str) -> SliceRecord:
    rec = view.record(layout.slice_path(slice_id), SliceRecord)
    if rec is None:
        known = ", ".join(slice_ids(view)) or "none yet"
        raise UsageError(f"unknown slice {slice_id!r} (known: {known})",
                         hint="see `leap status` for the slices the ledger holds")
    return rec


def abandoned(view: LedgerView, slice_id: str) -> AbandonRecord | None:
    """The slice's abandon record, or None while it is not given up."""
    return view.record(layout.abandon_path(slice_id), AbandonRecord)


def require_not_abandoned(view: LedgerView, slice_id: str, what: str) -> None:
    """L3, L4: an abandoned slice's balls take nothing more (``what``: what they take not)."""
    gone = abandoned(view, slice_id)
    if gone is not None:
        raise RuleViolation(f"slice {slice_id} was abandoned at {gone.abandoned_at} "
                            f"({gone.reason}): {what}", rule="L3",
                            hint=f"`leap worktree prune {slice_id}` removes its worktrees; cut "
                                 "a new slice for the work (`leap slice cut FILE`)")


def open_slice(view: LedgerView, slice_id: str) -> bool:
    """L4: an open slice owns its scope files: neither merged nor abandoned."""
    return not view.exists(layout.merge_path(slice_id)) and \
        not view.exists(layout.abandon_path(slice_id))


def load_ball(view: LedgerView, slice_id: str, ball_id: str) -> BallRecord:
    """The ball's current spec: the highest recorded spec version."""
    base = layout.ball_dir(slice_id, ball_id)
    versions = sorted(int(n.removesuffix(".yaml")) for n in view.list(f"{base}/specs")
                      if n.removesuffix(".yaml").isdigit())
    path = layout.ball_path(slice_id, ball_id, versions[-1] if versions else 1)
    rec = view.record(path, BallRecord)
    if rec is None:
        cut = view.record(layout.slice_path(slice_id), SliceRecord)
        if cut is not None and ball_id in cut.balls:  # L1: written behind leapgit's back
            raise InvalidRecord(f"missing: slice {slice_id} names ball {ball_id}", file=path,
                                rule="L1", hint="`leap audit` names the commit that cut it "
                                "so (the server refuses such a cut)")
        if cut is None:
            load_slice(view, slice_id)  # an unknown slice is named, with the known ones
        known = ", ".join(cut.balls) if cut is not None else "none"
        raise UsageError(f"unknown ball {ball_id!r} in slice {slice_id!r} (balls: {known})")
    return rec


def load_ball_version(view: LedgerView, slice_id: str, ball_id: str, version: int) -> BallRecord:
    """The ball as one recorded spec version said it (a throw builds that version, L3)."""
    rec = view.record(layout.ball_path(slice_id, ball_id, version), BallRecord)
    if rec is None:
        raise UsageError(f"ball {slice_id}/{ball_id} has no spec version {version}")
    return rec


def load_thrown_ball(view: LedgerView, slice_id: str, ball_id: str) -> BallRecord:
    """The spec version the ball's current episode was thrown with (its rounds build that
    version, L3; a later respec waits for the next throw); the newest before any throw."""
    for episode in reversed(episodes(view, slice_id, ball_id)):
        thrown = throw(view, slice_id, ball_id, episode)
        if thrown is not None:
            return load_ball_version(view, slice_id, ball_id, thrown.spec_version)
    return load_ball(view, slice_id, ball_id)


def episodes(view: LedgerView, slice_id: str, ball_id: str) -> list[int]:
    names = view.list(f"{layout.ball_dir(slice_id, ball_id)}/episodes")
    return sorted(int(n) for n in names if n.isdigit())


def throw(view: LedgerView, slice_id: str, ball_id: str, episode: int) -> ThrowRecord | None:
    return view.record(layout.throw_path(slice_id, ball_id, episode), ThrowRecord)


def receipts(view: LedgerView, slice_id: str, ball_id: str, episode: int) -> list[Receipt]:
    folder = f"{layout.episode_dir(slice_id, ball_id, episode)}/receipts"
    found = (view.record(f"{folder}/{name}", Receipt) for name in view.list(folder))
    return sorted((r for r in found if r is not None), key=lambda r: r.round)


def checkpoint(view: LedgerView, slice_id: str, ball_id: str, episode: int) -> Checkpoint | None:
    return view.record(layout.checkpoint_path(slice_id, ball_id, episode), Checkpoint)


class BallState(NamedTuple):
    ball: str
    wave: int
    state: str  # cut, refuse, hold, pass-claim ... (later issues add thrown, passed, merged)
    episode: int
    rounds_used: int
    last: Receipt | None


def ball_state(view: LedgerView, rec: SliceRecord, ball_id: str) -> BallState:
    wave = next((i for i, w in enumerate(rec.waves) if ball_id in w), 0)
    eps = episodes(view, rec.slice, ball_id)
    if not eps:
        return BallState(ball_id, wave, "cut", 0, 0, None)
    episode = eps[-1]
    done = receipts(view, rec.slice, ball_id, episode)
    last = done[-1] if done else None
    if checkpoint(view, rec.slice, ball_id, episode):
        state = "checkpoint"
    elif last is None:
        state = "thrown"
    else:
        state = {-1: "refuse", 0: "hold", 1: "pass-claim" if last.claim else "pass"}[last.outcome]
    return BallState(ball_id, wave, state, episode, len(done), last)
