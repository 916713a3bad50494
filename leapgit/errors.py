"""The exception root and the documented exit codes.

Every error a user can cause is a ``LeapError`` carrying one or more ``Problem`` lines
(file, field, rule id, what happened, what to do). The CLI prints one line per problem and
exits with ``exit_code``; nothing else in the program decides how an error looks.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

# Exit codes (README "Exit codes"): every command uses these and no others.
EXIT_OK = 0
EXIT_RULE = 1  # a rule was violated, or a refuse (-1)
EXIT_INPUT = 2  # bad input or usage: unreadable or malformed file, unknown slice
EXIT_HOLD = 3  # hold (0): valid work is blocked
EXIT_INTERNAL = 70  # a bug: one line on the terminal, the traceback in a log file


class Problem(NamedTuple):
    """One thing wrong with the input: where (file, field), which rule, what to do."""

    message: str
    file: str | None = None
    field: str | None = None
    rule: str | None = None
    hint: str | None = None

    def line(self) -> str:
        where = ": ".join(part for part in (self.file, self.field) if part)
        text = f"{where}: {self.message}" if where else self.message
        if self.rule:
            text += f" [{self.rule}]"
        if self.hint:
            text += f"; {self.hint}"
        return text


class LeapError(Exception):
    exit_code = EXIT_INPUT

    def __init__(
        self,
        message: str = "",
        *,
        file: str | None = None,
        field: str | None = None,
        rule: str | None = None,
        hint: str | None = None,
        problems: Iterable[Problem] = (),
    ) -> None:
        found = list(problems)
        if message:
            found.insert(0, Problem(message, file, field, rule, hint))
        self.problems: tuple[Problem, ...] = tuple(found)
        super().__init__("\n".join(p.line() for p in self.problems))

    def lines(self) -> list[str]:
        return [p.line() for p in self.problems]


class UsageError(LeapError):
    """Bad input or usage: a missing repository, an unknown slice, a bad option."""


class InvalidRecord(LeapError):
    """A file that cannot be read, or does not match its schema."""


class RuleViolation(LeapError):
    """Well-formed input that breaks a LEAP or tribunal rule (L…, T…)."""

    exit_code = EXIT_RULE


class LedgerConflict(RuleViolation):
    """A write that would change or delete an existing ledger record (L8: written truth)."""


class LedgerBusy(LeapError):
    """The ledger ref kept moving under us; nothing was written."""

    exit_code = EXIT_HOLD


class Hold(LeapError):
    """Valid work that cannot go on now (0)."""

    exit_code = EXIT_HOLD


def combine(errors: Iterable[LeapError]) -> LeapError | None:
    """One error carrying every problem; bad input outranks a rule violation."""
    found = list(errors)
    if not found:
        return None
    problems = [p for e in found for p in e.problems]
    cls: type[LeapError] = InvalidRecord
    if all(isinstance(e, RuleViolation) for e in found):
        cls = RuleViolation
    return cls(problems=problems)
