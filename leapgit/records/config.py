"""`.leap/config.yaml`: read once, validated, turned into a frozen ``Config``."""

from __future__ import annotations

from pathlib import Path

from leapgit.records import schema, yamlio
from leapgit.records.types import Config

CONFIG_PATH = Path(".leap") / "config.yaml"


def parse_config(data: bytes, source: str) -> Config:
    raw = yamlio.loads(data, source)
    if raw is None:
        raw = {}
    schema.validate(raw, "config", source, rule="config")
    return Config.from_dict(raw)


def load_config(root: Path | None) -> Config:
    """The repository's config, or the defaults when it has none (a bare server repo, say)."""
    if root is None:
        return Config()
    path = root / CONFIG_PATH
    if not path.exists():
        return Config()
    return parse_config(yamlio.read_bytes(path), str(CONFIG_PATH))
