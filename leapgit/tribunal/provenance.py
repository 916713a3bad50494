"""T2, L7 (5): the convening as committed provenance. Envelope, routing, every verdict and
the summary go to the ledger as one record set in one commit, with trailers naming run id,
round, outcome and candidate; earlier rounds of the same series are read back for T7."""

from __future__ import annotations

from typing import Any

from leapgit.ledger import layout
from leapgit.ledger.query import read_record
from leapgit.ledger.store import Ledger, LedgerView, Written
from leapgit.records import schema, yamlio
from leapgit.tribunal.convergence import PastRound
from leapgit.tribunal.records import RunInfo


def record_set(records: list[dict[str, Any]], dumped: dict[str, bytes]) -> dict[str, bytes]:
    """path -> bytes; ``dumped`` holds bytes already rendered for the output folder."""
    files: dict[str, bytes] = {}
    for record in records:
        path = layout.path_for(record)
        schema.validate_record(record, path)  # what we write, pre-receive will read
        files[path] = dumped.get(path) or yamlio.dumps(record)
    return files


def commit(ledger: Ledger, info: RunInfo, records: list[dict[str, Any]], outcome: str,
           dumped: dict[str, bytes]) -> Written:
    trailers = [("Leap-Run", info.run_id), ("Leap-Round", str(info.round)),
                ("Leap-Outcome", outcome), ("Leap-Candidate", info.candidate),
                ("Leap-Envelope", info.envelope_hash)]
    if info.slice:
        trailers.append(("Leap-Slice", info.slice))
    if info.ball:
        trailers.append(("Leap-Ball", info.ball))
    subject = f"tribunal {info.run_id} round {info.round}: {outcome}"
    return ledger.append(record_set(records, dumped), subject, trailers)


def _series_root(slice_id: str | None, ball_id: str | None) -> str:
    return layout.tribunal_dir("x", slice_id, ball_id).rsplit("/", 1)[0]


def past_rounds(view: LedgerView, series: str, round_no: int, slice_id: str | None,
                ball_id: str | None) -> list[PastRound]:
    """The latest summary of every earlier round of ``series``."""
    root = _series_root(slice_id, ball_id)
    latest: dict[int, tuple[str, PastRound]] = {}
    for run in view.list(root):
        raw = read_record(view, f"{root}/{run}/summary.yaml")
        if raw is None or raw.get("series") != series or raw["round"] >= round_no:
            continue
        past = PastRound(raw["round"], frozenset(f["fingerprint"] for f in raw["findings"]),
                         raw["new_count"])
        if raw["round"] not in latest or latest[raw["round"]][0] < raw["recorded_at"]:
            latest[raw["round"]] = (raw["recorded_at"], past)
    return [latest[r][1] for r in sorted(latest)]
