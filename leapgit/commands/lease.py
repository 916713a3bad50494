"""`leap lease release [--holder NAME]` (L9): give back an integrator lease whose merge died.

`leap merge` takes the spine's one lease and gives it back when it ends, whatever the end.
Only a merge killed outright (SIGKILL, power loss) leaves it open; then no merge can take
it, the holder's own included. The holder gives it back here, unless a stopped merge waits
in ``.git/leap-merging/``: that one is finished by `leap merge` again, which releases it."""

from __future__ import annotations

import shlex
from pathlib import Path

from leapgit.errors import RuleViolation
from leapgit.ledger import leases
from leapgit.ledger.workspace import open_workspace
from leapgit.records.types import INTEGRATOR
from leapgit.scoring.merge import merge_running, stopped_merge, taken_here


def release(holder: str = INTEGRATOR, reason: str | None = None,
            start: Path | str = ".", force: bool = False) -> leases.Lease:
    """Give back the open lease. Refused while a merge of this clone runs or waits, and for
    a lease another clone's merge took (a walk-away hunt: a clone released another
    machine's live lease, two integrators merged at once, and the first was stuck), unless
    ``force``: that clone is gone for good."""
    ws = open_workspace(start)
    waiting = stopped_merge(ws)
    if waiting is not None:
        path, slice_id = waiting
        raise RuleViolation(
            f"a stopped merge waits in {path}: its lease is given back when it ends",
            rule=leases.RULE, hint=f"run `leap merge {slice_id}` again to finish it")
    if merge_running(ws):
        raise RuleViolation("a merge of this clone runs now: its lease is its own, given "
                            "back when it ends", rule=leases.RULE,
                            hint="let it end (Ctrl-C stops it and gives the lease back)")
    with ws.ledger() as ledger:
        active = leases.active_lease(ledger.require(), ws.config.spine)
        said = active.take.reason if active is not None and active.take is not None else None
        if active is not None and active.holder == holder and not force and \
                taken_here(ws, said) is False:
            raise RuleViolation(
                f"lease {active.number} on {ws.config.spine!r} was taken by a {said}: "
                "another clone's merge, which may still run", rule=leases.RULE,
                hint="it gives its lease back when it ends; if that clone is gone for good, "
                     f"`leap lease release --holder {shlex.quote(holder)} --force` gives it "
                     "back here")
        return leases.release_lease(ledger, ws.config.spine, holder,
                                    reason or "given back by hand: its merge died")
