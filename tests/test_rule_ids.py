"""One id per rule (issue 13): every rule id leapgit uses is a ``RuleId``, every ``RuleId``
has a function that enforces it and cites it, and a test that names it."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from leapgit.errors import RuleViolation
from leapgit.ruleids import ENFORCED_BY, RuleId
from leapgit.rules.refusal import Refusal

ROOT = Path(__file__).resolve().parent.parent
SHAPED = re.compile(r"[LTS][1-9](\.[0-9]+)?")  # how a SPEC or README id looks


def _cited(rule: RuleId) -> re.Pattern[str]:
    """``rule`` as a word: L7 is not cited by L7.5, nor T1 by T10; a word id in quotes."""
    if not SHAPED.fullmatch(rule.value):
        return re.compile(rf"[\"']{rule.value}[\"']|RuleId\.{rule.name}\b")
    return re.compile(rf"(?<![\w.]){re.escape(rule.value)}(?![\d]|\.\d)|RuleId\.{rule.name}\b")


def _ids_in(node: ast.AST) -> Iterator[str]:
    """The string constants an expression can give (both arms of ``a if c else b``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.IfExp):
        yield from _ids_in(node.body)
        yield from _ids_in(node.orelse)
    elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        for item in node.elts:
            yield from _ids_in(item)


def _used_ids() -> Iterator[tuple[str, str]]:
    """(where, id) for every rule id in leapgit's source: a ``rule=`` argument, a
    ``Refusal``'s first one, a comparison with a ``.rule``, and every string constant
    shaped like an id."""
    for path in sorted((ROOT / "leapgit").rglob("*.py")):
        where = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            found: list[str] = []
            if isinstance(node, ast.Call):
                found += [v for k in node.keywords if k.arg == "rule" for v in _ids_in(k.value)]
                name = getattr(node.func, "id", getattr(node.func, "attr", ""))
                if name == "Refusal" and node.args:
                    found += list(_ids_in(node.args[0]))
            elif isinstance(node, ast.Compare) and getattr(node.left, "attr", "") == "rule":
                found += [v for c in node.comparators for v in _ids_in(c)]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                    SHAPED.fullmatch(node.value):
                found.append(node.value)
            yield from ((f"{where}:{getattr(node, 'lineno', '?')}", v) for v in found)


def test_every_rule_id_in_use_is_a_member() -> None:
    members = {r.value for r in RuleId}
    used = list(_used_ids())
    assert len(used) > 150  # the scan sees the rule sites (a broken scan finds none)
    unknown = sorted({f"{where}: {rule!r}" for where, rule in used if rule not in members})
    assert unknown == []


def _resolve(target: str) -> Callable[..., object]:
    module, _, qualname = target.partition(":")
    found: object = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    assert callable(found), target
    return found  # type: ignore[return-value]


@pytest.mark.parametrize("rule", list(RuleId), ids=str)
def test_every_rule_has_a_function_that_cites_it(rule: RuleId) -> None:
    targets = ENFORCED_BY.get(rule, ())
    assert targets, f"no function enforces {rule}"
    for target in targets:
        source = inspect.getsource(_resolve(target))
        assert _cited(rule).search(source), f"{target} does not cite {rule}"


def test_the_registry_names_only_members() -> None:
    assert set(ENFORCED_BY) == set(RuleId)


def _test_sources() -> dict[str, str]:
    here = Path(__file__).resolve()
    return {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted((ROOT / "tests").rglob("*.py")) if p != here}


@pytest.mark.parametrize("rule", list(RuleId), ids=str)
def test_every_rule_is_named_by_a_test(rule: RuleId) -> None:
    pattern = _cited(rule)
    named = [path for path, text in _test_sources().items() if pattern.search(text)]
    assert named, f"no test names {rule}"


def test_a_rule_id_prints_as_its_string() -> None:
    """A str enum: messages read the same whether a site passes RuleId.L6 or "L6"."""
    refusal = Refusal(RuleId.L6, "refs/heads/x", None, None, "m", "h")
    assert refusal.line() == Refusal("L6", "refs/heads/x", None, None, "m", "h").line()
    assert refusal.line().startswith("[L6] ")
    error = RuleViolation("no fifth round", rule=RuleId.L6)
    assert error.lines() == ["no fifth round [L6]"]
    assert RuleId("T7.1") is RuleId.T7_1 and f"{RuleId.CONFIG}" == "config"
