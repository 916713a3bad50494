"""The layer contract (issue 13): data flows one way, `cli -> commands -> {hookimpl, audit} ->
scoring -> worktrees -> rules -> {tribunal, slices} -> ledger -> {signing, git} -> records ->
errors`. import-linter reads every import, lazy in-function ones included, so an import
against the flow fails here, in CI, with the chain that breaks it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


# `lint-imports`, import-linter's own command, run by this interpreter
LINT = [sys.executable, "-c", "from importlinter.cli import lint_imports_command as c; c()"]


def _lint(root: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(LINT, cwd=root, capture_output=True, text=True, env=env)


def test_the_layer_contract_is_kept() -> None:
    proc = _lint(ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 kept, 0 broken" in proc.stdout


def test_an_import_against_the_flow_is_caught(tmp_path: Path) -> None:
    """The contract can fail: a copy of the package in which the records layer imports the
    rules (an upward import, inside a function) breaks it."""
    import shutil

    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "leapgit", copy / "leapgit",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    bad = copy / "leapgit" / "records" / "types.py"
    bad.write_text(bad.read_text() + "\n\ndef _upward() -> None:\n"
                   "    from leapgit.rules import passes  # noqa: F401\n")
    proc = _lint(copy, {"PYTHONPATH": str(copy), "PATH": "/usr/bin:/bin"})
    assert proc.returncode != 0, proc.stdout
    assert "leapgit.records.types -> leapgit.rules.passes" in proc.stdout


_READ_SIDE = """
import importlib, pkgutil, sys
import leapgit.rules as rules
for found in pkgutil.iter_modules(rules.__path__):
    importlib.import_module(f"leapgit.rules.{found.name}")
import leapgit.hookimpl.pre_push, leapgit.hookimpl.pre_receive
import leapgit.ledger.history, leapgit.ledger.query
print(" ".join(sorted(name for name in sys.modules if name.startswith("leapgit.ledger."))))
"""


def test_the_rules_and_the_read_side_hooks_load_no_ledger_writer() -> None:
    """pre-receive and pre-push only read the ledger: every rule module, both hook programs
    and the queries load the view, never `ledger.store` with its writer, lock and recovery,
    which only a write needs (~8 ms a push, measured)."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _READ_SIDE], capture_output=True, text=True,
                         check=True).stdout.split()
    assert "leapgit.ledger.view" in out, out  # the listing is real
    for name in ("store", "writer", "recovery", "lock"):
        assert f"leapgit.ledger.{name}" not in out, out
