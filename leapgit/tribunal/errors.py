"""The tribunal's errors, all under the one root in ``leapgit.errors``.

Two families: errors a user sees (a leak, a refused output folder, a HALT), and a seat's
failure types (``SeatFailure``) that the ladder walk turns into a recorded outcome. A seat
failure never reaches the terminal on its own: ``seating`` records it per lens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from leapgit.errors import Hold, LeapError, RuleViolation, UsageError

if TYPE_CHECKING:
    from leapgit.records.usage import Usage


class JurorError(LeapError):
    """Root of everything the tribunal raises."""


class EnvelopeLeak(RuleViolation, JurorError):
    """T5: identity would reach a juror; nothing was sent."""


class OutDirRefused(UsageError, JurorError):
    """T6: an output folder holding tribunal files that are not ours."""


class TribunalHold(Hold, JurorError):
    """A convening that could not grade (HALT, exploded seat, no ledger write)."""


class SeatFailure(JurorError):
    """One call to one rung went wrong; ``kind`` says how, and so what the walk does.
    ``usage``: the tokens the provider reported for a reply it still charged for."""

    kind = "failed"

    def __init__(self, message: str, raw_tail: str = "", usage: Usage | None = None) -> None:
        super().__init__(message)
        self.detail = message
        self.raw_tail = raw_tail
        self.usage = usage


class NeverAnswered(SeatFailure):
    """T6: timeout, connection error, 5xx, a dead command: hold and re-seat."""

    kind = "never_answered"


class CapacityRejected(SeatFailure):
    """T6: the rung could not hold the envelope (before or after the call): walk on."""

    kind = "capacity"


class BadAnswer(SeatFailure):
    """T6: the juror answered, badly (garbage, refusal, cut output): a refuse."""

    kind = "bad_answer"


class BudgetSpent(SeatFailure):
    """T8: a reasoning model spent its output budget (``finish_reason: length``,
    ``stop_reason: max_tokens``, ``done_reason: length``) with no usable verdict: a failed
    seat, recorded as such; the next rung sits."""

    kind = "exhausted"


class Annulled(SeatFailure):
    """T8: bytes changed under the seat; the verdict is no verdict: walk on."""

    kind = "annulled"


class OffLens(SeatFailure):
    """T6: an answer for another lens is a rejected rung, not a verdict: walk on."""

    kind = "off_lens"

    def __init__(self, message: str, answered_lens: str, raw_tail: str = "") -> None:
        super().__init__(message, raw_tail)
        self.answered_lens = answered_lens
