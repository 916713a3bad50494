"""One refused ref update: the rule, the ref, the commit, the path, and what to do."""

from __future__ import annotations

from typing import NamedTuple

from leapgit.errors import Problem, printable


class Refusal(NamedTuple):
    rule: str
    ref: str
    commit: str | None
    path: str | None
    message: str
    hint: str
    kind: str = ""  # what went wrong, stable for machines (the signature audit's kinds)

    def line(self) -> str:
        at = self.commit[:12] if self.commit else "-"
        where = f" {self.path}" if self.path else ""
        # F9: ref names, paths and record text come from the push: escaped, never obeyed
        return printable(f"[{self.rule}] {self.ref} {at}{where}: {self.message}; do: {self.hint}")

    def problem(self) -> Problem:
        where = f"{self.ref} {self.commit[:12] if self.commit else '-'}"
        return Problem(self.message, file=where, field=self.path, rule=self.rule, hint=self.hint)
