"""T2, L7 (5): the convening as committed provenance. Envelope, routing, every verdict and
the summary go to the ledger as one record set in one commit, with trailers naming run id,
round, outcome and candidate; earlier rounds of the same series are read back for T7."""

from __future__ import annotations

from leapgit.ledger import layout
from leapgit.ledger.store import Ledger, LedgerView, Written
from leapgit.records import trailers as tr
from leapgit.records.tribunal_run import SummaryRecord
from leapgit.tribunal.convergence import PastRound
from leapgit.tribunal.ledger_records import RunInfo


def commit(ledger: Ledger, info: RunInfo, files: dict[str, bytes], outcome: str) -> Written:
    """``files``: ledger path -> the bytes of a record, validated when it was made."""
    trailers = [(tr.RUN, info.run_id), (tr.ROUND, str(info.round)),
                (tr.OUTCOME, outcome), (tr.CANDIDATE, info.candidate),
                (tr.ENVELOPE, info.envelope_hash)]
    if info.slice:
        trailers.append((tr.SLICE, info.slice))
    if info.ball:
        trailers.append((tr.BALL, info.ball))
    subject = f"tribunal {info.run_id} round {info.round}: {outcome}"
    return ledger.append(files, subject, trailers)


def _series_root(slice_id: str | None, ball_id: str | None) -> str:
    return layout.tribunal_dir("x", slice_id, ball_id).rsplit("/", 1)[0]


def next_round(view: LedgerView, series: str, slice_id: str | None, ball_id: str | None,
               tree: str | None = None) -> int:
    """The round a new convening of ``series`` is: one past the last whose summary was
    written (a convening killed before its summary never happened, T2), so each scoring of
    a ball is the next round of its series and T9's convergence runs across scorings. A
    convening of the ``tree`` the last round held on, every time it sat (a seat out of
    reach, T6), is that round sat again: no builder's work came between them, so T9
    measures no round (a walk-away hunt: two re-sits for one seat answering HTTP 500
    counted as two rounds, their NEW findings 7, then 0, and a ball escalated after two
    builder rounds)."""
    found = _summaries(view, series, slice_id, ball_id)
    top = max((s.round for s in found), default=0)
    sittings = [s for s in found if s.round == top]  # the last round, each time it sat
    if sittings and all(s.tree == tree and s.outcome == "hold" and not (s.escalated or s.halted)
                        for s in sittings):
        return top
    past = past_rounds(view, series, 1 << 30, slice_id, ball_id)
    return past[-1].round + 1 if past else 1


def _summaries(view: LedgerView, series: str, slice_id: str | None, ball_id: str | None
               ) -> list[SummaryRecord]:
    root = _series_root(slice_id, ball_id)
    found = (view.record(f"{root}/{run}/summary.yaml", SummaryRecord) for run in view.list(root))
    return [s for s in found if s is not None and s.series == series]


def past_rounds(view: LedgerView, series: str, round_no: int, slice_id: str | None,
                ball_id: str | None) -> list[PastRound]:
    """The latest summary of every earlier round of ``series``."""
    latest: dict[int, tuple[str, PastRound]] = {}
    for found in _summaries(view, series, slice_id, ball_id):
        if found.round >= round_no:
            continue
        if not found.halted and found.lenses and \
                all(lens.outcome == "hold" for lens in found.lenses):
            continue  # no juror gave a verdict: the round measured no findings (T9)
        past = PastRound(found.round, frozenset(f.fingerprint for f in found.findings),
                         found.new_count)
        if found.round not in latest or latest[found.round][0] < found.recorded_at:
            latest[found.round] = (found.recorded_at, past)
    return [latest[r][1] for r in sorted(latest)]
