"""YAML in and out, with the guards every input needs.

Refused before any data is walked: files over a size cap, binary (NUL bytes), non-UTF-8,
duplicate keys, aliases (a "billion laughs" bomb loads cheaply as shared references and
explodes later in whatever walks it, so aliases are refused while parsing), tags outside
the safe schema, values JSON cannot carry (timestamps, sets), and nesting beyond a depth.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from leapgit.errors import InvalidRecord

MAX_BYTES = 1 << 20  # 1 MiB: a slice draft or a ledger record is text a person could read
MAX_DEPTH = 64

_yaml_safe: Any = None


def _safe() -> Any:
    global _yaml_safe
    if _yaml_safe is None:
        from ruamel.yaml import YAML

        _yaml_safe = YAML(typ="safe")
        _yaml_safe.allow_duplicate_keys = False
    return _yaml_safe


def read_bytes(path: Path, max_bytes: int = MAX_BYTES) -> bytes:
    """Read at most ``max_bytes`` (+1 to notice more) from ``path``: bounded memory."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except IsADirectoryError:
        raise InvalidRecord("is a directory, expected a YAML file", file=str(path)) from None
    except FileNotFoundError:
        raise InvalidRecord("no such file", file=str(path)) from None
    except OSError as exc:
        raise InvalidRecord(f"cannot read: {exc.strerror}", file=str(path)) from None
    if len(data) > max_bytes:
        raise InvalidRecord(
            f"file is larger than the {max_bytes} byte cap", file=str(path),
            hint="split it, or move long text out of the record",
        )
    return data


def decode(data: bytes, source: str, max_bytes: int = MAX_BYTES) -> str:
    if len(data) > max_bytes:
        raise InvalidRecord(f"larger than the {max_bytes} byte cap", file=source)
    if b"\x00" in data:
        raise InvalidRecord("binary data (NUL byte), expected UTF-8 YAML text", file=source)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidRecord(
            f"not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})", file=source,
            hint="save the file as UTF-8",
        ) from None
    return text.removeprefix("\ufeff")


def _refuse_aliases(text: str, source: str) -> None:
    # Only a text containing '&' or '*' can hold an anchor or an alias; skip the scan otherwise.
    if "&" not in text and "*" not in text:
        return
    from ruamel.yaml.events import AliasEvent

    for event in _safe().parse(io.StringIO(text)):
        if isinstance(event, AliasEvent):
            line = event.start_mark.line + 1 if event.start_mark else "?"
            raise InvalidRecord(
                f"line {line}: YAML aliases (*name) are not allowed",
                file=source, hint="write the value out in full",
            )


def loads(data: bytes, source: str, max_bytes: int = MAX_BYTES) -> Any:
    """Parse one YAML document into plain JSON-shaped data (dict, list, str, int, float, bool, None)."""
    from ruamel.yaml.error import YAMLError

    text = decode(data, source, max_bytes)
    try:
        _refuse_aliases(text, source)
        value = _safe().load(text)
    except YAMLError as exc:
        raise InvalidRecord(_yaml_message(exc), file=source) from None
    except RecursionError:
        raise InvalidRecord("nested too deeply", file=source) from None
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise InvalidRecord(f"unreadable value: {exc}", file=source) from None
    _check_plain(value, source, "", 0)
    return value


def load_file(path: Path, max_bytes: int = MAX_BYTES) -> Any:
    return loads(read_bytes(path, max_bytes), str(path), max_bytes)


def _yaml_message(exc: Exception) -> str:
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = getattr(exc, "context", None)
    if context and problem.startswith("but "):
        problem = f"{context}, {problem}"
    mark = getattr(exc, "problem_mark", None)
    if mark is not None:
        return f"line {mark.line + 1}, column {mark.column + 1}: {problem}"
    return f"malformed YAML: {problem}"


def _check_plain(value: Any, source: str, where: str, depth: int) -> None:
    if depth > MAX_DEPTH:
        field = where if len(where) < 60 else where[:57] + "..."
        raise InvalidRecord(f"nested deeper than {MAX_DEPTH} levels", file=source, field=field)
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidRecord(
                    f"key {key!r} is not a string", file=source, field=where or None,
                    hint="quote the key",
                )
            _check_plain(item, source, f"{where}.{key}" if where else key, depth + 1)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_plain(item, source, f"{where}[{i}]", depth + 1)
    elif value is not None and not isinstance(value, (str, int, float, bool)):
        raise InvalidRecord(
            f"{type(value).__name__} value is not allowed", file=source, field=where or None,
            hint="quote it to make it a string",
        )


def dumps(value: Any) -> bytes:
    """Block-style YAML, keys in insertion order, ending in one newline."""
    from ruamel.yaml import YAML

    out = io.StringIO()
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.sort_base_mapping_type_on_output = False  # type: ignore[assignment]
    yaml.width = 4096
    yaml.allow_unicode = True
    yaml.dump(value, out)
    return out.getvalue().encode("utf-8")
