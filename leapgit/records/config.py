"""`.leap/config.yaml`: read once, validated, turned into a frozen ``Config``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from leapgit.errors import InvalidRecord
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
    check_refs(config, source)
    config.tribunal  # noqa: B018 -- its rungs are checked here, when the config is read
    if cache is not None and blob is not None:
        cache.put(blob, raw)
    return config


def _validated(data: bytes, source: str) -> dict[str, Any]:
    raw = yamlio.loads(data, source)
    if raw is None:
        raw = {}
    schema.validate(raw, "config", source, rule="config")
    return raw


def check_refs(config: Config, source: str) -> None:
    from dulwich.refs import check_ref_format

    if not check_ref_format(refname(config.ledger_ref)):
        raise InvalidRecord(f"{config.ledger_ref!r} is not a valid git ref name", file=source,
                            field="ledger_ref", rule="config",
                            hint="use a name like refs/heads/leap/ledger")
    if config.ledger_ref == f"refs/heads/{config.spine}":
        raise InvalidRecord("the ledger cannot live on the spine branch", file=source,
                            field="ledger_ref", rule="config",
                            hint="the ledger is an orphan branch of its own")


def load_config(root: Path | None, cache: RecordCache | None = None) -> Config:
    """The repository's config, or the defaults when it has none (a bare server repo, say)."""
    if root is None:
        return Config()
    path = root / CONFIG_PATH
    if not path.exists():
        return Config()
    return parse_config(yamlio.read_bytes(path), str(CONFIG_PATH), cache)
