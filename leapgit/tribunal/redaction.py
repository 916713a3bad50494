"""T5: zero authorship reaches a juror. Every identity we know of (the declared builder, its
family and the names that family's models go by, every author, committer and co-author of
the change, every configured model id) and every authorship marker (``markers``) is
searched for in everything the envelope would carry. One hit fails the build loudly,
naming where; nothing is sent.

The search reads text as a juror would (``normalise``: invisible characters dropped, NFKC,
look-alike letters folded, ``name [at] host`` read as an address; issue 18 F4). Names match
as whole words outside URLs and host names, so a web merge's committer ``GitHub`` is no
leak in ``https://github.com/...`` (issue 14 item 10); e-mail addresses match exactly, also
split over two lines; ids match wherever they stand."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from leapgit.errors import Problem
from leapgit.tribunal import markers
from leapgit.tribunal.errors import EnvelopeLeak
from leapgit.tribunal.identity import family_names
from leapgit.tribunal.normalise import reader_text

MIN_TOKEN = 3  # shorter values match everywhere and name nobody
FAMILY_LABEL = "builder family"
_AFTER = {"name": r"(?!\w)", "email": r"(?![\w-]|\.[\w-])", "id": r"(?![a-z0-9])"}
_BEFORE = {"name": "_", "email": "_.+-", "id": ""}  # what may not stand just before a hit


@dataclass(frozen=True)
class _Needle:
    label: str
    kind: str  # name | email | id
    core: str  # a regular expression over lower-cased reader text
    literal: str = ""  # an address as written (lower-cased): found across line breaks too


@dataclass(frozen=True)
class Identities:
    tokens: tuple[tuple[str, str], ...]  # (what it is, the value)

    @cached_property
    def needles(self) -> tuple[_Needle, ...]:
        out: dict[tuple[str, str], _Needle] = {}
        for label, value in self.tokens:
            for kind, core, literal in _cores(label, value):
                out.setdefault((kind, core), _Needle(label, kind, core, literal))
        return tuple(out.values())

    @cached_property
    def patterns(self) -> tuple[tuple[str, re.Pattern[str], tuple[_Needle, ...]], ...]:
        """One pattern per kind, a named group per needle: three scans of a text."""
        out = []
        for kind in _AFTER:
            mine = tuple(n for n in self.needles if n.kind == kind)
            if mine:
                groups = "|".join(f"(?P<n{i}>{n.core})" for i, n in enumerate(mine))
                out.append((kind, re.compile(f"(?:{groups}){_AFTER[kind]}"), mine))
        return tuple(out)

    @cached_property
    def emails(self) -> tuple[tuple[str, str], ...]:
        return tuple((n.label, n.literal) for n in self.needles if n.kind == "email")


def _cores(label: str, value: str) -> list[tuple[str, str, str]]:
    if label == FAMILY_LABEL:
        return [("name", r, "") for r in family_names(value)]
    seen = reader_text(value.strip()).lower()
    if len(seen) < MIN_TOKEN:
        return []
    if "@" in seen:
        return [("email", re.escape(seen), seen)]
    if label.endswith(" id"):
        return [("id", re.escape(seen), "")]
    return [("name", r"[ \t._-]*".join(re.escape(part) for part in seen.split()), "")]


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _identity_hits(seen: str, low: str, identities: Identities,
                   links: markers.Links) -> dict[tuple[int, str], str]:
    found: dict[tuple[int, str], str] = {}
    for kind, pattern, needles in identities.patterns:
        for hit in markers.searches(pattern, low, _BEFORE[kind]):
            if kind == "name" and links.holds(hit.start(), hit.end()):
                continue  # a name inside a URL or a host name names nobody
            needle = needles[int(hit.lastgroup[1:])] if hit.lastgroup else needles[0]
            shown = seen[hit.start():hit.end()]
            found.setdefault((_line(low, hit.start()), shown.lower()),
                             f"carries the {needle.label} {shown!r}")
    for line, email in markers.split_addresses(low, [e for _, e in identities.emails]):
        label = next(lb for lb, e in identities.emails if e == email)
        found.setdefault((line, email), f"carries the {label} split over lines")
    return found


def scan(texts: Iterable[tuple[str, str]], identities: Identities) -> list[Problem]:
    """Problems for every (place, text) that carries an identity or an authorship marker."""
    problems: list[Problem] = []
    for place, text in texts:
        seen = reader_text(text)
        low = markers.lowered(seen)
        links = markers.Links(low)
        found = _identity_hits(seen, low, identities, links)
        for at, shown in markers.marker_hits(low, seen):
            found.setdefault((_line(low, at), shown.lower()), f"authorship marker {shown!r}")
        for at, address in markers.addresses(low, links):
            found.setdefault((_line(low, at), address), f"an e-mail address {address!r}")
        originals = text.split("\n")
        for (line, _), what in sorted(found.items()):
            odd = reader_text(originals[line - 1]) != originals[line - 1]
            problems.append(Problem(f"line {line}: {what}" + (
                " (spelled with look-alike or invisible characters)" if odd else ""),
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
