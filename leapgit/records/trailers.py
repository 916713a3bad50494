"""The ``Leap-*`` commit trailers, read and written in one place. Every ledger commit, round
commit and spine merge names what it records in trailers, so that `git log`,
`git log --grep` and `git interpret-trailers` make a complete audit (SPEC, "How it maps
onto git"). Parsing is ``dulwich.trailers``, the syntax git reads: the last paragraph of
``Key: value`` lines; keys compare case-insensitively."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, NamedTuple

SLICE = "Leap-Slice"
BASE = "Leap-Base"
BALL = "Leap-Ball"
EPISODE = "Leap-Episode"
ROUND = "Leap-Round"
OUTCOME = "Leap-Outcome"
EVIDENCE = "Leap-Evidence"
CANDIDATE = "Leap-Candidate"
RECORD = "Leap-Record"  # one per ledger record the commit adds
SCORE = "Leap-Score"
RUN = "Leap-Run"
MERGE = "Leap-Merge"
SPINE = "Leap-Spine"
TIP = "Leap-Tip"
TRIBUNAL = "Leap-Tribunal"
RED = "Leap-Red"
LEASE = "Leap-Lease"
SPEC_VERSION = "Leap-Spec-Version"
ENVELOPE = "Leap-Envelope"

Pair = tuple[str, str]


class Trailers(NamedTuple):
    """A commit message's trailers, in order."""

    pairs: tuple[Pair, ...] = ()

    def all(self, key: str) -> list[str]:
        wanted = key.lower()
        return [v for k, v in self.pairs if k.lower() == wanted]

    def get(self, key: str) -> str | None:
        """The last value of ``key`` (git's "last one wins"), None when absent or empty."""
        found = self.all(key)
        return (found[-1] or None) if found else None

    @property
    def slice(self) -> str | None:
        return self.get(SLICE)

    @property
    def ball(self) -> str | None:
        return self.get(BALL)


def parse(message: bytes | str) -> Trailers:
    from dulwich.trailers import parse_trailers

    raw = message.encode("utf-8", "surrogateescape") if isinstance(message, str) else message
    return Trailers(tuple((t.key, t.value.strip()) for t in parse_trailers(raw)[1]))


class RoundTrailers(NamedTuple):
    """The receipt a round commit carries (L6); a value missing or malformed is None."""

    round: int | None
    outcome: Literal[-1, 0, 1] | None
    evidence: str | None


def round_trailers(message: bytes | str) -> RoundTrailers:
    found = parse(message)
    round_no, outcome = found.get(ROUND), found.get(OUTCOME)
    return RoundTrailers(
        round=int(round_no) if round_no and round_no.isdigit() else None,
        outcome=int(outcome) if outcome in ("-1", "0", "1") else None,  # type: ignore[arg-type]
        evidence=found.get(EVIDENCE),
    )


def one_line(value: str) -> str:
    """A trailer value (or subject) as one line: a newline would end it, or forge another."""
    return " ".join(str(value).split())


def format_message(subject: str, trailers: Sequence[Pair], body: str = "") -> bytes:
    """The message of every commit leapgit writes: subject, body, then the trailers."""
    from dulwich.trailers import Trailer, format_trailers

    text = one_line(subject) + "\n"
    if body.strip():
        text += "\n" + body.strip() + "\n"
    if trailers:
        text += "\n" + format_trailers([Trailer(k, one_line(v)) for k, v in trailers]).decode()
    return text.encode("utf-8")
