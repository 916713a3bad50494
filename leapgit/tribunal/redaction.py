"""T5: zero authorship reaches a juror. Every identity we know of (the declared builder,
every author, committer and co-author of the change, every configured model id) and every
authorship marker line is searched for in everything the envelope would carry. One hit
fails the build loudly, naming where; nothing is sent."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from leapgit.errors import Problem
from leapgit.tribunal.errors import EnvelopeLeak

MIN_TOKEN = 3  # shorter values match everywhere and name nobody
_MARKERS = re.compile(
    r"(?im)^[^\n]*?\b(co-authored-by\s*:|signed-off-by\s*:|generated with\s+\[?"
    r"(?:claude|chatgpt|copilot|codex|cursor|aider|gemini|devin)\b)"
)


@dataclass(frozen=True)
class Identities:
    tokens: tuple[tuple[str, str], ...]  # (what it is, the value)

    def pattern(self) -> re.Pattern[str] | None:
        values = sorted({v for _, v in self.tokens if len(v) >= MIN_TOKEN}, key=len, reverse=True)
        if not values:
            return None
        alternatives = "|".join(re.escape(v) for v in values)
        return re.compile(rf"(?<![A-Za-z0-9])(?:{alternatives})(?![A-Za-z0-9])", re.IGNORECASE)

    def label(self, value: str) -> str:
        labels = [label for label, v in self.tokens if v.lower() == value.lower()]
        return " / ".join(dict.fromkeys(labels)) or "identity"


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def scan(texts: Iterable[tuple[str, str]], identities: Identities) -> list[Problem]:
    """Problems for every (place, text) that carries an identity or an authorship marker."""
    pattern = identities.pattern()
    problems: list[Problem] = []
    for place, text in texts:
        if pattern is not None:
            for hit in pattern.finditer(text):
                problems.append(Problem(
                    f"line {_line(text, hit.start())}: carries the {identities.label(hit.group(0))}"
                    f" {hit.group(0)!r}", file=place, rule="T5"))
        for hit in _MARKERS.finditer(text):
            problems.append(Problem(
                f"line {_line(text, hit.start(1))}: authorship marker {hit.group(1).strip()!r}",
                file=place, rule="T5"))
    return problems


def refuse_leaks(texts: Iterable[tuple[str, str]], identities: Identities) -> None:
    problems = scan(texts, identities)
    if problems:
        shown = problems[:20]
        if len(problems) > len(shown):
            shown.append(Problem(f"... and {len(problems) - len(shown)} more identity leaks"))
        shown.append(Problem(
            "identity would reach the jurors; the envelope was not built and nothing was sent",
            rule="T5", hint="remove the names, emails, model ids and authorship lines from "
            "these files (or the intent and criteria), commit, and convene again"))
        raise EnvelopeLeak(problems=shown)
