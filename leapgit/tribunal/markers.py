"""What says "someone wrote this" without naming anyone we know (T5, issue 18 F4), and the
links in which a name is no leak. Every search runs over the lower-cased reader text
(``normalise``), case-sensitive, with word bounds checked by hand: Python's ``re`` loses
its fast first-character scan to ``re.IGNORECASE`` and to a leading look-behind, which made
a 2 MB envelope take seconds.

Markers: commit trailers, ``__author__``, ``Author:`` headers (``@author``, ``:author:``,
``=head1 AUTHOR``), "written/generated/made by|with|using <a model, agent, AI or family
model>", "<model> wrote", and any e-mail address outside links, scp-style remotes
(``git@host:``) and the reserved example domains (RFC 2606)."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator

from leapgit.tribunal.identity import FAMILY_NAMES, product_names

# the endings of host names; never a file extension (".py", ".md", ".sh", ".rs" stay text:
# "claude.md" names a builder)
_TLD = (r"(?:com|org|net|io|dev|ai|app|co|edu|gov|info|me|xyz|cloud|tech|site|page|invalid|"
        r"example|test|localhost|local|internal|us|uk|de|fr|eu|ca|au|jp|cn|ru|nl|ch|se|br)")
_HOST_END = re.compile(rf"\.{_TLD}(?![\w-])")
_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789.-")
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789+.-")
_REST = re.compile(r"[^\s\"'<>)\]}`]*")
_PATH = re.compile(r"(?:[/:][^\s\"'<>)\]}`]*)?")
_AT_DOMAIN = re.compile(rf"@([\w-]+(?:\.[\w-]+)*\.{_TLD})(?![\w-])")  # "@" first: a fast scan
_RESERVED = re.compile(r"(?:^|\.)(?:example\.(?:com|net|org)|example|invalid|test|localhost)$")
_HEAD = re.compile(r"[^\w\n]*?([\w.+@-]+)")

_VERB = r"(?:written|generated|authored|created|produced|coded|drafted|made|built)"
_BY = (r"[ \t]+(?:by|with|using|via|in)[ \t]+(?:the[ \t]+help[ \t]+of[ \t]+)?\[?"
       r"(?:an?[ \t]+|the[ \t]+)?")
_KIND = r"(?:model|ai|llm|assistant|agent|system)"
_MODELS = "|".join(n for names in FAMILY_NAMES.values() for n in names)
_PLAIN_WORDS = ("cursor", "cody", "devin")  # agents named by common words: capitalised only
_AGENTS = "|".join(n for n in product_names() if n not in _PLAIN_WORDS)
# (pattern, whether the match must start at a word bound)
MARKERS: list[tuple[re.Pattern[str], bool]] = [(re.compile(p, re.MULTILINE), bounded)
                                              for p, bounded in (
    (r"(co-authored-by[ \t]*:|signed-off-by[ \t]*:)", True),
    (r"(__(?:author|authors|maintainer|maintainers|credits|email|contact)__)", True),
    (r"^[^\w\n]*((?:authors?|maintainers?)[\"']?[ \t]*[:=])", False),
    (r"^[^\w\n]*((?:written|created|authored|maintained)[ \t]+by)\b", False),
    (r"(@author)\b", False),
    (r"(:author:)", False),
    (r"^(=head\d[ \t]+authors?)\b", False),
    (rf"({_VERB}{_BY}(?:(?:{_AGENTS})(?![\w-])|(?:ai|llm)(?:[ \t]+{_KIND})?(?![\w-])"
     rf"|(?:{'|'.join(FAMILY_NAMES)}|amazon|language)[ \t]+{_KIND}(?![\w-])"
     rf"|(?P<plain>{'|'.join(_PLAIN_WORDS)})\b))", True),
    (rf"((?:{_MODELS})[ \t]+(?:wrote|writes|generated|authored|created|produced|drafted))\b",
     True),
)]


def lowered(seen: str) -> str:
    """``seen`` lower-cased, offset for offset (a letter whose lower case is longer, like
    U+0130, stays as it is)."""
    low = seen.lower()
    if len(low) == len(seen):
        return low
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in seen)


def free_left(text: str, at: int, word: str = "_") -> bool:
    """Whether ``at`` starts a word: no letter, digit or one of ``word`` just before it."""
    return at == 0 or not (text[at - 1].isalnum() or text[at - 1] in word)


def searches(pattern: re.Pattern[str], low: str, word: str = "_",
             bounded: bool = True) -> Iterator[re.Match[str]]:
    """``pattern``'s matches in ``low`` that start at a word bound (when ``bounded``)."""
    pos = 0
    while (hit := pattern.search(low, pos)) is not None:
        if not bounded or free_left(low, hit.start(), word):
            yield hit
            pos = max(hit.end(), hit.start() + 1)
        else:
            pos = hit.start() + 1


class Links:
    """The URLs and host names of a text: a name inside one is no leak (issue 14 item 10)."""

    def __init__(self, low: str) -> None:
        spans = [self._url(low, at) for at in _finds(low, "://")]
        spans += [self._host(low, hit) for hit in _HOST_END.finditer(low)]
        spans.sort()
        self.starts = [s for s, _ in spans]
        self.spans = spans

    @staticmethod
    def _url(low: str, at: int) -> tuple[int, int]:
        start = at
        while start > 0 and low[start - 1] in _SCHEME_CHARS:
            start -= 1
        rest = _REST.match(low, at + 3)
        return start, rest.end() if rest else at + 3

    @staticmethod
    def _host(low: str, hit: re.Match[str]) -> tuple[int, int]:
        start = hit.start()
        while start > 0 and low[start - 1] in _HOST_CHARS:
            start -= 1
        path = _PATH.match(low, hit.end())
        return start, path.end() if path else hit.end()

    def holds(self, start: int, end: int) -> bool:
        i = bisect.bisect_right(self.starts, start) - 1
        return any(s <= start and end <= e for s, e in self.spans[max(i - 8, 0):i + 1])


def _finds(text: str, needle: str) -> Iterator[int]:
    at = text.find(needle)
    while at != -1:
        yield at
        at = text.find(needle, at + 1)


def marker_hits(low: str, seen: str) -> Iterator[tuple[int, str]]:
    """(offset, the marker as written) for every authorship marker."""
    for pattern, bounded in MARKERS:
        for hit in searches(pattern, low, bounded=bounded):
            if "plain" in pattern.groupindex and hit.group("plain") and \
                    not seen[hit.start("plain")].isupper():
                continue  # "made by the cursor" names no agent; "made with Cursor" does
            group = next(i for i, g in enumerate(hit.groups(), 1) if g)
            yield hit.start(), seen[hit.start(group):hit.end(group)].strip()


def _word_before(text: str, at: int, chars: str) -> int:
    """Where the run of letters, digits and ``chars`` that ends at ``at`` starts."""
    start = at
    while start > 0 and start > at - 64 and (text[start - 1].isalnum() or
                                             text[start - 1] in chars):
        start -= 1
    return start


def addresses(low: str, links: Links) -> Iterator[tuple[int, str]]:
    """(offset, address) for every e-mail address outside links, scp-style remotes and
    the reserved example domains: an address names a person or an organisation."""
    for hit in _AT_DOMAIN.finditer(low):
        start = _word_before(low, hit.start(), "_.+-")
        if start == hit.start() or low[hit.end():hit.end() + 1] == ":" or \
                links.holds(start, start + 1) or _RESERVED.search(hit.group(1)):
            continue  # no local part; git@host:path; inside a URL; an example domain
        yield start, low[start:hit.end()]


def split_addresses(low: str, emails: Iterable[str]) -> Iterator[tuple[int, str]]:
    """(line, address) for each known address written across a line break, with a
    comment leader before its second half (``author@exam`` / ``# ple.invalid``)."""
    wanted = [e for e in emails if e]
    if not wanted or "@" not in low:
        return
    lines = low.split("\n")
    for i in range(len(lines) - 1):
        first, second = lines[i].rstrip(" \t"), lines[i + 1]
        if "@" not in first and "@" not in second:
            continue
        tail, head = first[_word_before(first, len(first), "_.+@-"):], _HEAD.match(second)
        if not tail or head is None:
            continue
        joined = tail + head.group(1)
        for email in wanted:
            if email in joined and email not in tail and email not in head.group(1):
                yield i + 1, email
