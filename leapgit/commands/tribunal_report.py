"""`leap tribunal report [--json]` (issue 17 item 3): the jurors' independence, measured from
every verdict the ledger holds (through the record cache: each is parsed once)."""

from __future__ import annotations

from pathlib import Path

from leapgit.ledger.workspace import open_workspace
from leapgit.tribunal import independence
from leapgit.tribunal.independence_view import Report, build


def report_command(start: Path | str = ".") -> Report:
    ws = open_workspace(start)
    with ws.ledger(cache_records=True) as ledger:
        return build(independence.history(ledger.require()))
