"""Reading the scoring records of a ball back from a ledger view (validated on every read:
the ledger is data anyone can push to). Numbered records are read in number order."""

from __future__ import annotations

from leapgit.ledger import layout
from leapgit.ledger.query import read_record
from leapgit.ledger.store import LedgerView
from leapgit.records.scoring import MergeRecord, RedRecord, ReopenRecord, ScoreRecord


def _numbers(view: LedgerView, folder: str) -> list[int]:
    names = (n.removesuffix(".yaml") for n in view.list(folder) if n.endswith(".yaml"))
    return sorted(int(n) for n in names if n.isdigit())


def reds(view: LedgerView, slice_id: str, ball_id: str) -> list[RedRecord]:
    folder = f"{layout.ball_dir(slice_id, ball_id)}/reds"
    out = []
    for n in _numbers(view, folder):
        raw = read_record(view, layout.red_path(slice_id, ball_id, n))
        if raw is not None:
            out.append(RedRecord.from_dict(raw))
    return out


def latest_red(view: LedgerView, slice_id: str, ball_id: str) -> RedRecord | None:
    found = reds(view, slice_id, ball_id)
    return found[-1] if found else None


def scores(view: LedgerView, slice_id: str, ball_id: str) -> list[ScoreRecord]:
    folder = f"{layout.ball_dir(slice_id, ball_id)}/scores"
    out = []
    for n in _numbers(view, folder):
        raw = read_record(view, layout.score_path(slice_id, ball_id, n))
        if raw is not None:
            out.append(ScoreRecord.from_dict(raw))
    return out


def reopens(view: LedgerView, slice_id: str, ball_id: str) -> list[ReopenRecord]:
    folder = f"{layout.ball_dir(slice_id, ball_id)}/reopens"
    out = []
    for n in _numbers(view, folder):
        raw = read_record(view, layout.reopen_path(slice_id, ball_id, n))
        if raw is not None:
            out.append(ReopenRecord.from_dict(raw))
    return out


def next_number(view: LedgerView, folder: str) -> int:
    found = _numbers(view, folder)
    return found[-1] + 1 if found else 1


def merge_record(view: LedgerView, slice_id: str) -> MergeRecord | None:
    raw = read_record(view, layout.merge_path(slice_id))
    return MergeRecord.from_dict(raw) if raw else None
