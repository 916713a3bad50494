"""The layer contract (issue 13): data flows one way, `cli -> commands -> {hookimpl, audit} ->
scoring -> worktrees -> rules -> {tribunal, slices} -> ledger -> {signing, git} -> records ->
errors`. import-linter reads every import, lazy in-function ones included, so an import
against the flow fails here, in CI, with the chain that breaks it."""

from __future__ import annotations

import ast
import importlib.util
import shutil
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


def _names(module: str, node: ast.Import | ast.ImportFrom, modules: dict[str, Path]
           ) -> list[str]:
    """The modules an import statement loads (a `from` of a submodule names the submodule)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = module.split(".")
        if modules[module].name != "__init__.py":
            package = package[:-1]
        base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
    found = [base]
    for alias in node.names:
        full = f"{base}.{alias.name}"
        if full in modules:
            found.append(full)
        elif not base.startswith("leapgit"):
            try:
                if importlib.util.find_spec(full) is not None:
                    found.append(full)
            except (ImportError, ValueError):
                pass  # an attribute of the module, not a module
    return found


def _imports(tree: ast.AST, depth: int = 0) -> list[tuple[int, ast.Import | ast.ImportFrom]]:
    """(depth, statement) of every import: depth 0 is the module's own, run as it loads;
    those under `if TYPE_CHECKING:` never run."""
    out = []
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
            continue
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            out.append((depth, child))
        inner = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        out.extend(_imports(child, depth + 1 if inner else depth))
    return out


def redundant_lazy_imports(root: Path) -> list[str]:
    """In-function imports that defer nothing: each module they load is loaded anyway when
    their own module is imported (by its top-level imports, followed through leapgit's
    modules). A lazy import keeps a module out of a start-up (issue 13: the hooks', `leap
    --version`'s, `leap status`'s) or it is an import like any other, at the top."""
    modules = {}
    for path in (root / "leapgit").rglob("*.py"):
        name = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        modules[name] = path
    parsed = {name: _imports(ast.parse(path.read_text())) for name, path in modules.items()}
    top = {name: {n for depth, node in found if depth == 0 for n in _names(name, node, modules)}
           for name, found in parsed.items()}

    def loaded(name: str) -> set[str]:
        seen: set[str] = set()
        todo = [name]
        while todo:
            parts = todo.pop().split(".")
            for i in range(1, len(parts) + 1):  # a package's __init__ loads first
                step = ".".join(parts[:i])
                if step not in seen:
                    seen.add(step)
                    todo.extend(top.get(step, ()))
        return seen

    found = []
    for name, imports in sorted(parsed.items()):
        already = loaded(name)
        for depth, node in imports:
            if depth and all(n in already for n in _names(name, node, modules)):
                found.append(f"{modules[name].relative_to(root)}:{node.lineno}: "
                             f"{ast.unparse(node)}")
    return found


def test_every_lazy_import_defers_a_module() -> None:
    """Issue 13: lazy imports remain only where a start-up needs them. One that names only
    modules its own module loads anyway defers nothing; it belongs at the top (a test that
    patches a function reaches it through its module, `syncing.sync`)."""
    assert redundant_lazy_imports(ROOT) == []


def test_a_lazy_import_that_defers_nothing_is_caught(tmp_path: Path) -> None:
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "leapgit", copy / "leapgit",
                    ignore=shutil.ignore_patterns("__pycache__"))
    found = copy / "leapgit" / "rules" / "signed_spine.py"
    text = found.read_text()
    assert "\nfrom leapgit.records.trailers import parse\n" in text  # loaded at import
    found.write_text(text + "\n\ndef _again() -> None:\n"
                     "    from leapgit.records.trailers import parse  # noqa: F401\n")
    assert redundant_lazy_imports(copy) == [
        f"leapgit/rules/signed_spine.py:{text.count(chr(10)) + 4}: "
        "from leapgit.records.trailers import parse"]
