"""Each record is written to the output folder the moment it exists (0600, T6) and kept for
the one ledger commit at the end (the same bytes: rendered once)."""

from __future__ import annotations

from leapgit.ledger import layout
from leapgit.ledger.store import Ledger, Written
from leapgit.records import schema, yamlio
from leapgit.records.tribunal_run import TribunalRecord
from leapgit.tribunal import provenance
from leapgit.tribunal.ledger_records import RunInfo
from leapgit.tribunal.outdir import OutDir


class Recorder:
    def __init__(self, out: OutDir, info: RunInfo) -> None:
        self.out = out
        self.info = info
        self.files: dict[str, bytes] = {}  # ledger path -> the bytes written there

    def put(self, name: str, record: TribunalRecord) -> None:
        """Raises InvalidRecord, writing nothing, for a record the ledger would refuse: it
        fails where it is made, not at the commit after the decision."""
        raw = record.to_dict()
        path = layout.path_for(raw)
        schema.validate_record(raw, path)  # what we write, pre-receive will read
        data = yamlio.dumps(raw)
        self.out.write(name, data)
        self.files[path] = data  # a later put (an annulled verdict) replaces the earlier

    def commit(self, ledger: Ledger, outcome: str) -> Written:
        return provenance.commit(ledger, self.info, self.files, outcome)
