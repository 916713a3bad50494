"""The exception root and the documented exit codes.

Every error a user can cause is a ``LeapError`` carrying one or more ``Problem`` lines
(file, field, rule id, what happened, what to do). The CLI prints one line per problem and
exits with ``exit_code``; nothing else in the program decides how an error looks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

# Exit codes (README "Exit codes"): every command uses these and no others.
EXIT_OK = 0
EXIT_RULE = 1  # a rule was violated, or a refuse (-1)
EXIT_INPUT = 2  # bad input or usage: unreadable or malformed file, unknown slice
EXIT_HOLD = 3  # hold (0): valid work is blocked
EXIT_INTERNAL = 70  # a bug: one line on the terminal, the traceback in a log file


# What a terminal obeys instead of showing: C0 and C1 controls and DEL (a newline forges a
# line, ESC and CSI move the cursor or recolour), bidi overrides and isolates, the Unicode
# line separators, and lone surrogates (bytes that were not UTF-8, read as surrogateescape).
_UNSAFE = ("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
           "\u2028\u2029\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: str) -> str:
    """``text`` as one line that a terminal shows and never obeys (issue 18 F9): every
    control character becomes an escape (``\\n``, ``\\x1b``, ``\\u202e``), a byte that was
    not UTF-8 becomes ``\\xNN``. Everything leapgit prints that came from a push, a record
    or a file name goes through it: refusal lines, error lines, the hooks' reports."""
    if text.isprintable():  # every character _UNSAFE names is one isprintable() refuses
        return text
    return re.sub(_UNSAFE, _escape, text)  # compiled on first use (re's cache), not at import


def shell_word(text: str) -> str:
    """``text`` as one word of a shell command printed on one line: ``shlex.quote`` when
    it is printable; else bash's ``$'...'`` with escapes, so a file name that holds a
    newline or bytes that are not UTF-8 names that very file when the line is pasted."""
    import shlex

    if text.isprintable():
        return shlex.quote(text)
    out = []
    for char in text:
        code = ord(char)
        if char in ("\\", "'"):
            out.append("\\" + char)
        elif char in _NAMED:  # \n, \r, \t: bash reads them as printable() writes them
            out.append(_NAMED[char])
        elif 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
            out.append(f"\\x{code - 0xDC00:02x}")
        elif not char.isprintable():
            out.append("".join(f"\\x{b:02x}" for b in char.encode("utf-8")))
        else:
            out.append(char)
    return "$'" + "".join(out) + "'"


def _escape(found: re.Match[str]) -> str:
    char = found.group()
    code = ord(char)
    if char in _NAMED:
        return _NAMED[char]
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape's stand-in for the byte code - 0xDC00
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


class Problem(NamedTuple):
    """One thing wrong with the input: where (file, field), which rule, what to do."""

    message: str
    file: str | None = None
    field: str | None = None
    rule: str | None = None
    hint: str | None = None

    def located(self) -> str:
        """The message after the file and field it is about (what a line starts with)."""
        where = ": ".join(part for part in (self.file, self.field) if part)
        return printable(f"{where}: {self.message}" if where else self.message)

    def line(self) -> str:
        text = self.located()
        if self.rule:
            text += f" [{self.rule}]"
        if self.hint:
            text += f"; {self.hint}"
        return printable(text)  # F9: file names, fields and messages carry untrusted text


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
        details: Iterable[str] = (),
    ) -> None:
        found = list(problems)
        if message:
            found.insert(0, Problem(message, file, field, rule, hint))
        self.problems: tuple[Problem, ...] = tuple(found)
        # what the user needs to see under the problem lines to act on them, e.g. the tail
        # of a command's output; shown by the CLI's error printer, one escaped line each
        self.details: tuple[str, ...] = tuple(details)
        super().__init__("\n".join(p.line() for p in self.problems))

    def lines(self) -> list[str]:
        return [p.line() for p in self.problems]

    def detail_lines(self) -> list[str]:
        return [printable(d) for d in self.details]


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
