"""Run leases (L3: one driver; issue 15 item 7): one `leap run` drives a slice at a time,
across every clone that shares its ledger, judged in one place.

Run lease ``n`` of a slice is ``runs/<n>/take.yaml`` and, once the run ends,
``runs/<n>/release.yaml``; a later take that ``takes_over: n`` closes it too (its run was
gone). Like the integrator's lease it has no clock: it is open until closed. ``run_problems``
says what is wrong with a run record in the ledger it lands in; the run (``loop.lease``)
asks it before it writes, ``pre-receive`` and the audit on every pushed run record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from leapgit.ledger import layout
from leapgit.records.runs import RunLeaseRecord

if TYPE_CHECKING:
    from leapgit.ledger.view import LedgerView

RULE = "L3"


@dataclass(frozen=True)
class RunLease:
    number: int
    take: RunLeaseRecord | None
    release: RunLeaseRecord | None
    taken_over: bool = False  # a later run's take names it (``takes_over``)

    @property
    def open(self) -> bool:
        return self.take is not None and self.release is None and not self.taken_over

    def named(self) -> str:
        take = self.take
        if take is None:
            return f"run lease {self.number}"
        return f"run lease {self.number} of {take.holder} (process {take.pid}, since {take.at})"


def run_leases(view: LedgerView, slice_id: str) -> list[RunLease]:
    names = view.list(layout.runs_dir(slice_id))
    numbers = sorted(int(n) for n in names if n.isascii() and n.isdigit())
    found = [(n, view.record(layout.run_path(slice_id, n, "take"), RunLeaseRecord),
              view.record(layout.run_path(slice_id, n, "release"), RunLeaseRecord))
             for n in numbers]
    over = {t.takes_over for _, t, _ in found if t is not None and t.takes_over}
    return [RunLease(n, take, release, n in over) for n, take, release in found]


def open_run(view: LedgerView, slice_id: str) -> RunLease | None:
    found = [r for r in run_leases(view, slice_id) if r.open]
    return found[-1] if found else None


def run_problems(view: LedgerView, rec: RunLeaseRecord) -> list[str]:
    """What is wrong with ``rec`` in ``view`` (the ledger as the commit that adds it leaves
    it): a run lease belongs to a slice the ledger holds; run leases are numbered 1, 2,
    3 ... with no gap; at most one is open; a take over
    names the lease that was open before it; a release belongs to a lease taken before it,
    by the same clone."""
    if not view.exists(layout.slice_path(rec.slice)):
        return [f"a run lease of slice {rec.slice}, which this ledger does not hold: the "
                "slice's cut comes first"]
    leases = run_leases(view, rec.slice)
    out = []
    numbers = [r.number for r in leases]
    if numbers != list(range(1, len(numbers) + 1)):
        out.append(f"the run leases of {rec.slice} are numbered {numbers}, not 1, 2, 3 ...")
    mine = next((r for r in leases if r.number == rec.run), None)
    if mine is None or mine.take is None:
        out.append(f"run lease {rec.run} of {rec.slice} is released but was never taken")
        return out
    if rec.action == "release" and rec.holder != mine.take.holder:
        out.append(f"run lease {rec.run} of {rec.slice} was taken by {mine.take.holder}, "
                   f"not {rec.holder}: only its clone gives it back")
    if rec.action == "take" and rec.takes_over is not None:
        before = next((r for r in leases if r.number == rec.takes_over), None)
        if before is None or before.take is None or before.release is not None \
                or rec.takes_over >= rec.run:
            out.append(f"run lease {rec.run} takes over run lease {rec.takes_over} of "
                       f"{rec.slice}, which was not open before it")
    opened = [r.number for r in leases if r.open]
    if len(opened) > 1:
        out.append(f"run leases {opened} of {rec.slice} are open at once: one run "
                   "drives a slice at a time")
    return out
