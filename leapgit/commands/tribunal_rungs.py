"""`leap tribunal rungs [--probe] [--json]` (issue 17): the rung matrix as routing sees it
now; with ``--probe``, one canary call per rung first, recorded on the ledger."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from leapgit.ledger.workspace import open_workspace
from leapgit.records.probe import ProbeRecord
from leapgit.tribunal import probe
from leapgit.tribunal.identity import parse_builder
from leapgit.tribunal.rungs_view import Matrix, matrix


@dataclass(frozen=True)
class RungsResult:
    matrix: Matrix
    probed: ProbeRecord | None = None
    not_probed: dict[str, str] = field(default_factory=dict)
    commit: str | None = None


def rungs_command(*, run_probe: bool = False, builder: str | None = None,
                  start: Path | str = ".") -> RungsResult:
    ws = open_workspace(start)
    cfg = ws.config.tribunal
    declared = builder or ws.config.builder_identity
    who = parse_builder(declared) if declared else None
    with ws.ledger() as ledger:
        view = ledger.require()
        probed, commit = None, None
        skipped: dict[str, str] = {}
        if run_probe and cfg.rungs:
            probed, skipped = probe.run(cfg, os.environ)
            if probed.rungs:
                commit = probe.write(ledger, probed)
                view = ledger.require()
        found = matrix(cfg, who, os.environ, probe.latest(view, cfg.rungs))
    return RungsResult(found, probed, skipped, commit)
