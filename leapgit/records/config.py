"""`.leap/config.yaml`: read once, validated, turned into a frozen ``Config``."""

from __future__ import annotations

from pathlib import Path

from leapgit.errors import InvalidRecord
from leapgit.gitobj import refname
from leapgit.records import schema, yamlio
from leapgit.records.types import Config

CONFIG_PATH = Path(".leap") / "config.yaml"


def parse_config(data: bytes, source: str) -> Config:
    raw = yamlio.loads(data, source)
    if raw is None:
        raw = {}
    schema.validate(raw, "config", source, rule="config")
    config = Config.from_dict(raw)
    check_refs(config, source)
    return config


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


def load_config(root: Path | None) -> Config:
    """The repository's config, or the defaults when it has none (a bare server repo, say)."""
    if root is None:
        return Config()
    path = root / CONFIG_PATH
    if not path.exists():
        return Config()
    return parse_config(yamlio.read_bytes(path), str(CONFIG_PATH))
