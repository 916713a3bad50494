"""JSON Schema validation of everything read at the edge.

The schemas in ``schemas/`` are the single source of truth; fastjsonschema compiles each one
to a Python function the first time it is needed (a few ms), so a hook that checks one
record kind compiles one schema.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any, Callable

from leapgit.errors import InvalidRecord

RECORD_KINDS = (
    "ledger", "slice", "ball", "throw", "receipt", "checkpoint", "envelope", "verdict",
    "summary", "merge", "lease",
)



def schema_text(name: str) -> str:
    """``name`` is ``slice``, ``config`` or ``records/<kind>``."""
    return resources.files("leapgit._schemas").joinpath(f"{name}.schema.json").read_text("utf-8")


@lru_cache(maxsize=None)
def schema(name: str) -> dict[str, Any]:
    return json.loads(schema_text(name))  # type: ignore[no-any-return]


def _compile(definition: dict[str, Any]) -> Callable[[Any], Any]:
    """fastjsonschema's generated code, cached on disk by content: compiling a schema costs
    ~20 ms, loading the cached code ~1 ms, and hooks compile afresh in every process."""
    import hashlib
    import os
    from pathlib import Path

    import fastjsonschema

    text = json.dumps(definition, sort_keys=True)
    key = hashlib.sha256(f"{fastjsonschema.VERSION}\n{text}".encode()).hexdigest()[:24]
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    path = Path(base) / "leapgit" / "schemas" / f"v{key}.py"
    try:
        code = path.read_text("utf-8")
    except OSError:
        code = fastjsonschema.compile_to_code(definition)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(code, "utf-8")
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only home: compile every time, still correct
    import re

    entry = re.search(r"^def (\w+)\(", code, re.M)
    namespace: dict[str, Any] = {}
    exec(compile(code, str(path), "exec"), namespace)  # our own generated code, keyed by hash
    validate: Callable[[Any], Any] = namespace[entry.group(1) if entry else "validate"]
    return validate


@lru_cache(maxsize=None)
def _validator(name: str) -> Callable[[Any], Any]:
    return _compile(schema(name))


@lru_cache(maxsize=None)
def _subvalidator(name: str, definition: str) -> Callable[[Any], Any]:
    import fastjsonschema

    whole = schema(name)
    sub = dict(whole["definitions"][definition])
    sub["definitions"] = whole["definitions"]
    return fastjsonschema.compile(sub)  # type: ignore[no-any-return]


@lru_cache(maxsize=None)
def _shallow_validator(name: str, items_of: str) -> Callable[[Any], Any]:
    import fastjsonschema

    whole = dict(schema(name))
    props = dict(whole["properties"])
    props[items_of] = {**props[items_of], "items": {}}
    whole["properties"] = props
    return fastjsonschema.compile(whole)  # type: ignore[no-any-return]


def field_name(path: list[str], prefix: str = "") -> str:
    parts = [prefix] if prefix else []
    for part in path[1:]:
        if part.isdigit():
            parts[-1:] = [f"{parts[-1]}[{part}]" if parts else f"[{part}]"]
        else:
            parts.append(part)
    return ".".join(parts) or "(top level)"


def validate_shallow(
    data: Any, name: str, source: str, *, rule: str | None = None, items_of: str
) -> None:
    """Like ``validate``, without looking inside the items of the array ``items_of``
    (the caller checks each item on its own, to report every bad item at once)."""
    _run(_shallow_validator(name, items_of), data, source, rule, "")


def validate(
    data: Any, name: str, source: str, *, rule: str | None = None, prefix: str = "",
    definition: str | None = None,
) -> None:
    """Raise ``InvalidRecord`` naming the file and the field when ``data`` breaks schema ``name``."""
    check = _subvalidator(name, definition) if definition else _validator(name)
    _run(check, data, source, rule, prefix)


def _run(check: Callable[[Any], Any], data: Any, source: str, rule: str | None, prefix: str) -> None:
    import fastjsonschema

    try:
        check(data)
    except fastjsonschema.JsonSchemaValueException as exc:
        field = field_name(list(exc.path or ["data"]), prefix)
        message = exc.message.removeprefix(f"{exc.name} ")
        raise InvalidRecord(_plain(message, exc), file=source, field=field, rule=rule) from None


def _plain(message: str, exc: Any) -> str:
    rule = getattr(exc, "rule", None)
    if rule == "required":
        have = exc.value if isinstance(exc.value, dict) else {}
        missing = [k for k in exc.rule_definition if k not in have]
        return f"missing required field(s): {', '.join(missing)}"
    if rule == "oneOf":
        return "has the wrong shape (see the schema for the accepted forms)"
    if rule == "additionalProperties":
        return f"unknown field(s): {message.split('contain', 1)[-1].replace('properties', '').strip()}"
    if rule == "pattern":
        return f"{message} (ids: letters, digits, '-' and '_', at most 64)"
    return message


def validate_record(data: Any, source: str) -> str:
    """Validate a ledger record against the schema of its own ``kind``; return the kind."""
    if not isinstance(data, dict):
        raise InvalidRecord("a ledger record must be a mapping", file=source)
    kind = data.get("kind")
    if kind not in RECORD_KINDS:
        raise InvalidRecord(
            f"unknown record kind {kind!r}", file=source, field="kind",
            hint=f"one of: {', '.join(RECORD_KINDS)}",
        )
    validate(data, f"records/{kind}", source)
    return str(kind)
