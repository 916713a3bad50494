"""Reading the scoring records of a ball back from a ledger view (validated on every read:
the ledger is data anyone can push to). Numbered records are read in number order."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from leapgit.ledger import layout

if TYPE_CHECKING:  # imported where read: the post-commit hook mostly finds no such record
    from leapgit.ledger.view import LedgerView
    from leapgit.records.kinds import Loadable
    from leapgit.records.live import LiveProofRecord
    from leapgit.records.scoring import MergeRecord, RedRecord, ReopenRecord, ScoreRecord
    from leapgit.records.usage import Usage

T = TypeVar("T", bound="Loadable")


def _numbers(view: LedgerView, folder: str) -> list[int]:
    names = (n.removesuffix(".yaml") for n in view.list(folder) if n.endswith(".yaml"))
    return sorted(int(n) for n in names if n.isdigit())


def _numbered(view: LedgerView, slice_id: str, ball_id: str, folder: str,
              path: Callable[[str, str, int], str], record_type: type[T]) -> list[T]:
    """The records of one numbered folder of a ball (reds, scores, reopens), in order."""
    out = []
    for n in _numbers(view, f"{layout.ball_dir(slice_id, ball_id)}/{folder}"):
        rec = view.record(path(slice_id, ball_id, n), record_type)
        if rec is not None:
            out.append(rec)
    return out


def has(view: LedgerView, slice_id: str, ball_id: str, folder: str) -> bool:
    """Whether the ball holds any record in a numbered folder (reds, scores, reopens)."""
    return bool(_numbers(view, f"{layout.ball_dir(slice_id, ball_id)}/{folder}"))


def reds(view: LedgerView, slice_id: str, ball_id: str) -> list[RedRecord]:
    """The reds that count, in order (T7.1): a red recorded before the ball's first round
    replaces the reds before it (``replaces``), so the newest red before the first round
    is the first that counts; a red after that only adds to the frozen set."""
    return _contract(_all_reds(view, slice_id, ball_id))


def _all_reds(view: LedgerView, slice_id: str, ball_id: str) -> list[RedRecord]:
    from leapgit.records.scoring import RedRecord

    return _numbered(view, slice_id, ball_id, "reds", layout.red_path, RedRecord)


def _contract(found: list[RedRecord]) -> list[RedRecord]:
    contract = [r for r in found if not r.finding]  # a finding's red replaces nothing
    replaced = max((r.replaces for r in contract if r.replaces is not None), default=0)
    return [r for r in contract if r.red > replaced]


def finding_reds(view: LedgerView, slice_id: str, ball_id: str, episode: int
                 ) -> list[RedRecord]:
    """T7.6: the reds the test author added for the tribunal's findings in ``episode``."""
    if not has(view, slice_id, ball_id, "reds"):
        return []
    return [r for r in _all_reds(view, slice_id, ball_id)
            if r.finding and r.episode == episode]


def reds_of_episodes(view: LedgerView, slice_id: str, ball_id: str, episodes: set[int]
                     ) -> list[RedRecord]:
    """The contract reds (``reds``), then the finding reds (T7.6) recorded in any of
    ``episodes``. Which episodes hold for a round is a rule's question:
    ``rules.episodes.episode_reds``. One read of the folder: the post-commit hook asks it
    on every round."""
    if not has(view, slice_id, ball_id, "reds"):
        return []
    found = _all_reds(view, slice_id, ball_id)
    return _contract(found) + [r for r in found if r.finding and r.episode in episodes]


def finding_episodes(view: LedgerView, slice_id: str, ball_id: str) -> set[int]:
    """The episodes some finding's red was recorded in (none read when no red is)."""
    if not has(view, slice_id, ball_id, "reds"):
        return set()
    return {r.episode for r in _all_reds(view, slice_id, ball_id)
            if r.finding and r.episode is not None}


def latest_red(view: LedgerView, slice_id: str, ball_id: str) -> RedRecord | None:
    found = reds(view, slice_id, ball_id) if has(view, slice_id, ball_id, "reds") else []
    return found[-1] if found else None


def scores(view: LedgerView, slice_id: str, ball_id: str) -> list[ScoreRecord]:
    from leapgit.records.scoring import ScoreRecord

    return _numbered(view, slice_id, ball_id, "scores", layout.score_path, ScoreRecord)


def graded_last(view: LedgerView, slice_id: str, ball_id: str, episode: int, rounds: int
                ) -> ScoreRecord | None:
    """The ball's latest score when it grades round ``rounds`` of ``episode``, the last one
    recorded: what ends an episode by its score (a -1 refuses it, a 0 on the last round the
    limit allows holds it). None when the ball has no score, or its latest grades another
    round (a later round makes an earlier score history)."""
    if not has(view, slice_id, ball_id, "scores"):
        return None
    latest = scores(view, slice_id, ball_id)[-1]
    return latest if (latest.episode, latest.rounds) == (episode, rounds) else None


def reopens(view: LedgerView, slice_id: str, ball_id: str) -> list[ReopenRecord]:
    from leapgit.records.scoring import ReopenRecord

    return _numbered(view, slice_id, ball_id, "reopens", layout.reopen_path, ReopenRecord)


def next_number(view: LedgerView, folder: str) -> int:
    found = _numbers(view, folder)
    return found[-1] + 1 if found else 1


def live_proofs(view: LedgerView, slice_id: str, merge: int) -> list[LiveProofRecord]:
    """The live proofs of the slice's merge ``merge``, attempt by attempt (T9: a failed one
    is tried again, as the next attempt, once a fix landed on the spine)."""
    from leapgit.records.live import LiveProofRecord

    out: list[LiveProofRecord] = []
    while True:
        rec = view.record(layout.live_path(slice_id, merge, len(out) + 1), LiveProofRecord)
        if rec is None:
            return out
        out.append(rec)


def merge_records(view: LedgerView, slice_id: str) -> list[MergeRecord]:
    """The slice's merge records in number order: ``merge.yaml`` (1), then every re-merge
    after a reopen (``merges/<n>.yaml``, L8)."""
    numbers = [1, *(n for n in _numbers(view, f"{layout.slice_dir(slice_id)}/merges") if n > 1)]
    if numbers == [1] and not view.exists(layout.merge_path(slice_id, 1)):
        return []  # never merged: nothing to build (`leap status` imports no scoring record)
    from leapgit.records.scoring import MergeRecord

    out = []
    for n in numbers:
        rec = view.record(layout.merge_path(slice_id, n), MergeRecord)
        if rec is not None:
            out.append(rec)
    return out


def latest_merge(view: LedgerView, slice_id: str) -> MergeRecord | None:
    found = merge_records(view, slice_id)
    return found[-1] if found else None


def merged_scores(records: list[MergeRecord]) -> dict[str, set[int]]:
    """ball -> the pass records (score numbers) that landed on the spine."""
    out: dict[str, set[int]] = {}
    for rec in records:
        for m in rec.merges:
            out.setdefault(m.ball, set()).add(m.score)
    return out


def run_usage(view: LedgerView, slice_id: str, ball_id: str, run_id: str) -> Usage | None:
    """What a ball's tribunal run cost, as its summary sums every verdict (issue 15 item 9);
    None when the run wrote no summary or recorded no usage."""
    from leapgit.records.tribunal_run import SummaryRecord

    path = f"{layout.tribunal_dir(run_id, slice_id, ball_id)}/summary.yaml"
    summary = view.record(path, SummaryRecord) if view.exists(path) else None
    return summary.usage if summary is not None else None


def _runs_spent(view: LedgerView, folder: str) -> Usage | None:
    """Every tribunal run recorded under ``folder`` (``.../tribunal``), as its summary sums
    its verdicts; a summary written before usage was recorded spent an unknown amount. A run
    without a summary, the verdicts a killed convening left (``tribunal.left``), spent what
    they say."""
    from leapgit.records.tribunal_run import SummaryRecord, VerdictRecord
    from leapgit.records.usage import UNMEASURED, total

    found: list[Usage | None] = []
    for run in view.list(folder):
        summary = view.record(f"{folder}/{run}/summary.yaml", SummaryRecord)
        if summary is not None:
            found.append(summary.usage if summary.usage is not None else UNMEASURED)
            continue
        for name in view.list(f"{folder}/{run}/verdicts"):  # summed as a summary sums them:
            verdict = view.record(f"{folder}/{run}/verdicts/{name}", VerdictRecord)
            if verdict is not None:  # a seat no call of answered spent nothing
                found.append(verdict.usage)
    return total(found)


def ball_spent(view: LedgerView, slice_id: str, ball_id: str) -> Usage:
    """Issue 15 item 9: every convening of the ball's tribunal, each episode, pass or not
    (money spent on a refused round is spent; so is a run whose scoring was killed before
    its score record), summed; ``usd`` None when any part's cost is unknown."""
    from leapgit.records.usage import NOTHING

    return _runs_spent(view, f"{layout.ball_dir(slice_id, ball_id)}/tribunal") or NOTHING


def spent(view: LedgerView, slice_id: str) -> Usage:
    """Every ball's spend (``ball_spent``) and each merge's aggregate review (L8), summed:
    what `run.max_usd` caps."""
    from leapgit.records.tribunal_run import SummaryRecord
    from leapgit.records.usage import NOTHING, UNMEASURED, total

    folder = f"{layout.slice_dir(slice_id)}/balls"
    balls = [name for name in view.list(folder) if not name.endswith(".yaml")]
    # every aggregate review of the slice, whatever it said (under the slice), and those of
    # merges recorded before the slice kept them (``tribunal/<run>``)
    mine = f"{layout.slice_dir(slice_id)}/tribunal"
    reviews = [_runs_spent(view, mine) or NOTHING]
    for merged in (merge_records(view, slice_id) if view.exists(layout.merge_path(slice_id))
                   else []):
        path = f"{layout.tribunal_dir(merged.aggregate_run)}/summary.yaml"
        summary = view.record(path, SummaryRecord) if view.exists(path) else None
        if summary is not None:
            reviews.append(summary.usage if summary.usage is not None else UNMEASURED)
    return total([*(ball_spent(view, slice_id, b) for b in balls), *reviews]) or NOTHING
