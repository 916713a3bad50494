"""`leap audit [--json] [--export in-toto [--slice S]]`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from leapgit.audit.model import AuditReport
from leapgit.audit.run import audit as run_audit
from leapgit.audit.run import lines
from leapgit.ledger.query import load_slice
from leapgit.ledger.workspace import open_workspace
from leapgit.scoring.intoto import statements

__all__ = ["audit", "export_in_toto", "lines"]


def audit(start: Path | str = ".", require_signatures: bool = False,
          keep: list[object] | None = None) -> AuditReport:
    return run_audit(open_workspace(start), require_signatures, keep)


def export_in_toto(slice_id: str | None = None, start: Path | str = ".") -> Iterator[str]:
    ws = open_workspace(start)
    with ws.ledger() as ledger:
        view = ledger.require()
        if slice_id:
            load_slice(view, slice_id)
        found = [json.dumps(s, sort_keys=True) for s in statements(view, slice_id)]
    yield from found
