"""Every hint leads on, and first of all it runs: a `leap ...` command that leapgit shows in
backticks (a hint, a refusal, a stop, an evidence line) names a command the CLI has, with
every argument and required option it needs, and only options it knows. Read from the
source: every string literal of the package but docstrings, an f-string's fields standing
for the values they are filled with. A placeholder in capitals (SLICE, FILE, COMMIT) is a
value the user gives; a bare `leap merge` is a usage error as printed (stop 39 found eight,
`leap merge` and `leap run` among them, that sent the user to exit 2)."""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from leapgit.cli import cli

PACKAGE = Path(__file__).resolve().parent.parent / "leapgit"
FIELD = "\x00"  # an f-string's {field}: some value
SHOWN = re.compile(r"`leap ([^`]*)`")


def _text(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(str(v.value) if isinstance(v, ast.Constant) else FIELD
                       for v in node.values)
    return None


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _patterns(tree: ast.AST) -> set[int]:
    """The patterns given to ``re`` (``re.sub(pattern, ...)``): no text a user reads."""
    return {id(node.args[0]) for node in ast.walk(tree)
            if isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"}


def shown_commands(root: Path) -> Iterator[tuple[str, str]]:
    """(where, command) for each backticked `leap ...` in the strings under ``root``;
    an f-string's parts are read once, as the whole string."""
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _docstrings(tree) | _patterns(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr):
                skip.update(id(v) for v in node.values)
            if id(node) in skip:
                continue
            text = _text(node)
            for found in SHOWN.finditer(text or ""):
                yield f"{path.relative_to(root.parent)}:{node.lineno}", found.group(1)


def problem(words: list[str]) -> str | None:
    """Why ``leap WORDS`` would not run as shown, or None."""
    ctx = click.Context(cli)
    command: click.Command = cli
    while isinstance(command, click.Group) and words and FIELD not in words[0]:
        found = command.get_command(ctx, words[0])
        if found is None:
            return f"no command {words[0]!r}"
        command, words = found, words[1:]
    if isinstance(command, click.Group):
        return None if words and FIELD in words[0] else "a group, not a command"
    options = {name: p for p in command.params if isinstance(p, click.Option)
               for name in (*p.opts, *p.secondary_opts)}
    given: set[str] = set()
    values = 0
    rest = iter(words)
    for word in rest:
        if not word.startswith("-") or word == "-":
            values += 1
            continue
        name = word.split("=", 1)[0]
        option = options.get(name)
        if option is None and FIELD in word:
            continue  # an option the field fills in (`--resume{…}`): read on
        if option is None:
            return f"no option {name}"
        given.add(option.name or name)
        if not option.is_flag and not option.count and "=" not in word and \
                next(rest, None) is None:
            return f"{name} without its value"
    missing = [p.name for p in command.params if isinstance(p, click.Option) and p.required
               and p.name not in given]
    arguments = [p for p in command.params if isinstance(p, click.Argument)]
    needed = [p for p in arguments if p.required]
    if missing:
        return f"without its required --{missing[0]}"
    if values < len(needed):
        return f"{values} of its {len(needed)} arguments ({needed[values].name} missing)"
    if all(p.nargs > 0 for p in arguments) and values > sum(p.nargs for p in arguments):
        return f"{values} values for its {sum(p.nargs for p in arguments)} arguments"
    return None


def test_every_leap_command_shown_runs_as_shown() -> None:
    shown = list(shown_commands(PACKAGE))
    assert len(shown) > 150, len(shown)  # it reads the package (220 at stop 39)
    wrong = [f"{where}: `leap {words.replace(FIELD, '{…}')}`: {why}"
             for where, words in shown if (why := problem(shlex.split(words))) is not None]
    assert wrong == [], "\n".join(wrong)


@pytest.mark.parametrize(("shown", "why"), [
    ("merge", "0 of its 1 arguments (slice_id missing)"),
    ("ball respec s1 a", "2 of its 3 arguments"),
    ("round s1 a --evidence x", "without its required --outcome"),
    ("run s1 --resume-hold", "no option --resume-hold"),
    ("slice chop FILE", "no command 'chop'"),
    ("merge s1 s2", "2 values for its 1 arguments"),
    ("throw s1 --ball", "--ball without its value"),
    ("throw --ball b --resume{x}", "0 of its 1 arguments"),
    ("slice abandon s1 --reason 'a b' c", "2 values for its 1 arguments"),
])
def test_a_command_that_would_not_run_as_shown_is_caught(tmp_path: Path, shown: str,
                                                         why: str) -> None:
    source = tmp_path / "pkg"
    source.mkdir()
    (source / "m.py").write_text(f'"""`leap docstring` is prose."""\n'
                                 f'HINT = f"then `leap {shown}` again{{x}}"\n'
                                 f'OK = f"`leap merge {{slice_id}}` and `leap slice cut FILE`"\n')
    found = [(where, problem(shlex.split(words))) for where, words in shown_commands(source)]
    assert [(w, p) for w, p in found if p is not None] == \
        [("pkg/m.py:2", next(p for _, p in found if p is not None))], found
    assert why in str(found[0][1]), found
