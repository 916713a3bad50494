"""JSON Schema validation of everything read at the edge.

The schemas in ``schemas/`` are the single source of truth; fastjsonschema compiles each one
to a Python function the first time it is needed (a few ms), so a hook that checks one
record kind compiles one schema.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import re
import sys
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

from leapgit.errors import InvalidRecord
from leapgit.records.cache import schemas_dir, sweep

RECORD_KINDS = (
    "ledger", "slice", "ball", "throw", "receipt", "checkpoint", "envelope", "verdict",
    "summary", "merge", "routing", "lease", "red", "score", "reopen",
    "abandon", "live_proof", "probe", "claim", "run",
)


def schema_text(name: str) -> str:
    """``name`` is ``slice``, ``config`` or ``records/<kind>``. Read from the folder the
    record cache stamps (``cache.schemas_dir``: in the package, or beside it in an editable
    checkout); ``importlib.resources`` only where there is no such folder (a zipped
    install): importing it costs a command ~4 ms (~25 ms under load), with ``tempfile``,
    ``zipfile``, ``shutil``, ``bz2`` and ``lzma``."""
    where = schemas_dir()
    if where is not None:
        return Path(where, f"{name}.schema.json").read_text("utf-8")
    from importlib import resources

    return resources.files("leapgit._schemas").joinpath(f"{name}.schema.json").read_text("utf-8")


@cache
def schema(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(schema_text(name))
    return loaded


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "leapgit" / "validators"


def _compile(definition: dict[str, Any]) -> Callable[[Any], Any]:
    """fastjsonschema's generated validator, kept in the user's cache keyed by the schema's
    hash: compiling costs ~10 ms a schema, loading the generated code well under 1 ms. An
    entry is trusted only when its first line holds the hash of the rest; anything else is
    recompiled and rewritten, so a damaged cache costs time, never correctness."""
    text = json.dumps(definition, sort_keys=True)
    key = hashlib.sha256(f"{_compiler_version()}\0{text}".encode()).hexdigest()[:32]
    path = _cache_dir() / f"v_{key}.py"
    cached = _read_cached(path)
    if cached is not None:
        try:
            loaded = _load(cached, path)
        except Exception:  # noqa: BLE001 - any damage means: compile afresh below
            pass
        else:
            _in_use(path)
            return loaded
    import fastjsonschema

    code = fastjsonschema.compile_to_code(definition)
    _write_cached(path, code)
    loaded = _load(code, path)
    sweep(path.parent, keep={path.name, _compiled(path).name}, names=_VALIDATOR_NAMES)
    return loaded


# a validator's source, its compiled code and either one being written (``_write_cached``,
# ``_load``): what other versions of leapgit or of the schemas left is swept a week later
_VALIDATOR_NAMES = r"v_[0-9a-f]{32}(\.[A-Za-z0-9_-]+)?\.(py|bin|[0-9]+\.tmp)"


_FRESH_FOR = 24 * 3600.0  # seconds a validator in use may go without its date moving


def _in_use(path: Path) -> None:
    """A validator loaded keeps its date (and its compiled code's) at most a day old, so
    the sweep of what nothing wrote for a week never takes one in use (a stat a file;
    best effort: a read-only cache is recompiled a week later, never wrong)."""
    now = time.time()
    for each in (path, _compiled(path)):
        try:
            if now - each.stat().st_mtime > _FRESH_FOR:
                os.utime(each)
        except OSError:
            pass


def _compiled(path: Path) -> Path:
    """Where a validator's compiled code is kept, beside its source."""
    return path.with_name(f"{path.stem}.{sys.implementation.cache_tag}.bin")


def _read_cached(path: Path) -> str | None:
    try:
        header, _, code = path.read_text("utf-8").partition("\n")
    except (OSError, UnicodeDecodeError):
        return None
    if header != f"# sha256 {hashlib.sha256(code.encode()).hexdigest()}":
        return None
    return code


def _write_cached(path: Path, code: str) -> None:
    digest = hashlib.sha256(code.encode()).hexdigest()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(f"# sha256 {digest}\n{code}")
            fh.flush()
            os.fsync(fh.fileno())
        tmp.replace(path)
    except OSError:
        pass  # a read-only home still validates, only slower


def _package_file(name: str) -> str | None:
    """The path of a file in fastjsonschema's folder, found without importing the package
    (see ``exceptions``), or None where it has no such file (a zipped install)."""
    from importlib.util import find_spec

    found = find_spec("fastjsonschema")
    folders = list(found.submodule_search_locations or []) if found else []
    where = os.path.join(folders[0], name) if folders else ""
    return where if os.path.isfile(where) else None


@cache
def _compiler_version() -> str:
    """fastjsonschema's version, as its ``version.py`` says it; the package is imported only
    where that file is not found."""
    where = _package_file("version.py")
    if where is not None:
        try:
            return Path(where).read_text("utf-8")
        except OSError:
            pass
    import fastjsonschema

    return str(fastjsonschema.VERSION)


def exceptions() -> ModuleType:
    """fastjsonschema's ``exceptions`` module: all that a validator compiled earlier needs
    (``_load`` has it import its exceptions from there). Loaded on its own, because the
    package's ``__init__`` loads its four code generators (~4 ms a hook run, a twentieth of
    a pre-receive), which only compiling a schema anew needs. It is kept in ``sys.modules``
    under its own name, where the package, once imported, finds it: the exception classes
    stay one, whichever came first. Loaded whole before it is put there, so a thread that
    validates meanwhile never finds it half run (a blind review raced four threads)."""
    loaded = sys.modules.get("fastjsonschema.exceptions")
    if loaded is not None:
        return loaded
    if "fastjsonschema" not in sys.modules:
        from importlib.util import module_from_spec, spec_from_file_location

        where = _package_file("exceptions.py")
        spec = spec_from_file_location("fastjsonschema.exceptions", where) \
            if where is not None else None
        if spec is not None and spec.loader is not None:
            module = module_from_spec(spec)
            spec.loader.exec_module(module)  # whole before any thread can see it
            return sys.modules.setdefault(spec.name, module)  # one class, whoever was first
    import fastjsonschema.exceptions

    return fastjsonschema.exceptions


# the line fastjsonschema's generated code imports its exceptions with, from the package
_PACKAGE_IMPORT = re.compile(r"^from fastjsonschema import (JsonSchema\w*Exception"
                             r"(?:, JsonSchema\w*Exception)*)$", re.M)


def _load(code: str, path: Path) -> Callable[[Any], Any]:
    exceptions()  # what the rewritten import below finds in sys.modules
    code = _PACKAGE_IMPORT.sub(r"from fastjsonschema.exceptions import \1", code, count=1)
    namespace: dict[str, Any] = {}
    exec(_code_object(code, path), namespace)  # noqa: S102 - fastjsonschema's own output
    entry = re.search(r"^def (validate\w*)\(", code, re.M)  # the first def is the root
    if entry is None:
        raise ValueError(f"no validator in {path}")
    check: Callable[[Any], Any] = namespace[entry.group(1)]
    return check


def _code_object(code: str, path: Path) -> CodeType:
    """``code`` compiled, cached beside it per interpreter (compiling the generated source
    costs more than loading it, and a hook pays it on every run). Trusted only when the
    entry holds the hash of ``code`` and of its own bytes, like the source entry."""
    source_hash = hashlib.sha256(code.encode()).digest()
    where = _compiled(path)
    try:
        data = where.read_bytes()
        body = data[64:]
        if data[:32] == source_hash and data[32:64] == hashlib.sha256(body).digest():
            loaded = marshal.loads(body)
            if isinstance(loaded, CodeType):
                return loaded
    except (OSError, ValueError, EOFError, TypeError):
        pass  # missing or damaged: compile afresh below
    compiled = compile(code, str(path), "exec")
    body = marshal.dumps(compiled)
    try:
        tmp = where.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(source_hash + hashlib.sha256(body).digest() + body)
        tmp.replace(where)
    except OSError:
        pass  # a read-only cache still validates, only slower
    return compiled


@cache
def _validator(name: str) -> Callable[[Any], Any]:
    return _compile(schema(name))


@cache
def _subvalidator(name: str, definition: str) -> Callable[[Any], Any]:
    whole = schema(name)
    sub = dict(whole["definitions"][definition])
    sub["definitions"] = whole["definitions"]
    return _compile(sub)


@cache
def _shallow_validator(name: str, items_of: str) -> Callable[[Any], Any]:
    whole = dict(schema(name))
    props = dict(whole["properties"])
    props[items_of] = {**props[items_of], "items": {}}
    whole["properties"] = props
    return _compile(whole)


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
    _run(_shallow_validator(name, items_of), data, name, (), source, rule, "", items_of)


def validate(
    data: Any, name: str, source: str, *, rule: str | None = None, prefix: str = "",
    definition: str | None = None,
) -> None:
    """Raise ``InvalidRecord`` naming the file and every field where ``data`` breaks schema
    ``name``, one problem each."""
    check = _subvalidator(name, definition) if definition else _validator(name)
    start = ("definitions", definition) if definition else ()
    _run(check, data, name, start, source, rule, prefix)


def _run(
    check: Callable[[Any], Any], data: Any, name: str, start: tuple[str, ...], source: str,
    rule: str | None, prefix: str, shallow: str | None = None,
) -> None:
    try:
        check(data)
    except exceptions().JsonSchemaValueException as exc:
        # the compiled validator stops at the first problem; the walk finds them all
        from leapgit.records.schemawalk import Walk

        walk = Walk(schema(name), lambda at, drop: _node_validator(name, at, drop), _plain,
                    lambda path: field_name(path, prefix), source, rule, shallow)
        walk.node(start, data, [])
        if walk.found:
            raise InvalidRecord(problems=walk.found) from None
        field = field_name(list(exc.path or ["data"]), prefix)
        message = exc.message.removeprefix(f"{exc.name} ")
        raise InvalidRecord(_plain(message, exc), file=source, field=field, rule=rule) from None


@cache
def _node_validator(
    name: str, pointer: tuple[str, ...], drop: frozenset[str]
) -> Callable[[Any], Any]:
    from leapgit.records.schemawalk import subschema

    return _compile(subschema(schema(name), pointer, drop))


def _plain(message: str, exc: Any) -> str:
    rule = getattr(exc, "rule", None)
    if rule == "required":
        have = exc.value if isinstance(exc.value, dict) else {}
        missing = [k for k in exc.rule_definition if k not in have]
        return f"missing required field(s): {', '.join(missing)}"
    if rule == "oneOf":
        described = (getattr(exc, "definition", None) or {}).get("description")
        return f"has the wrong shape: {described}" if described else "has the wrong shape"
    if rule == "additionalProperties":
        extra = message.split("contain", 1)[-1].replace("properties", "").strip()
        return f"unknown field(s): {extra}"
    if rule == "pattern":  # a node says what its pattern admits; the default is for ids
        node = getattr(exc, "definition", None) or {}
        return f"{message} ({node.get('patternHint', _ID_HINT)})"
    return message


_ID_HINT = "ids: letters, digits, '-' and '_', at most 64"


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
