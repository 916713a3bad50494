"""T7, T9: findings are fingerprinted (lens, file, normalised claim) and each round's are
new, recurring or resolved against the round before. When the count of NEW findings is flat
or rising two rounds in a row, the loop stops and escalates to a person."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

_WORD = re.compile(r"[^a-z0-9]+")


def normalise(claim: str) -> str:
    return " ".join(_WORD.sub(" ", claim.lower()).split())


def fingerprint(lens: str, file: str, claim: str) -> str:
    text = f"{lens}\0{file}\0{normalise(claim)}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class PastRound:
    round: int
    fingerprints: frozenset[str]
    new_count: int


@dataclass(frozen=True)
class Progress:
    new: tuple[str, ...]
    recurring: tuple[str, ...]
    resolved: tuple[str, ...]
    new_counts: tuple[int, ...]  # every round so far, this one last
    oscillating: tuple[str, ...]  # new now, but seen in an earlier round
    escalate: bool


def flat_or_rising_twice(counts: Sequence[int]) -> bool:
    return len(counts) >= 3 and counts[-1] >= counts[-2] >= counts[-3]


def progress(current: Sequence[str], past: Sequence[PastRound], passed: bool,
             measured: bool = True) -> Progress:
    """``measured``: some juror gave a verdict this round. A round with none (every seat
    out of reach: T6, hold and re-seat) measured no findings, so it never escalates."""
    before = sorted(past, key=lambda p: p.round)
    previous = before[-1].fingerprints if before else frozenset()
    now = list(dict.fromkeys(current))
    new = tuple(f for f in now if f not in previous)
    recurring = tuple(f for f in now if f in previous)
    resolved = tuple(sorted(previous - set(now)))
    earlier = set().union(*(p.fingerprints for p in before[:-1])) if len(before) > 1 else set()
    counts = tuple(p.new_count for p in before) + (len(new),)
    oscillating = tuple(f for f in new if f in earlier)
    return Progress(new, recurring, resolved, counts, oscillating,
                    escalate=measured and not passed and flat_or_rising_twice(counts))
