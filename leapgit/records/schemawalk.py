"""Every problem of a document against its schema, at once.

A compiled validator stops at the first problem; a person fixing a config or a draft wants
them all (issue 14). Only when the whole-document validator has refused does this walk the
schema beside the data: each mapping's missing and unknown fields (with the closest known
name), each field's value on its own, each array item on its own. A node the walk does not
open (``oneOf``, ``allOf``, a scalar) is checked whole by its own compiled validator, so the
schema stays the one source of truth; the walk only decides where to look.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

from leapgit.errors import Problem
from leapgit.records.schema import exceptions

Pointer = tuple[str, ...]
Check = Callable[[Pointer, frozenset[str]], Callable[[Any], Any]]
Plain = Callable[[str, Any], str]
_QUIET = frozenset({"description", "title", "$schema", "$id", "$comment", "definitions"})
_OBJECT = frozenset({"properties", "required", "additionalProperties"})


class Walk:
    """One walk over ``data``: ``compiled(pointer, drop)`` is the validator of the schema node
    at ``pointer`` without the keywords in ``drop``; ``field`` spells a data path."""

    def __init__(self, root: dict[str, Any], compiled: Check, plain: Plain,
                 field: Callable[[list[str]], str], source: str, rule: str | None,
                 shallow: str | None = None) -> None:
        self.root, self.compiled, self.plain, self.field = root, compiled, plain, field
        self.source, self.rule, self.shallow = source, rule, shallow
        self.found: list[Problem] = []

    def node(self, pointer: Pointer, data: Any, at: list[str]) -> None:
        pointer, node = self._resolve(pointer)
        if isinstance(data, dict) and isinstance(node.get("properties"), dict) \
                and "patternProperties" not in node:  # keys a pattern admits: checked whole
            self._mapping(pointer, node, data, at)
            self._check(pointer, node, data, at, _OBJECT)
        elif isinstance(data, list) and isinstance(node.get("items"), dict):
            if pointer != ("properties", self.shallow):  # the caller checks those items
                for i, item in enumerate(data):
                    self.node((*pointer, "items"), item, [*at, str(i)])
            self._check(pointer, node, data, at, frozenset({"items"}))
        else:
            self._check(pointer, node, data, at, frozenset())

    def _mapping(self, pointer: Pointer, node: dict[str, Any], data: dict[Any, Any],
                 at: list[str]) -> None:
        known: dict[str, Any] = node["properties"]
        missing = [k for k in node.get("required", ()) if k not in data]
        if missing:
            self._add(f"missing required field(s): {', '.join(missing)}", at)
        extra = node.get("additionalProperties", True)
        for key in data:
            name = str(key)
            if name in known:
                self.node((*pointer, "properties", name), data[key], [*at, name])
            elif extra is False:
                self._add("unknown field", [*at, name], _close(name, known))
            elif isinstance(extra, dict):
                self.node((*pointer, "additionalProperties"), data[key], [*at, name])

    def _check(self, pointer: Pointer, node: dict[str, Any], data: Any, at: list[str],
               drop: frozenset[str]) -> None:
        if set(node) - drop <= _QUIET:
            return
        try:
            self.compiled(pointer, drop)(data)
        except exceptions().JsonSchemaValueException as exc:
            message = exc.message.removeprefix(f"{exc.name} ")
            self._add(self.plain(message, exc), [*at, *list(exc.path or ["data"])[1:]])

    def _add(self, message: str, at: list[str], hint: str | None = None) -> None:
        self.found.append(Problem(message, self.source, self.field(["data", *at]), self.rule,
                                  hint))

    def _resolve(self, pointer: Pointer) -> tuple[Pointer, dict[str, Any]]:
        node: Any = self.root
        for part in pointer:
            node = node[part]
        seen: set[str] = set()
        while isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/"):
            ref = node["$ref"]
            if ref in seen:
                break
            seen.add(ref)
            pointer = tuple(ref[2:].split("/"))
            node = self.root
            for part in pointer:
                node = node[part]
        return pointer, node


def _close(name: str, known: dict[str, Any]) -> str:
    match = difflib.get_close_matches(name, list(known), n=1)
    if match:
        return f"did you mean `{match[0]}`?"
    return f"known fields: {', '.join(known)}"


def subschema(root: dict[str, Any], pointer: Pointer, drop: frozenset[str]) -> dict[str, Any]:
    """The node at ``pointer`` without ``drop``, standing alone (the root's definitions)."""
    node: Any = root
    for part in pointer:
        node = node[part]
    sub = {k: v for k, v in node.items() if k not in drop}
    if "definitions" in root:
        sub["definitions"] = root["definitions"]
    return sub
