"""`leap lease release [--holder NAME]` (L9): give back an integrator lease whose merge died.

`leap merge` takes the spine's one lease and gives it back when it ends, whatever the end.
Only a merge killed outright (SIGKILL, power loss) leaves it open; then no merge can take
it, the holder's own included. The holder gives it back here, unless a stopped merge waits
in ``.git/leap-merging/``: that one is finished by `leap merge` again, which releases it."""

from __future__ import annotations

from pathlib import Path

from leapgit.errors import RuleViolation
from leapgit.ledger import leases
from leapgit.ledger.workspace import open_workspace
from leapgit.records.types import INTEGRATOR


def release(holder: str = INTEGRATOR, reason: str | None = None,
            start: Path | str = ".") -> leases.Lease:
    ws = open_workspace(start)
    waiting = sorted((ws.paths.common_dir / "leap-merging").glob("*"))
    if waiting:
        raise RuleViolation(
            f"a stopped merge waits in {waiting[0]}: its lease is given back when it ends",
            rule=leases.RULE, hint=f"run `leap merge {waiting[0].stem}` again to finish it")
    with ws.ledger() as ledger:
        return leases.release_lease(ledger, ws.config.spine, holder,
                                    reason or "given back by hand: its merge died")
