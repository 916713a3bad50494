"""The integrator lease (L9: one write spine, one writer).

A lease on a spine is two records: ``spines/<spine>/leases/<n>/take.yaml`` and, when the
integrator is done, ``.../<n>/release.yaml``. Leases are numbered 1, 2, 3 ... and at most
one is open at a time. ``lease_problems`` is the one statement of that invariant: the
domain functions below check it before they write, and the server's ``pre-receive``
checks it on every pushed ledger commit that touches a lease.
"""

from __future__ import annotations

from dataclasses import dataclass

from leapgit.errors import LedgerConflict, RuleViolation
from leapgit.ledger import layout
from leapgit.ledger.store import Ledger, LedgerView
from leapgit.records import trailers as tr
from leapgit.records import yamlio
from leapgit.records.leases import LeaseRecord
from leapgit.timeutil import now_iso

RULE = "L9"


@dataclass(frozen=True)
class Lease:
    spine: str
    number: int
    take: LeaseRecord | None
    release: LeaseRecord | None

    @property
    def holder(self) -> str:
        return self.take.holder if self.take else ""

    @property
    def open(self) -> bool:
        return self.take is not None and self.release is None


def _read(view: LedgerView, spine: str, number: int, action: str) -> LeaseRecord | None:
    return view.record(layout.lease_path(spine, number, action), LeaseRecord)


def leases(view: LedgerView, spine: str) -> list[Lease]:
    names = view.list(layout.leases_dir(spine))
    numbers = sorted(int(n) for n in names if n.isdigit())
    return [Lease(spine, n, _read(view, spine, n, "take"), _read(view, spine, n, "release"))
            for n in numbers]


def active_lease(view: LedgerView, spine: str) -> Lease | None:
    found = [lease for lease in leases(view, spine) if lease.open]
    return found[-1] if found else None


def lease_problems(view: LedgerView, spine: str) -> list[tuple[str, str]]:
    """(path, what is wrong) for every break of the lease invariant on ``spine``."""
    problems: list[tuple[str, str]] = []
    all_leases = leases(view, spine)
    for expected, lease in enumerate(all_leases, start=1):
        take_path = layout.lease_path(spine, lease.number, "take")
        if lease.number != expected:
            problems.append((take_path, (f"lease {lease.number} skips lease {expected}; "
                                         "leases are numbered without gaps")))
        if lease.take is None:
            problems.append((layout.lease_path(spine, lease.number, "release"),
                             f"releases lease {lease.number}, which was never taken"))
        elif lease.release is not None and lease.release.holder != lease.take.holder:
            problems.append((layout.lease_path(spine, lease.number, "release"),
                             (f"released by {lease.release.holder!r}, but lease "
                              f"{lease.number} is held by {lease.take.holder!r}")))
    open_leases = [lease for lease in all_leases if lease.open]
    for lease in open_leases[:-1]:
        later = open_leases[-1]
        problems.append((layout.lease_path(spine, later.number, "take"),
                         (f"a second concurrent integrator lease: lease {lease.number} "
                          f"({lease.holder}) is still open")))
    return problems


def take_lease(ledger: Ledger, spine: str, holder: str, reason: str | None = None) -> Lease:
    """Open the next lease on ``spine`` for ``holder``; refuse while another is open."""
    view = ledger.require()
    current = active_lease(view, spine)
    if current is not None:
        raise RuleViolation(
            f"spine {spine!r} is leased to {current.holder!r} (lease {current.number})",
            file=layout.lease_path(spine, current.number, "take"), rule=RULE,
            hint="one integrator at a time: wait for the release (its holder gives back a "
                 "lease whose merge died with `leap lease release --holder NAME`)",
        )
    number = len(leases(view, spine)) + 1
    record = LeaseRecord(spine, number, "take", holder, now_iso(), reason)
    path = layout.lease_path(spine, number, "take")
    try:
        ledger.append({path: yamlio.dumps(record.to_dict())}, f"lease {number} on {spine}: "
                      f"taken by {holder}", [(tr.SPINE, spine), (tr.LEASE, str(number))])
    except LedgerConflict:
        raise RuleViolation(f"another integrator took lease {number} on {spine!r} first",
                            file=path, rule=RULE, hint="wait for its release") from None
    return Lease(spine, number, record, None)


def release_lease(ledger: Ledger, spine: str, holder: str, reason: str | None = None) -> Lease:
    view = ledger.require()
    current = active_lease(view, spine)
    if current is None:
        raise RuleViolation(f"no open lease on spine {spine!r}", rule=RULE)
    if current.holder != holder:
        raise RuleViolation(
            f"lease {current.number} on {spine!r} is held by {current.holder!r}, not {holder!r}",
            file=layout.lease_path(spine, current.number, "take"), rule=RULE,
            hint="only the holder releases its lease",
        )
    record = LeaseRecord(spine, current.number, "release", holder, now_iso(), reason)
    path = layout.lease_path(spine, current.number, "release")
    ledger.append({path: yamlio.dumps(record.to_dict())},
                  f"lease {current.number} on {spine}: released by {holder}",
                  [(tr.SPINE, spine), (tr.LEASE, str(current.number))])
    return Lease(spine, current.number, current.take, record)
