"""The tribunal's part of `.leap/config.yaml`: the rung matrix (T2), verifiers, test mapping.

Built from data the config schema already accepted; the checks here are the ones a JSON
Schema cannot say (unique rung ids, verifiers naming known rungs).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

from leapgit.errors import InvalidRecord, Problem, UsageError
from leapgit.records import presets
from leapgit.records.presets import Preset

CONFIG_SOURCE = ".leap/config.yaml"
DEFAULT_TIMEOUT = 300.0
DEFAULT_MAX_ANSWER = 1 << 20  # 1 MiB: a verdict is a page of JSON, never megabytes
DEFAULT_TEST_TIMEOUT = 900.0
DEFAULT_MAX_OUTPUT = 2048

Provider = Literal["ollama", "openai", "anthropic", "command"]
ResponseFormat = Literal["json_schema", "json_object", "none"]
_ADDS_V1 = ("openai", "anthropic")  # providers whose paths start with /v1 themselves


@dataclass(frozen=True)
class Rung:
    """One model rung of the tribunal's ladder: provider, model, family."""

    id: str
    provider: Provider
    family: str
    tiers: tuple[str, ...]
    context_tokens: int
    cost: float
    model: str | None = None
    endpoint: str | None = None
    command: tuple[str, ...] = ()
    session: str | None = None
    cost_source: str = "declared"
    api_key_env: str | None = None
    max_output_tokens: int = DEFAULT_MAX_OUTPUT
    timeout: float = DEFAULT_TIMEOUT
    # issue 15 item 9: declared prices, dollars per million tokens; None: cost unknown
    usd_per_mtok_in: float | None = None
    usd_per_mtok_out: float | None = None
    response_format: ResponseFormat = "json_schema"  # the openai rung's, for the verdict
    warning: str | None = None  # what loading changed in what the user wrote, and why
    preset: str | None = None  # issue 17: the command rung's named CLI (records.presets)
    env: tuple[tuple[str, str], ...] = ()  # what its preset adds to the juror's environment
    reply: presets.Reply = "bare"  # where its preset's stdout holds the verdict

    @property
    def label(self) -> str:
        return f"{self.id} ({self.provider} {self.model or ' '.join(self.command)})"

    @classmethod
    def from_dict(cls, raw: dict[str, Any], timeout: float,
                  field: str = "tribunal.rungs[]") -> Rung:
        found = _preset(raw, field)
        command = parse_command(raw["command"], f"{field}.command") if "command" in raw \
            else found.argv(raw.get("model")) if found else ()
        endpoint, warning = _endpoint(raw, field)
        return cls(
            id=raw["id"], provider=raw["provider"], family=raw["family"],
            tiers=tuple(raw["tiers"]), context_tokens=raw["context_tokens"],
            cost=float(raw["cost"]), model=raw.get("model"), endpoint=endpoint,
            command=tuple(command), session=raw.get("session"),
            cost_source=raw.get("cost_source", "declared"), api_key_env=raw.get("api_key_env"),
            max_output_tokens=raw.get("max_output_tokens", DEFAULT_MAX_OUTPUT),
            timeout=float(raw.get("timeout", timeout)),
            usd_per_mtok_in=_price(raw, "usd_per_mtok_in"),
            usd_per_mtok_out=_price(raw, "usd_per_mtok_out"),
            response_format=_response_format(raw, field), warning=warning,
            preset=found.name if found else None, env=found.env if found else (),
            reply=found.reply if found else "bare",
        )


def _preset(raw: dict[str, Any], field: str) -> Preset | None:
    """A command rung's preset (issue 17), checked here: the schema names no presets, the
    table in ``records.presets`` is their one home."""
    name = raw.get("preset")
    if name is None:
        return None
    where = f"{field}.preset"
    if raw["provider"] != "command":
        raise InvalidRecord(f"a preset is a command rung's, not a {raw['provider']!r} rung's",
                            file=CONFIG_SOURCE, field=where, rule="config",
                            hint="set provider: command, or remove the preset")
    if "command" in raw:
        raise InvalidRecord("names both a preset and a command", file=CONFIG_SOURCE,
                            field=where, rule="config", hint="keep one of them")
    found = presets.preset(name, "juror")
    if found is None:
        raise InvalidRecord(f"unknown juror preset {name!r}", file=CONFIG_SOURCE, field=where,
                            rule="config", hint="juror presets: "
                            f"{', '.join(presets.names('juror'))} (`leap presets` lists them)")
    if found.needs_model and not raw.get("model"):
        raise InvalidRecord(f"preset {name!r} needs the rung's model", file=CONFIG_SOURCE,
                            field=f"{field}.model", rule="config",
                            hint="name the model it runs, e.g. model: qwen2.5-coder:32b")
    return found


def _price(raw: dict[str, Any], key: str) -> float | None:
    return float(raw[key]) if raw.get(key) is not None else None


def _endpoint(raw: dict[str, Any], field: str) -> tuple[str | None, str | None]:
    """The base URL without a trailing slash; a ``/v1`` the provider adds itself is taken
    off, with a warning (``http://host/v1`` would have called ``/v1/v1/...``)."""
    given = raw.get("endpoint") or ""
    problem = _url_problem(given) if given else None
    if problem:
        raise InvalidRecord(f"{given!r} {problem}", file=CONFIG_SOURCE,
                            field=f"{field}.endpoint", rule="config",
                            hint="give the server's base URL, e.g. http://127.0.0.1:11434")
    endpoint = given.rstrip("/")
    if raw["provider"] not in _ADDS_V1 or not endpoint.endswith("/v1"):
        return endpoint or None, None
    endpoint = endpoint.removesuffix("/v1")
    return endpoint, (f"{CONFIG_SOURCE}: {field}.endpoint {given!r} ends in /v1, which the "
                      f"{raw['provider']} rung adds itself: using {endpoint!r} (it would "
                      "have called /v1/v1/...)")


def _url_problem(url: str) -> str | None:
    """What makes ``url`` no URL an HTTP client can call, or None. The schema's pattern
    took ``http://[::1`` and ``http://host:99999``, and the first call to the rung was an
    internal error (a bad-input hunt)."""
    if not url.isprintable():
        return "holds a control character"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is no number from 0 to 65535
    except ValueError as exc:
        return f"is no URL ({exc})"
    if not parts.hostname:
        return "names no host"
    return None


def _response_format(raw: dict[str, Any], field: str) -> ResponseFormat:
    value: ResponseFormat = raw.get("response_format", "json_schema")
    if "response_format" in raw and raw["provider"] != "openai":
        raise InvalidRecord(f"response_format is read by the openai provider only, not by "
                            f"{raw['provider']!r}", file=CONFIG_SOURCE,
                            field=f"{field}.response_format", rule="config",
                            hint="remove it, or set provider: openai")
    return value


def parse_command(value: str | list[str], field: str) -> tuple[str, ...]:
    """A command rung's argv: a string is split like a shell would, without running one."""
    if isinstance(value, str):
        try:
            value = shlex.split(value)
        except ValueError as exc:
            raise InvalidRecord(f"cannot be split into words: {exc}", file=CONFIG_SOURCE,
                                field=field, rule="T2",
                                hint="quote it as a shell would, or give a list") from None
    if not value or not value[0].strip():
        raise InvalidRecord("names no program to run", file=CONFIG_SOURCE, field=field,
                            rule="T2", hint="give the juror's program first, then its arguments")
    if any("\0" in arg for arg in value):
        raise InvalidRecord("an argument holds a NUL byte, which no program can receive",
                            file=CONFIG_SOURCE, field=field, rule="T2")
    return tuple(value)


_TEMPLATE_FIELDS = {"stem": "x", "name": "x.py", "dir": "d", "path": "d/x.py", "ext": ".py"}


def check_template(template: str, field: str) -> None:
    """T5: a test-mapping template must fill from a path's own parts, checked at load."""
    try:
        template.format(**_TEMPLATE_FIELDS)
    except KeyError as exc:
        problem = f"unknown placeholder {exc.args[0]!r}"
    except (IndexError, ValueError, TypeError, AttributeError) as exc:
        problem = f"cannot be filled ({exc})"
    else:
        return
    raise InvalidRecord(f"template {template!r}: {problem}", file=CONFIG_SOURCE, field=field,
                        rule="T5", hint="placeholders: {stem}, {name}, {dir}, {path}, {ext}; "
                        "write {{ and }} for literal braces")


@dataclass(frozen=True)
class Verifier:
    """The verifier seat a verdict may require."""

    lens: str
    rungs: tuple[str, ...]
    required: bool = False


@dataclass(frozen=True)
class TestMapping:
    """Which tests speak for which source files."""

    source: str  # a glob over repository paths
    tests: tuple[str, ...]  # templates: {stem}, {name}, {dir}, {path}


@dataclass(frozen=True)
class TribunalConfig:
    """The ``tribunal:`` part of the config: rungs, seats and rules."""

    rungs: tuple[Rung, ...] = ()
    verifiers: tuple[Verifier, ...] = ()
    required_verifiers: tuple[str, ...] = ()
    tests: tuple[TestMapping, ...] = ()
    timeout: float = DEFAULT_TIMEOUT
    max_answer_bytes: int = DEFAULT_MAX_ANSWER
    test_timeout: float = DEFAULT_TEST_TIMEOUT

    def rung(self, rung_id: str) -> Rung:
        return next(r for r in self.rungs if r.id == rung_id)

    def verifier(self, lens: str) -> Verifier | None:
        """The verifier fused to ``lens``; a lens in ``required_verifiers`` always has one."""
        found = next((v for v in self.verifiers if v.lens == lens), None)
        if lens in self.required_verifiers:
            return Verifier(lens, found.rungs if found else (), True)
        return found

    @property
    def model_ids(self) -> tuple[str, ...]:
        return tuple(r.model for r in self.rungs if r.model)

    @classmethod
    def from_dict(cls, raw: dict[str, Any] | None) -> TribunalConfig:
        """Every problem at once (issue 14): each rung, mapping and reference is checked
        on its own, and one error names them all."""
        raw = raw or {}
        errors: list[InvalidRecord] = []
        timeout = float(raw.get("timeout", DEFAULT_TIMEOUT))
        rungs = tuple(r for r in (_each(errors, Rung.from_dict, r, timeout,
                                        f"tribunal.rungs[{i}]")
                                  for i, r in enumerate(raw.get("rungs") or ())) if r)
        verifiers = tuple(
            Verifier(v["lens"], tuple(v["rungs"]), bool(v.get("required", False)))
            for v in raw.get("verifiers") or ()
        )
        required = {v.lens for v in verifiers if v.required}
        required.update(raw.get("required_verifiers") or ())
        tests = tuple(m for m in (_each(errors, _mapping, t, i)
                                  for i, t in enumerate(raw.get("tests") or ())) if m)
        errors.extend(_reference_errors([r["id"] for r in raw.get("rungs") or ()], verifiers))
        if errors:
            raise InvalidRecord(problems=[p for e in errors for p in e.problems])
        return cls(
            rungs=rungs, verifiers=verifiers, required_verifiers=tuple(sorted(required)),
            tests=tests, timeout=timeout,
            max_answer_bytes=raw.get("max_answer_bytes", DEFAULT_MAX_ANSWER),
            test_timeout=float(raw.get("test_timeout", DEFAULT_TEST_TIMEOUT)),
        )


T = TypeVar("T")


def _each(errors: list[InvalidRecord], build: Callable[..., T], *args: Any) -> T | None:
    """``build(*args)``, or None with its error kept in ``errors``."""
    try:
        return build(*args)
    except InvalidRecord as exc:
        errors.append(exc)
        return None


def _mapping(raw: dict[str, Any], index: int) -> TestMapping:
    errors: list[InvalidRecord] = []
    for j, template in enumerate(raw["tests"]):
        _each(errors, check_template, template, f"tribunal.tests[{index}].tests[{j}]")
    if errors:
        raise InvalidRecord(problems=[p for e in errors for p in e.problems])
    return TestMapping(raw["source"], tuple(raw["tests"]))


def _reference_errors(rung_ids: list[str], verifiers: tuple[Verifier, ...]
                      ) -> list[InvalidRecord]:
    out: list[InvalidRecord] = []
    seen: set[str] = set()
    for i, rung_id in enumerate(rung_ids):
        if rung_id in seen:
            out.append(InvalidRecord(f"rung id {rung_id!r} is used twice", file=CONFIG_SOURCE,
                                     field=f"tribunal.rungs[{i}].id", rule="T2"))
        seen.add(rung_id)
    for i, verifier in enumerate(verifiers):
        for rung_id in verifier.rungs:
            if rung_id not in seen:
                out.append(InvalidRecord(
                    f"names unknown rung {rung_id!r}", file=CONFIG_SOURCE,
                    field=f"tribunal.verifiers[{i}].rungs", rule="T2",
                    hint=f"known rungs: {', '.join(sorted(seen)) or 'none'}",
                ))
    return out


def require_preset_programs(cfg: TribunalConfig, path: str | None) -> None:
    """Issue 17: a juror preset whose program is not on ``path`` would fail every seat it
    sits; said before any seat, one line per rung (T2)."""
    import shutil

    found = [Problem(f"preset {r.preset!r}: its program {r.command[0]!r} is not on PATH; "
                     "no seat sat", CONFIG_SOURCE, f"tribunal.rungs[{i}].preset", "T2",
                     f"install {r.command[0]}, or remove rung {r.id!r}")
             for i, r in enumerate(cfg.rungs)
             if r.preset and shutil.which(r.command[0], path=path) is None]
    if found:
        raise UsageError(problems=found)
