"""Issue 14 item 11: the README's commands table names every command the CLI has, group
subcommands included (`leap lease release` was missing)."""

from __future__ import annotations

import click

from leapgit.cli import COMMANDS
from tests.support import ROOT


def _leaves(name: str, command: click.Command) -> list[str]:
    if isinstance(command, click.Group):
        return [leaf for sub, cmd in command.commands.items()
                for leaf in _leaves(f"{name} {sub}", cmd)]
    return [name]


def _table_cells() -> list[str]:
    text = (ROOT / "README.md").read_text("utf-8")
    table = text.split("| command | what it does |", 1)[1].split("\n\n", 1)[0]
    return [line.split("|")[1] for line in table.splitlines() if line.startswith("| `leap")]


def test_the_readme_commands_table_names_every_command() -> None:
    cells = _table_cells()
    leaves = [leaf for name, entry in COMMANDS.items() for leaf in _leaves(name, entry.build())]
    assert "lease release" in leaves
    missing = [leaf for leaf in leaves if not any(f"`leap {leaf}" in cell for cell in cells)]
    assert missing == [], missing
