"""`leap audit-signatures`: verify every signature in the ledger history and every spine
merge against the policy in force when it was made (``signing.audit``). Unsigned records
are reported and pass, unless ``--require-signatures``; any other finding fails."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leapgit import git
from leapgit.audit.shallow import require_spine, require_whole
from leapgit.audit.signatures import SignatureFinding, audit_signatures
from leapgit.ledger.workspace import open_workspace


@dataclass(frozen=True)
class SignatureAudit:
    findings: tuple[SignatureFinding, ...]
    require: bool

    @property
    def failed(self) -> tuple[SignatureFinding, ...]:
        return tuple(f for f in self.findings
                     if not f.ok and (self.require or not f.unsigned))

    def count(self, kind: str) -> int:
        return sum(1 for f in self.findings if f.kind == kind)

    def to_json(self) -> dict[str, Any]:
        return {"require_signatures": self.require, "passed": not self.failed,
                "findings": [f.to_json() for f in self.findings]}


def audit_signatures_command(start: Path | str = ".", require: bool = False) -> SignatureAudit:
    ws = open_workspace(start)
    with git.as_is(), ws.ledger() as ledger:  # read-only, commits as they are
        view = ledger.require()
        spine = f"refs/heads/{ws.config.spine}"
        spine_tip = git.rev_parse(spine, ws.paths.root)
        require_spine(ws.paths.root, spine, spine_tip)
        require_whole(ws.paths.root, ws.paths.common_dir,
                      {ws.config.ledger_ref: view.commit, spine: spine_tip})
        found = audit_signatures(ledger.repo, ws.config)
    return SignatureAudit(tuple(found), require or ws.config.signing_required)
