"""The integrator lease (L9: one write spine, one writer).

A lease on a spine is two records: ``spines/<spine>/leases/<n>/take.yaml`` and, when the
integrator is done, ``.../<n>/release.yaml``. Leases are numbered 1, 2, 3 ... and at most
one is open at a time. ``lease_problems`` is the one statement of that invariant: the
domain functions below check it before they write, and the server's ``pre-receive``
checks it on every pushed ledger commit that touches a lease.
"""

from __future__ import annotations

import bisect
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from leapgit.errors import Hold, LedgerConflict, RuleViolation
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


def lease_problems(view: LedgerView, spine: str, number: int | None = None
                   ) -> list[tuple[str, str]]:
    """(path, what is wrong) for every break of the lease invariant on ``spine``;
    ``number``: of lease ``number`` and the one before it only, what a ledger commit adding
    a record of that lease can break (every lease before them was judged as it landed).
    The server asks so, once a lease record: reading every lease for each cost a push of
    10^4 lease commits minutes and gigabytes (each commit's view kept every lease read)."""
    problems: list[tuple[str, str]] = []
    numbers = sorted(int(n) for n in view.list(layout.leases_dir(spine)) if n.isdigit())
    first = 0 if number is None else max(0, bisect.bisect_left(numbers, number) - 1)
    picked = numbers if number is None else numbers[first:first + 2]
    all_leases = [Lease(spine, n, _read(view, spine, n, "take"),
                        _read(view, spine, n, "release")) for n in picked]
    for expected, lease in enumerate(all_leases, start=first + 1):
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


class LeaseHeld(Hold):
    """Another integrator holds the spine's lease now: wait for its release."""

    lease: Lease


def held_by(current: Lease, spine: str, again: str, remote: str | None = None) -> LeaseHeld:
    said = f": {current.take.reason}" if current.take and current.take.reason else ""
    # a take its merge pushed and died before recording here is known there only after a
    # sync: the sync comes first (a hunt: the release, followed first, found no lease)
    first = f"`leap sync {shlex.quote(remote)}`, then " if remote else ""
    share = f" and `leap sync {shlex.quote(remote)}`, in its clone" if remote else ""
    held = LeaseHeld(f"spine {spine!r} is leased to {current.holder!r} (lease "
                     f"{current.number}{said}): one integrator at a time, nothing landed",
                     file=layout.lease_path(spine, current.number, "take"), rule=RULE,
                     hint=f"{again} again once it is given back (its holder gives back a "
                          f"lease whose merge died with {first}`leap lease release --holder "
                          f"{shlex.quote(current.holder)}`"
                          f"{share})")
    held.lease = current
    return held


def next_take(view: LedgerView, spine: str, holder: str, reason: str | None = None,
              again: str = "run the merge", remote: str | None = None
              ) -> tuple[Lease, dict[str, bytes], str, list[tuple[str, str]]]:
    """The next lease on ``spine`` for ``holder`` as records to write (the lease, its
    records, their commit's subject and trailers); a ``LeaseHeld`` while another is open."""
    current = active_lease(view, spine)
    if current is not None:
        raise held_by(current, spine, again, remote)
    number = len(leases(view, spine)) + 1
    record = LeaseRecord(spine, number, "take", holder, now_iso(), reason)
    return (Lease(spine, number, record, None),
            {layout.lease_path(spine, number, "take"): yamlio.dumps(record.to_dict())},
            f"lease {number} on {spine}: taken by {holder}",
            [(tr.SPINE, spine), (tr.LEASE, str(number))])


def take_lease(ledger: Ledger, spine: str, holder: str, reason: str | None = None) -> Lease:
    """Open the next lease on ``spine`` for ``holder`` in this ledger (a spine with no
    remote); refuse while another is open. With a remote, ``take_lease_on`` takes it."""
    lease, records, subject, trailers = next_take(ledger.require(), spine, holder, reason)
    try:
        ledger.append(records, subject, trailers)
    except LedgerConflict:
        raise RuleViolation(f"another integrator took lease {lease.number} on {spine!r} first",
                            file=next(iter(records)), rule=RULE,
                            hint="wait for its release") from None
    return lease


def take_lease_on(remote: str, start: Path, spine: str, holder: str, reason: str,
                  again: str, ready: Callable[[Ledger], None] = lambda _: None,
                  attempts: int = 5) -> Lease:
    """L9 with a shared remote: the lease is decided by the remote's compare-and-swap, never
    by a write here that another clone cannot see (two clones each taking lease N stopped
    every later sync on "a true conflict"). Each try syncs first (this clone's records up,
    the remote's down), lets ``ready`` tidy the view (a lease left by a killed merge), and
    then asks the remote for the next number; a lost race looks again. ``again``: the
    command a ``LeaseHeld`` names."""
    from leapgit.ledger.sync import push_records, sync
    from leapgit.ledger.workspace import open_workspace

    ws = open_workspace(start)
    for _ in range(attempts):
        sync(remote, start=start)
        with ws.ledger() as ledger:
            ready(ledger)
            view = ledger.require()
            lease, records, subject, trailers = next_take(view, spine, holder, reason, again,
                                                          remote)
        try:
            push_records(remote, records, subject, trailers, start=start)
        except LedgerConflict:
            continue  # another integrator took that number first: look again
        except RuleViolation as exc:
            if "a second concurrent integrator lease" in " ".join(exc.lines()):
                continue  # taken there since this look: the next names its holder
            raise
        return lease
    raise Hold(f"the integrator lease on {spine!r} kept moving on {remote}", rule=RULE,
               hint=f"{again} again")


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


def lost_leases(here: LedgerView, there: LedgerView, spine: str
                ) -> tuple[list[str], Lease | None]:
    """The records of this clone's leases on ``spine`` that lost their number to a lease
    the remote took first (an older leapgit took a merge's lease here alone): the paths a
    sync leaves out so this ledger can follow the remote's, and the lease of them still
    open here (its holder gives it back first: `leap lease release`). Only leases with no
    merge recorded under them are lost this way: they carry no work (their commits stay in
    git's reflog); under a merge, the spine itself parted and no path is returned."""
    theirs = {lease.number: lease.take for lease in leases(there, spine)}
    lost = [lease for lease in leases(here, spine)
            if lease.take is not None and theirs.get(lease.number, None) != lease.take]
    if not lost or theirs.get(lost[0].number) is None:
        return [], None  # no lease of the remote's took that number: nothing was lost to it
    from leapgit.ledger import history, query

    numbers = {lease.number for lease in lost}
    for slice_id in query.slice_ids(here) if numbers else ():
        if any(m.spine == spine and m.lease in numbers
               for m in history.merge_records(here, slice_id)):
            return [], None
    still = next((lease for lease in lost if lease.open), None)
    return [layout.lease_path(spine, lease.number, action) for lease in lost
            for action in ("take", "release")], still
