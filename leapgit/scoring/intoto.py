"""`leap audit --export in-toto`: each pass record as an in-toto v1 Statement (one JSON
object per line) whose subject is the ball's candidate tree and whose predicate is the
pass's provenance chain, so supply-chain tools can read it; each slice pass record (the
first merge and every re-merge after a reopen) as a Statement about the spine tip it
produced."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from leapgit.ledger import history, query
from leapgit.ledger.view import LedgerView
from leapgit.rules.passes import current_pass

STATEMENT = "https://in-toto.io/Statement/v1"
PASS_TYPE = "https://leapgit.dev/attestation/pass/v1"
MERGE_TYPE = "https://leapgit.dev/attestation/slice-merge/v1"


def statements(view: LedgerView, slice_id: str | None = None) -> Iterator[dict[str, Any]]:
    for sid in [slice_id] if slice_id else query.slice_ids(view):
        rec = query.load_slice(view, sid)
        for ball in rec.balls:
            passed = current_pass(view, sid, ball)
            if passed is None or passed.provenance is None:
                continue
            yield {"_type": STATEMENT,
                   "subject": [{"name": f"{sid}/{ball}",
                                "digest": {"gitTree": passed.candidate,
                                           "gitCommit": passed.commit}}],
                   "predicateType": PASS_TYPE,
                   "predicate": {"score": passed.score, "base": passed.base,
                                 "recorded_at": passed.recorded_at,
                                 **passed.provenance.to_dict()}}
        for merged in history.merge_records(view, sid):
            yield {"_type": STATEMENT,
                   "subject": [{"name": f"{merged.spine}@{sid}",
                                "digest": {"gitCommit": merged.tip}}],
                   "predicateType": MERGE_TYPE, "predicate": merged.to_dict()}
