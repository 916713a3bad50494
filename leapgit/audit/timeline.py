"""The order of a repository's history, read from what its commits name, not from their
clocks (the audit's answer to forged committer times).

A committer time is a claim: anyone sets ``GIT_COMMITTER_DATE``. What a commit names is not:
a ledger record that names a spine commit (a merge record's merges and tip, a throw's or a
red's base) was written after that commit existed, and the ledger is one signed, add-only
line. So:

- a ledger commit provably follows the newest commit of the spine's first-parent line that
  it, or any ledger commit before it, names: its **floor**;
- a spine commit landed before the first ledger commit whose floor reaches it; and since a
  spine commit lands only under an open lease (L9), it is **placed** after the last ledger
  commit before that point at which a lease on the spine was open (the lease its merge
  record names, when one does), else right before that point.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from leapgit.errors import LeapError
from leapgit.gitobj import oid
from leapgit.records import yamlio
from leapgit.rules.signing_history import PolicyEpoch, added_blobs, ledger_line, spine_epochs

if TYPE_CHECKING:
    from dulwich.object_store import BaseObjectStore
    from dulwich.objects import Commit

_SHA = re.compile(rb"(?<![0-9a-f])[0-9a-f]{40}(?![0-9a-f])")
_LEASE = re.compile(r"spines/(?P<spine>.+)/leases/(?P<n>[0-9]+)/(?P<action>take|release)\.yaml")


@dataclass(frozen=True)
class LedgerStep:
    commit: Commit
    paths: tuple[str, ...]  # the records it added
    floor: int | None  # index on the spine line of the newest spine commit it follows
    leases: frozenset[str]  # the leases on the spine open once it landed


@dataclass
class Timeline:
    spine: list[PolicyEpoch]  # the spine's first-parent line, oldest first
    ledger: list[LedgerStep]  # the ledger, oldest first
    placed: list[int]  # per spine commit: how many ledger commits landed before it

    def events(self) -> Iterator[tuple[str, int]]:
        """("spine", index) and ("ledger", index) in the order they landed."""
        at: dict[int, list[int]] = {}
        for index, position in enumerate(self.placed):
            at.setdefault(position, []).append(index)
        for position in range(len(self.ledger) + 1):
            for index in at.get(position, []):
                yield "spine", index
            if position < len(self.ledger):
                yield "ledger", position

    def spine_index(self, sha: str) -> int | None:
        return self._index.get(sha)

    def by_time(self, when: int) -> int | None:
        """The newest spine commit dated not later than ``when``, stopping at the first one
        dated later (bisection over the running maximum of the spine's times)."""
        return bisect.bisect_right(self._latest, when) - 1 if self.spine else None

    @cached_property
    def _index(self) -> dict[str, int]:
        return {e.commit: i for i, e in enumerate(self.spine)}

    @cached_property
    def _latest(self) -> list[int]:
        return list(itertools.accumulate((e.since for e in self.spine), max))


def build(store: BaseObjectStore, spine_tip: str | None, ledger_tip: str | None,
          spine: str) -> Timeline:
    epochs = spine_epochs(store, spine_tip)
    index = {e.commit.encode(): i for i, e in enumerate(epochs)}
    steps: list[LedgerStep] = []
    floor: int | None = None
    open_leases: set[str] = set()
    under: dict[int, str] = {}  # spine index -> the lease its merge record names
    line = reversed(list(ledger_line(store, ledger_tip))) if ledger_tip else iter(())
    for commit in line:
        added = _added(store, commit)
        named = [index[s] for s in _SHA.findall(commit.message) if s in index]
        for path, data in added:
            named.extend(index[s] for s in _SHA.findall(data) if s in index)
            _lease_event(path, spine, open_leases)
            _merge_lease(path, data, spine, index, under)
        if named:
            floor = max(named) if floor is None else max(floor, *named)
        steps.append(LedgerStep(commit, tuple(p for p, _ in added), floor,
                                frozenset(open_leases)))
    return Timeline(epochs, steps, _placements(epochs, steps, under))


def _added(store: BaseObjectStore, commit: Commit) -> list[tuple[str, bytes]]:
    return [(p, store[oid(sha)].as_raw_string()) for p, sha in added_blobs(store, commit)]


def _lease_event(path: str, spine: str, open_leases: set[str]) -> None:
    found = _LEASE.fullmatch(path)
    if found is None or found["spine"] != spine:
        return
    if found["action"] == "take":
        open_leases.add(found["n"])
    else:
        open_leases.discard(found["n"])


_MERGE_RECORD = re.compile(r"slices/[^/]+/(merge|merges/[0-9]+)\.yaml")


def _merge_lease(path: str, data: bytes, spine: str, index: dict[bytes, int],
                 under: dict[int, str]) -> None:
    """A merge record names the lease its merges landed under (a merge stopped after the
    push may be recorded after the lease went back, under another integrator's)."""
    if _MERGE_RECORD.fullmatch(path) is None:  # merge 1, or a re-merge after a reopen
        return
    try:
        raw = yamlio.loads_shared(data, path)
    except LeapError:
        return
    if not isinstance(raw, dict) or raw.get("kind") != "merge" or raw.get("spine") != spine:
        return
    merges = raw.get("merges")
    named = [m.get("commit") for m in merges if isinstance(m, dict)] \
        if isinstance(merges, list) else []
    named.append(raw.get("tip"))
    for sha in named:
        if isinstance(sha, str) and sha.encode() in index:
            under.setdefault(index[sha.encode()], str(raw.get("lease")))


def _placements(epochs: list[PolicyEpoch], steps: list[LedgerStep],
                under: dict[int, str]) -> list[int]:
    placed: list[int] = []
    upper = 0
    for index in range(len(epochs)):
        while upper < len(steps) and not _reaches(steps[upper], index):
            upper += 1
        low = placed[-1] if placed else 0
        placed.append(_last_open(steps, low, upper, under.get(index)))
    return placed


def _last_open(steps: list[LedgerStep], low: int, upper: int, lease: str | None) -> int:
    """The last position in [low, upper] at which the lease (its own, when a merge record
    names it; else any) was open. Position p: p ledger commits landed before it."""
    for p in range(upper, low - 1, -1):
        if p > 0 and (lease in steps[p - 1].leases if lease else steps[p - 1].leases):
            return p
    return upper


def _reaches(step: LedgerStep, index: int) -> bool:
    return step.floor is not None and step.floor >= index
