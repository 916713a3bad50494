"""Each record is written to the output folder the moment it exists (0600, T6) and kept for
the one ledger commit at the end (the same bytes: rendered once)."""

from __future__ import annotations

from typing import Any

from leapgit.ledger import layout
from leapgit.ledger.store import Ledger, Written
from leapgit.records import schema, yamlio
from leapgit.tribunal import provenance
from leapgit.tribunal.outdir import OutDir
from leapgit.tribunal.records import RunInfo


class Recorder:
    def __init__(self, out: OutDir, info: RunInfo) -> None:
        self.out = out
        self.info = info
        self.records: dict[str, dict[str, Any]] = {}
        self.dumped: dict[str, bytes] = {}

    def put(self, name: str, record: dict[str, Any]) -> None:
        """Raises InvalidRecord, writing nothing, for a record the ledger would refuse: it
        fails where it is made, not at the commit after the decision."""
        path = layout.path_for(record)
        schema.validate_record(record, path)
        data = yamlio.dumps(record)
        self.out.write(name, data)
        self.records[path] = record  # a later put (an annulled verdict) replaces the earlier
        self.dumped[path] = data

    def commit(self, ledger: Ledger, outcome: str) -> Written:
        return provenance.commit(ledger, self.info, list(self.records.values()), outcome,
                                 self.dumped)
