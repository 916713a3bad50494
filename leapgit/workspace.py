"""The repository a command works on: where it lives, its config, and its ledger."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from leapgit.git import RepoPaths, discover
from leapgit.ledger.store import Ledger
from leapgit.records.config import load_config
from leapgit.records.types import Config


@dataclass(frozen=True)
class Workspace:
    paths: RepoPaths
    config: Config

    def ledger(self) -> Ledger:
        return Ledger(self.paths.common_dir, self.config.ledger_ref)


def open_workspace(start: Path | str = ".") -> Workspace:
    paths = discover(start)
    return Workspace(paths=paths, config=load_config(paths.top))
