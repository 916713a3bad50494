"""YAML in and out, with the guards every input needs.

Refused before any data is walked: files over a size cap, binary (NUL bytes), non-UTF-8,
duplicate keys, aliases (a "billion laughs" bomb loads cheaply as shared references and
explodes later in whatever walks it, so aliases are refused while parsing), tags outside
the safe schema, values JSON cannot carry (timestamps, sets), and nesting beyond a depth.
A record has one meaning (issue 18 F9): merge keys (``<<:``, which fold another mapping in
and can hide a duplicate key) and integers not written in plain decimal (``0o1``, ``0x1``,
``012``, ``1_000``, read differently by YAML 1.1, 1.2 and other tools) are refused.
"""

from __future__ import annotations

import hashlib
import io
import json
import marshal  # built in: imported with the interpreter
import math
import os
import re
import stat
import sys
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
        _yaml_safe.Constructor = _one_meaning_constructor()
    return _yaml_safe


_DECIMAL = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")
_MERGE = "tag:yaml.org,2002:merge"


def _one_meaning_constructor() -> Any:
    """ruamel's safe constructor, refusing merge keys and non-decimal integers (F9)."""
    from ruamel.yaml.constructor import ConstructorError, SafeConstructor

    class OneMeaning(SafeConstructor):
        def flatten_mapping(self, node: Any) -> Any:
            for key, _value in node.value:
                if key.tag == _MERGE:
                    raise ConstructorError(None, None, "YAML merge keys (<<) are not allowed",
                                           key.start_mark)
            return super().flatten_mapping(node)

        def construct_yaml_int(self, node: Any) -> int:
            value = super().construct_yaml_int(node)  # text that is no integer raises here
            text = self.construct_scalar(node)
            if not _DECIMAL.fullmatch(text):
                raise ConstructorError(None, None, f"the integer {text!r} is not written in "
                                       "decimal (no 0o/0x/0b, leading zeros or '_')",
                                       node.start_mark)
            return int(value)

    # ruamel registers constructors as functions: the override needs its own registration
    OneMeaning.add_constructor("tag:yaml.org,2002:int", OneMeaning.construct_yaml_int)
    return OneMeaning


def read_bytes(path: Path, max_bytes: int = MAX_BYTES) -> bytes:
    """Read at most ``max_bytes`` (+1 to notice more) from ``path``: bounded memory. Only a
    regular file (symlinks followed): a FIFO's reader would wait forever for a writer, a
    device's never ends. Opened without blocking, so a FIFO is seen before it is read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with open(fd, "rb") as fh:
            _require_regular(os.fstat(fd).st_mode, path)
            data = fh.read(max_bytes + 1)
    except IsADirectoryError:
        raise InvalidRecord(_IS_A_DIRECTORY, file=str(path)) from None
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


_IS_A_DIRECTORY = "is a directory, expected a YAML file"


def _require_regular(mode: int, path: Path) -> None:
    if stat.S_ISDIR(mode):
        raise InvalidRecord(_IS_A_DIRECTORY, file=str(path))
    if not stat.S_ISREG(mode):
        raise InvalidRecord("not a regular file", file=str(path))


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


SCAN_ABOVE = 8192  # bytes: below this no text nests deep enough to hurt the C composer


def _prescan(text: str, source: str) -> None:
    """Refuse aliases and deep nesting from the parser's event stream, before anything is
    composed. The event parser is iterative; the C composer recurses and crashes the whole
    process (SIGSEGV) at some 30,000 levels, which 60 KB of brackets reach. A text with no
    '&' or '*' holds no alias, and one under SCAN_ABOVE bytes cannot nest that deep (depth
    past MAX_DEPTH is still refused after the load), so most records skip the scan."""
    if "&" not in text and "*" not in text and len(text) < SCAN_ABOVE:
        return
    from ruamel.yaml.events import (
        AliasEvent,
        CollectionEndEvent,
        CollectionStartEvent,
    )

    depth = 0
    for event in _safe().parse(io.StringIO(text)):
        if isinstance(event, CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise InvalidRecord(_at(event, f"nested deeper than {MAX_DEPTH} levels"),
                                    file=source)
        elif isinstance(event, CollectionEndEvent):
            depth -= 1
        elif isinstance(event, AliasEvent):
            raise InvalidRecord(_at(event, "YAML aliases (*name) are not allowed"),
                                file=source, hint="write the value out in full")


def _at(event: Any, message: str) -> str:
    mark = getattr(event, "start_mark", None)
    return f"line {mark.line + 1}: {message}" if mark is not None else message


def loads(data: bytes, source: str, max_bytes: int = MAX_BYTES) -> Any:
    """One YAML document as plain JSON-shaped data (dict, list, str, int, float, bool, None).
    Text exactly as ``dumps`` writes it (every record leapgit wrote) is read by
    ``records.canonical``, ~20 times faster; any other text by the full YAML loader."""
    from leapgit.records import canonical

    text = decode(data, source, max_bytes)
    ok, value = canonical.read(text)
    if not ok:
        return load_yaml(text, source)
    _check_plain(value, source, "", 0)
    return value


def load_yaml(text: str, source: str) -> Any:
    """``text`` through ruamel's safe loader with every guard (the module's docstring)."""
    from ruamel.yaml.error import YAMLError

    try:
        _prescan(text, source)
        value = _safe().load(text)
    except YAMLError as exc:
        raise InvalidRecord(_yaml_message(exc), file=source) from None
    except RecursionError:
        raise InvalidRecord("nested too deeply", file=source) from None
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        said = str(exc)
        if "integer string conversion" in said:  # Python's own advice is no user's way on
            said = f"an integer of more than {sys.get_int_max_str_digits():,} digits"
        raise InvalidRecord(f"unreadable value: {said}", file=source,
                            hint="write a number of the size the field takes") from None
    except (KeyError, IndexError, TypeError) as exc:  # the loader's own: "!!bool maybe"
        raise InvalidRecord(f"unreadable value: a tagged value that does not fit its tag "
                            f"({exc})", file=source, hint="drop the explicit !!tag") from None
    _check_plain(value, source, "", 0)
    return value


# Ledger records parsed, by their bytes' digest, for this process (``loads_shared``): the
# audit, the server's rules and `leap run` read the same record many times, and a read
# costs ~0.1 ms (records.canonical; ~1.5 ms through the YAML loader). Bounded by the bytes.
_shared: dict[bytes, bytes] = {}  # digest -> the parsed value, frozen
_shared_bytes = 0
_SHARED_MAX_BYTES = 64 << 20


def loads_shared(data: bytes, source: str) -> Any:
    """``loads``, parsed once per process for the same bytes; each caller gets a copy of its
    own (no caller's change reaches another). Bytes that do not parse raise every time."""
    global _shared_bytes
    if len(data) > MAX_BYTES:
        return loads(data, source)  # refused, as ever
    key = hashlib.sha1(data, usedforsecurity=False).digest()
    found = _shared.get(key)
    if found is not None:
        return thaw(found)
    value = loads(data, source)
    if _shared_bytes + len(data) > _SHARED_MAX_BYTES:
        _shared.clear()
        _shared_bytes = 0
    _shared[key] = freeze(value)
    _shared_bytes += len(data)
    return value


def freeze(value: Any) -> bytes:
    """JSON-shaped data (what ``loads`` returns) as bytes a memo keeps: ``thaw`` gives each
    reader a copy of its own, in C (~20 times cheaper than walking it to copy it). Only for
    data this process built: marshal is never read from outside."""
    return marshal.dumps(value)


def thaw(frozen: bytes) -> Any:
    return marshal.loads(frozen)


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
    # a container at MAX_DEPTH is a level past it, empty or not, as ``_prescan`` counts
    if depth > MAX_DEPTH or (depth == MAX_DEPTH and isinstance(value, (dict, list))):
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
    elif isinstance(value, float) and not math.isfinite(value):
        # ".nan" passes every "> 0" of a schema (each comparison with it is false), and
        # ".inf" means "no limit" where a limit was asked for; neither is ever recorded
        raise InvalidRecord("not a finite number (NaN or infinity)", file=source,
                            field=where or None,
                            hint="write a finite number (e.g. 600), or quote it if you meant text")
    elif value is not None and not isinstance(value, (str, int, float, bool)):
        raise InvalidRecord(
            f"{type(value).__name__} value is not allowed", file=source, field=where or None,
            hint="quote it to make it a string",
        )


def dumps(value: Any) -> bytes:
    """Block-style YAML, keys in insertion order, ending in one newline.

    Records are plain data, so this small emitter writes them directly (ruamel's pure-Python
    emitter costs ~1 ms a record, which a cut of a thousand-file slice would feel). Strings
    are JSON-quoted, which YAML reads back exactly; tidy multi-line text becomes a literal
    block so a spec stays readable in ``git show``. ``loads(dumps(v)) == v`` is tested.
    """
    out: list[str] = []
    try:
        if isinstance(value, dict) and value:
            _emit_mapping(value, 0, out)
        elif isinstance(value, list) and value:
            _emit_sequence(value, 0, out)
        else:
            out.append(_line("", value, 0))
    except _LongKey as exc:  # name where it sits, found only once writing failed
        kind = value.get("kind") if isinstance(value, dict) else None
        record = f"a {kind} record" if isinstance(kind, str) else "a record"
        field = _long_key_at(value, "")
        where = f"{record}'s field {field}" if field else record
        raise InvalidRecord(f"{where}: {exc.lines()[0]}", hint="shorten the key") from None
    return "".join(out).encode("utf-8")


def _long_key_at(value: Any, at: str) -> str | None:
    """The field path (``tests[1].extra``) of the mapping that holds a key too long to
    write, "" when it is the top level, None when there is none."""
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str) and len(_written_key(k)) > MAX_KEY:
                return at
            found = _long_key_at(v, f"{at}.{k}" if at else str(k))
            if found is not None:
                return found
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found = _long_key_at(v, f"{at}[{i}]")
            if found is not None:
                return found
    return None


def all_quoted(value: Any) -> bool:
    """Whether ``dumps(value)`` writes every string JSON-quoted (no literal block: no string
    holds a line break). Such output is JSON scalars in YAML's block layout, which YAML reads
    back exactly, so a writer may skip parsing it back (the post-commit hook does)."""
    if isinstance(value, str):
        return "\n" not in value and _SURROGATE.search(value) is None
    if isinstance(value, dict):
        return all(all_quoted(k) and all_quoted(v) for k, v in value.items())
    if isinstance(value, list):
        return all(all_quoted(v) for v in value)
    return value is None or isinstance(value, (bool, int, float))


_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
# what YAML reads raw in a literal block: no C0/C1 control (U+0080 is refused), no BOM
_BLOCK_SAFE = re.compile(r"^[^\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]*$")


_SURROGATE = re.compile("[\ud800-\udfff]")
_encode_string = json.encoder.encode_basestring  # json.dumps(text, ensure_ascii=False)
_UNPRINTABLE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")


def quote(text: str) -> str:
    """``text`` as a YAML scalar that reads back exactly (for templates)."""
    return _quote(text)


def _quote(text: str) -> str:
    """A JSON string is a YAML double-quoted scalar; escape what YAML will not read raw."""
    if text.isascii() and text.isprintable():  # no surrogate, nothing YAML will not read
        return _encode_string(text)
    found = _SURROGATE.search(text)
    if found is not None:  # no escape of it reads back: refuse, never write what cannot
        raise InvalidRecord(
            f"text that is not Unicode (a lone surrogate, U+{ord(found.group()):04X}, as "
            f"from bytes that are not UTF-8) cannot be recorded: {text!r}",
            hint="give the text as UTF-8")
    quoted = _encode_string(text)
    if _UNPRINTABLE.search(quoted) is None:
        return quoted
    return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)


MAX_KEY = 1024  # YAML's cap on an implicit key, as written (escapes count)


class _LongKey(InvalidRecord):
    """A key YAML would not read back; ``dumps`` names the field it sits in."""


def _written_key(key: str) -> str:
    return key if _PLAIN_KEY.fullmatch(key) and key not in _RESERVED else _quote(key)


_KEYS: dict[str, str] = {}  # key -> as written: records name the same few keys over again
_KEYS_MAX = 4096


def _key(key: str) -> str:
    written = _KEYS.get(key)
    if written is not None:
        return written
    written = _written_key(key)
    if len(written) > MAX_KEY:  # YAML would not read it back: never write it
        raise _LongKey(f"a key of {len(written)} characters as written cannot be "
                       f"recorded (YAML reads keys of at most {MAX_KEY}): "
                       f"{written[:40]}...", hint="shorten the key")
    if len(_KEYS) < _KEYS_MAX:
        _KEYS[key] = written
    return written


_RESERVED = {"null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE", "y",
             "n", "yes", "no", "on", "off", "Y", "N", "Yes", "No", "On", "Off", "YES", "NO",
             "ON", "OFF"}


def _scalar(value: Any, indent: int) -> str:
    if type(value) is str:  # the most common by far: the checks below in their order
        return _string(value, indent)
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("NaN and infinity cannot be recorded")
        return repr(value)
    if isinstance(value, str):
        return _string(value, indent)
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    raise TypeError(f"cannot record a {type(value).__name__}")


def _string(text: str, indent: int) -> str:
    if "\n" not in text:
        return _quote(text)
    lines = text.split("\n")
    tidy = (
        len(lines) > 2 and text.endswith("\n") and not text.endswith("\n\n")
        and _BLOCK_SAFE.fullmatch(text) is not None
        and text.lstrip("\n")[:1] not in (" ", "\t")  # the first text line sets the indent
        and all(line == line.rstrip() for line in lines)
    )
    if not tidy:
        return _quote(text)
    pad = " " * (indent + 2)
    body = "".join(f"{pad}{line}\n" if line else "\n" for line in lines[:-1])
    return "|\n" + body.rstrip("\n") + "\n" if body.strip() else _quote(text)


def _emit_mapping(mapping: dict[str, Any], indent: int, out: list[str], first: str = "") -> None:
    pad = " " * indent
    for i, (key, item) in enumerate(mapping.items()):
        lead = first if i == 0 and first else pad
        _emit_item(f"{lead}{_key(key)}:", item, indent, out)


def _emit_sequence(items: list[Any], indent: int, out: list[str]) -> None:
    pad = " " * indent
    for item in items:
        if isinstance(item, dict) and item:
            _emit_mapping(item, indent + 2, out, first=f"{pad}- ")
        elif isinstance(item, list) and item:
            out.append(f"{pad}-\n")
            _emit_sequence(item, indent + 2, out)
        else:
            out.append(_line(f"{pad}- ", item, indent))


def _emit_item(head: str, item: Any, indent: int, out: list[str]) -> None:
    if isinstance(item, dict) and item:
        out.append(head + "\n")
        _emit_mapping(item, indent + 2, out)
    elif isinstance(item, list) and item:
        out.append(head + "\n")
        _emit_sequence(item, indent, out)
    else:
        out.append(_line(f"{head} ", item, indent))


def _line(head: str, item: Any, indent: int) -> str:
    """``head`` and the scalar ``item``: a line, or a literal block that ends its own."""
    if type(item) is str and item.isascii() and item.isprintable():  # most lines: ``_quote``
        return f"{head}{_encode_string(item)}\n"
    text = _scalar(item, indent)
    return f"{head}{text}" if text.startswith("|") else f"{head}{text}\n"
