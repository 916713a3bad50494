"""The fast reader of leapgit's own records: text exactly as ``yamlio.dumps`` writes it.

ruamel's safe loader costs about a millisecond a record, which the audit of a large ledger
and the hooks pay record by record (issue 13 item 7). Records leapgit wrote are in one
canonical layout (block mappings and sequences, JSON scalars, literal blocks), so this
reader parses that layout line by line and then proves it read them right: it accepts a
text only when ``dumps`` of what it read gives back the very same text. ``yamlio.loads``
reads ``dumps``' output back exactly (a property test), so an accepted text means what YAML
says it means; any other text (a hand-written draft, an edited or forged record) is
``None`` here and goes to the full YAML loader with all its guards. One reading, whoever
wrote the bytes.
"""

from __future__ import annotations

import json
import re
from typing import Any

from leapgit.errors import InvalidRecord
from leapgit.records.yamlio import dumps

_KEY = re.compile(r'([A-Za-z_][A-Za-z0-9_-]*|"(?:[^"\\]|\\.)*"):(?: |$)')
_scan = json.decoder.scanstring  # type: ignore[attr-defined]  # the body past the opening quote
_INT = re.compile(r"-?(?:0|[1-9][0-9]*)")
_FLOAT = re.compile(r"-?[0-9]+\.[0-9]+(?:e[-+][0-9]+)?|-?[0-9]e[-+][0-9]+")
_WORDS: dict[str, Any] = {"null": None, "true": True, "false": False}
_DEPTH = 64  # as yamlio.MAX_DEPTH: deeper text goes to the loader, which refuses it


class _NotCanonical(Exception):
    pass


def read(text: str) -> tuple[bool, Any]:
    """(True, value) when ``text`` is exactly ``dumps(value)``; (False, None) otherwise."""
    if not text.endswith("\n") or "\r" in text or "\t" in text:
        return False, None
    try:
        value = _Reader(text.split("\n")[:-1]).document()
    except (_NotCanonical, ValueError, IndexError, RecursionError):
        return False, None
    try:
        same = dumps(value).decode("utf-8") == text
    except (ValueError, TypeError, UnicodeError, InvalidRecord):  # what dumps cannot write
        return False, None
    return (True, value) if same else (False, None)


class _Reader:
    def __init__(self, lines: list[str]) -> None:
        self.lines, self.at = lines, 0

    def document(self) -> Any:
        if not self.lines:
            raise _NotCanonical
        first = self.lines[0]
        if first == "-" or first.startswith("- "):
            value: Any = self.sequence(0, 0)
        elif _KEY.match(first):
            value = self.mapping(0, 0)
        elif first == "|":
            self.at = 1
            value = self.block(2)
        elif len(self.lines) == 1:
            value, self.at = _scalar(first), 1
        else:
            raise _NotCanonical
        if self.at != len(self.lines):
            raise _NotCanonical
        return value

    def mapping(self, indent: int, depth: int) -> dict[str, Any]:
        if depth > _DEPTH:
            raise _NotCanonical
        out: dict[str, Any] = {}
        pad = " " * indent
        while self.at < len(self.lines):
            line = self.lines[self.at]
            if not line.startswith(pad) or line[indent:indent + 1] in (" ", "-", ""):
                break
            found = _KEY.match(line, indent)
            if found is None:
                raise _NotCanonical
            key = found.group(1)
            key = _string(key) if key.startswith('"') else key
            if key in out:
                raise _NotCanonical
            rest = line[found.end():]
            self.at += 1
            out[key] = self.value(rest, indent, depth, nested_seq_indent=indent)
        return out

    def value(self, rest: str, indent: int, depth: int, nested_seq_indent: int) -> Any:
        """What follows ``key:`` (or ``- `` for a sequence item): a scalar on the line, a
        literal block, or (an empty rest) a nested block on the lines below."""
        if rest == "|":
            return self.block(indent + 2)
        if rest:
            return _scalar(rest)
        if self.at >= len(self.lines):
            raise _NotCanonical
        below = self.lines[self.at]
        if below.startswith(" " * nested_seq_indent + "-"):
            return self.sequence(nested_seq_indent, depth + 1)
        return self.mapping(indent + 2, depth + 1)

    def sequence(self, indent: int, depth: int) -> list[Any]:
        if depth > _DEPTH:
            raise _NotCanonical
        out: list[Any] = []
        pad = " " * indent
        while self.at < len(self.lines):
            line = self.lines[self.at]
            if not line.startswith(pad + "-"):
                break
            if line == pad + "-":  # a nested sequence on the lines below
                self.at += 1
                out.append(self.sequence(indent + 2, depth + 1))
                continue
            if not line.startswith(pad + "- "):
                raise _NotCanonical
            rest = line[indent + 2:]
            if _KEY.match(rest):  # a mapping: its first key rides on the dash
                self.lines[self.at] = pad + "  " + rest
                out.append(self.mapping(indent + 2, depth + 1))
                continue
            self.at += 1
            out.append(self.block(indent + 2) if rest == "|" else _scalar(rest))
        return out

    def block(self, indent: int) -> str:
        """A literal block (``|``, clip): its lines at ``indent``, blank lines kept."""
        pad = " " * indent
        body: list[str] = []
        while self.at < len(self.lines):
            line = self.lines[self.at]
            if line and not line.startswith(pad):
                break
            body.append(line[indent:])
            self.at += 1
        if not body:
            raise _NotCanonical
        return "\n".join(body) + "\n"


def _scalar(text: str) -> Any:
    if text[:1] == '"':  # the most common by far: ``_string``, inline
        value, end = _scan(text, 1)
        if end != len(text):
            raise _NotCanonical
        return value
    if text in _WORDS:
        return _WORDS[text]
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    if text == "{}":
        return {}
    if text == "[]":
        return []
    raise _NotCanonical


def _string(text: str) -> str:
    value, end = _scan(text, 1)
    if end != len(text):
        raise _NotCanonical
    return value
