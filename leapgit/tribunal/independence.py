"""Issue 17 item 3: are the jurors eight opinions or two? Measured from the verdicts the
ledger holds.

**The vote.** A rung votes on an envelope (one candidate, by its hash): *refuse* when any
verdict it gave on that envelope, under any lens, as primary or verifier, said refuse;
*pass* when every one said pass. Only what a juror said counts (``said``): a seat that never
answered, or answered badly, gave no opinion. A family votes the same way over its rungs.

**Agreement** of two rungs: the share of the envelopes both voted on where they voted alike.
**Correlation**: the phi coefficient of the two 0/1 vote series over those envelopes
(Pearson's r on binary votes; it corrects agreement for chance: two rungs that refuse at
their own rates independently have phi 0, however often they agree by chance).

**The effective number of independent jurors** of a set of rungs is the participation ratio
of their vote correlation matrix R: ``N_eff = (sum of eigenvalues)^2 / (sum of squared
eigenvalues) = k^2 / ||R||_F^2 = k^2 / (k + 2 * sum over pairs of phi^2)`` for k rungs.
k uncorrelated jurors give k; k jurors that always vote alike give 1; k jurors correlated
pairwise at phi give ``k / (1 + (k - 1) * phi^2)``. A rung whose votes never varied (it
always passed, or always refused) carries no information about the candidate: it adds
nothing (it is left out of k, and named). The figure is unmeasured when a juror of the set
voted alike on fewer than ``MIN_SHARED`` envelopes (too few to say it never varies), when a pair
shared fewer than ``MIN_SHARED``, or when its phi is undefined on them (one side never
varied there): never a guess.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import combinations

from leapgit.ledger.view import LedgerView
from leapgit.records.tribunal_run import VerdictRecord

MIN_SHARED = 5  # envelopes a pair must share before its correlation counts
HISTORY_RUNS = 200  # the latest runs a convening measures itself against

Votes = Mapping[str, Mapping[str, int]]  # juror -> envelope hash -> 1 refuse / 0 pass


@dataclass(frozen=True)
class Vote:
    envelope: str
    lens: str
    rung: str
    family: str
    said: str  # pass | refuse


@dataclass(frozen=True)
class History:
    votes: tuple[Vote, ...]
    verdicts: tuple[tuple[str, str], ...]  # (lens, outcome) of every verdict read
    runs: int

    def by(self, key: str) -> dict[str, dict[str, int]]:
        """``key`` rung or family: juror -> envelope -> 1 when it refused there."""
        out: dict[str, dict[str, int]] = {}
        for v in self.votes:
            seen = out.setdefault(getattr(v, key), {})
            seen[v.envelope] = max(seen.get(v.envelope, 0), int(v.said == "refuse"))
        return out


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    shared: int
    agree: int
    phi: float | None  # None: undefined (one side never varied on the shared envelopes)

    @property
    def agreement(self) -> float | None:
        return self.agree / self.shared if self.shared else None


@dataclass(frozen=True)
class Effective:
    value: float | None  # None: unmeasured, ``why`` says which pair
    jurors: tuple[str, ...]  # the informative jurors counted (k)
    constant: tuple[str, ...]  # jurors whose votes never varied: they add nothing
    why: str = ""


def run_dirs(view: LedgerView) -> Iterator[str]:
    """Every tribunal run folder on the ledger: of a change, a slice, a ball."""
    roots = ["tribunal"]
    for s in view.list("slices"):
        roots.append(f"slices/{s}/tribunal")
        roots += [f"slices/{s}/balls/{b}/tribunal" for b in view.list(f"slices/{s}/balls")]
    for root in roots:
        yield from (f"{root}/{run}" for run in view.list(root) if run != "probes")


def history(view: LedgerView, limit: int | None = None) -> History:
    """The votes of the latest ``limit`` runs (by run id: its UTC time comes first)."""
    runs = sorted(run_dirs(view), key=lambda d: d.rsplit("/", 1)[-1], reverse=True)
    runs = runs[:limit] if limit else runs
    votes: list[Vote] = []
    verdicts: list[tuple[str, str]] = []
    for run in runs:
        for name in view.list(f"{run}/verdicts"):
            rec = view.record(f"{run}/verdicts/{name}", VerdictRecord)
            if rec is None:
                continue
            verdicts.append((rec.lens, rec.outcome))
            for seat in (rec.seat, rec.verifier):
                if seat is not None and seat.rung and seat.said in ("pass", "refuse"):
                    votes.append(Vote(rec.envelope_hash, rec.lens, seat.rung,
                                      seat.family or "?", seat.said))
    return History(tuple(votes), tuple(verdicts), len(runs))


def pair(votes: Votes, a: str, b: str) -> Pair:
    shared = sorted(set(votes.get(a, {})) & set(votes.get(b, {})))
    xs = [votes[a][e] for e in shared]
    ys = [votes[b][e] for e in shared]
    agree = sum(x == y for x, y in zip(xs, ys, strict=True))
    return Pair(a, b, len(shared), agree, phi(xs, ys))


def phi(xs: list[int], ys: list[int]) -> float | None:
    n = len(xs)
    if n == 0:
        return None
    both = sum(x * y for x, y in zip(xs, ys, strict=True))
    sx, sy = sum(xs), sum(ys)
    spread = sx * (n - sx) * sy * (n - sy)
    if spread == 0:
        return None
    return (n * both - sx * sy) / math.sqrt(spread)


def pairs(votes: Votes, jurors: Iterable[str] | None = None) -> list[Pair]:
    names = sorted(jurors if jurors is not None else votes)
    return [pair(votes, a, b) for a, b in combinations(names, 2)]


def effective(votes: Votes, jurors: Iterable[str]) -> Effective:
    """The participation ratio of the jurors' vote correlation matrix (module docstring)."""
    names = sorted(set(jurors))
    if not names:  # nothing recorded: no figure, not zero jurors
        return Effective(None, (), (), "no recorded verdict")
    unseen = [j for j in names if not votes.get(j)]
    if unseen:
        return Effective(None, (), (), f"no recorded verdict of {', '.join(unseen)}")
    thin = [j for j in names if len(set(votes[j].values())) < 2 and len(votes[j]) < MIN_SHARED]
    if thin:  # too few alike votes to say it never varies: not left out, unmeasured
        j = thin[0]
        return Effective(None, (), (), f"{j} voted on {len(votes[j])} envelope(s), fewer "
                         f"than {MIN_SHARED}")
    constant = tuple(j for j in names if len(set(votes[j].values())) < 2)
    counted = tuple(j for j in names if j not in constant)
    squares = 0.0
    for p in pairs(votes, counted):
        if p.shared < MIN_SHARED or p.phi is None:
            why = (f"{p.a} and {p.b} share {p.shared} envelope(s), fewer than {MIN_SHARED}"
                   if p.shared < MIN_SHARED else
                   f"{p.a} and {p.b}: one never varied on the {p.shared} they share")
            return Effective(None, counted, constant, why)
        squares += p.phi ** 2
    k = len(counted)
    value = k * k / (k + 2 * squares) if k else 0.0
    return Effective(round(value, 3), counted, constant)


@dataclass(frozen=True)
class LensRefusals:
    lens: str
    verdicts: int
    refused: int
    held: int


def refusals(h: History) -> list[LensRefusals]:
    out: dict[str, list[str]] = {}
    for lens, outcome in h.verdicts:
        out.setdefault(lens, []).append(outcome)
    return [LensRefusals(lens, len(o), o.count("refuse"), o.count("hold"))
            for lens, o in sorted(out.items())]


def never_refuse(h: History) -> list[str]:
    """The rungs that answered and never once said refuse."""
    said: dict[str, set[str]] = {}
    for v in h.votes:
        said.setdefault(v.rung, set()).add(v.said)
    return sorted(r for r, s in said.items() if "refuse" not in s)


@dataclass(frozen=True)
class Seated:
    """Issue 17, T3: how independent one convening's seats were, as provenance."""

    rungs: tuple[str, ...]
    families: tuple[str, ...]
    effective: Effective

    @property
    def single_family(self) -> bool:
        return len(self.families) == 1

    def notes(self) -> tuple[str, ...]:
        """What the summary says, never silently: one family, or fewer than 2 effective
        independent jurors, or a figure history cannot give yet."""
        out = []
        if self.single_family:
            out.append(f"every seat came from one family ({self.families[0]}): independence "
                       "comes from fresh author-disjoint sessions, not families (T3)")
        e = self.effective
        if len(self.rungs) > 1 and e.value is None:
            out.append(f"effective independent jurors: unmeasured ({e.why})")
        elif e.value is not None and e.value < 2:
            left = f"; never varied: {', '.join(e.constant)}" if e.constant else ""
            out.append(f"effective independent jurors from history: {e.value:g} of "
                       f"{len(self.rungs)} seated rung(s), under 2{left}")
        return tuple(out)


def seated(h: History, seats: Iterable[tuple[str, str]]) -> Seated:
    """``seats``: (rung, family) of every seat that gave a verdict."""
    found = sorted(set(seats))
    rungs = tuple(dict.fromkeys(r for r, _ in found))
    families = tuple(sorted({f for _, f in found}))
    return Seated(rungs, families, effective(h.by("rung"), rungs))
