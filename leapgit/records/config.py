"""`.leap/config.yaml`: read once, validated, turned into a frozen ``Config``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from leapgit.errors import InvalidRecord, Problem
from leapgit.gitobj import refname
from leapgit.records import schema, yamlio
from leapgit.records.types import Config

if TYPE_CHECKING:
    from leapgit.records.cache import RecordCache

CONFIG_PATH = Path(".leap") / "config.yaml"


def parse_config(data: bytes, source: str, cache: RecordCache | None = None) -> Config:
    """The config in ``data``; with a cache (the post-commit hook's), bytes found valid once
    are not parsed or checked again."""
    blob = None
    if cache is not None:
        from leapgit.records.cache import blob_id

        blob = blob_id(data)
        cached = cache.get(blob)
        if cached is not None:
            config = Config.from_dict(cached)
            check_refs(config, source)
            return config
    raw = _validated(data, source)
    config = Config.from_dict(raw)
    found = ref_problems(config.ledger_ref, config.spine, source)
    found.extend(builder_problems(raw.get("builder") or {}, source))
    try:
        config.tribunal  # noqa: B018 -- its rungs are checked here, when the config is read
    except InvalidRecord as exc:
        found.extend(exc.problems)
    if found:  # every problem at once (issue 14)
        raise InvalidRecord(problems=found)
    if cache is not None and blob is not None:
        cache.put(blob, raw)
    return config


def _validated(data: bytes, source: str) -> dict[str, Any]:
    raw = yamlio.loads(data, source)
    if raw is None:
        raw = {}
    try:
        schema.validate(raw, "config", source, rule="config")
    except InvalidRecord as exc:  # with the ref rules a schema cannot say, all at once
        ledger, spine = raw.get("ledger_ref"), raw.get("spine")
        more = (ref_problems(ledger, spine, source)
                if isinstance(ledger, str) and isinstance(spine, str) else [])
        named = {p.field for p in exc.problems}
        raise InvalidRecord(problems=[*exc.problems, *(p for p in more if p.field not in named)],
                            ) from None
    return raw


def check_refs(config: Config, source: str) -> None:
    found = ref_problems(config.ledger_ref, config.spine, source)
    if found:
        raise InvalidRecord(problems=found)


def ref_problems(ledger_ref: str, spine: str, source: str) -> list[Problem]:
    from dulwich.refs import check_ref_format

    found: list[Problem] = []
    if not check_ref_format(refname(ledger_ref)):
        found.append(Problem(f"{ledger_ref!r} is not a valid git ref name", source,
                             "ledger_ref", "config", "use a name like refs/heads/leap/ledger"))
    if ledger_ref == f"refs/heads/{spine}":
        found.append(Problem("the ledger cannot live on the spine branch", source,
                             "ledger_ref", "config", "the ledger is an orphan branch of its own"))
    return found


def builder_problems(builder: dict[str, Any], source: str) -> list[Problem]:
    """Issue 17: a builder preset names a known one, and stands instead of a command."""
    from leapgit.records import presets

    name = builder.get("preset")
    if name is None:
        return []
    if builder.get("command"):
        return [Problem("names both a preset and a command", source, "builder.preset",
                        "config", "keep one of them")]
    if presets.preset(name, "builder") is None:
        return [Problem(f"unknown builder preset {name!r}", source, "builder.preset", "config",
                        f"builder presets: {', '.join(presets.names('builder'))} "
                        "(`leap presets` lists them)")]
    return []


def load_config(root: Path | None, cache: RecordCache | None = None) -> Config:
    """The repository's config, or the defaults when it has none (a bare server repo, say)."""
    if root is None:
        return Config()
    path = root / CONFIG_PATH
    if not path.exists():
        return Config()
    return parse_config(yamlio.read_bytes(path), str(CONFIG_PATH), cache)
