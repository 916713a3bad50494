"""L1: no text of a ball that a process receives (its commands, run by a shell; its goal
and spec, handed to the builder in its environment) holds a NUL byte, which no command
line, path or environment can carry. `leap slice check`, `cut` and `leap ball respec`
refuse one, naming the field, and nothing is recorded: before, the cut took it and
`leap red` died on it later (``ValueError: embedded null byte``, exit 70)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.slices.drafts import base_draft, draft_repo, with_ball, write
from tests.support import leap, ref

NUL = "\0"
MESSAGE = ("holds a NUL byte (\\x00), which no command, path or environment can carry "
           "[L1]; remove it")


def _with_nul(field: str) -> dict[str, Any]:
    value: Any = f"sh t.sh{NUL}"
    if field == "metric.command":
        return with_ball(0, metric={"command": value,
                                    "fields": [{"name": "p95", "better": "lower"}]})
    if field == "live_proof":
        draft = base_draft()
        draft["live_proof"] = value
        return draft
    return with_ball(0, **{field: value})


@pytest.mark.parametrize("field", ["proof", "tests", "rollback", "goal", "spec",
                                   "ball live_proof", "metric.command", "live_proof"])
def test_a_nul_byte_in_a_field_a_process_gets_is_refused_by_check_and_cut(
        tmp_path: Path, field: str) -> None:
    root = draft_repo(tmp_path / "repo")
    assert leap("init", cwd=root).code == 0
    ledger = ref(root, "leap/ledger")
    name = field.replace("ball ", "")
    draft = _with_nul(name) if field != "ball live_proof" else with_ball(
        0, live_proof=f"sh t.sh{NUL}")
    path = write(tmp_path / "slice.yaml", draft)
    where = name if field == "live_proof" else f"balls[0].{name}"
    for command in ("check", "cut"):
        r = leap("slice", command, str(path), cwd=root)
        assert (r.code, r.out) == (2, ""), r
        assert r.err == f"leap: {path}: {where}: {MESSAGE}\n", r
    assert ref(root, "leap/ledger") == ledger  # nothing recorded


def test_a_nul_byte_in_the_yaml_escape_of_a_double_quoted_proof(tmp_path: Path) -> None:
    """The draft as a user writes it: a ``\\0`` escape in a double-quoted string."""
    root = draft_repo(tmp_path / "repo")
    assert leap("init", cwd=root).code == 0
    ledger = ref(root, "leap/ledger")
    text = write(tmp_path / "ok.yaml", base_draft()).read_text()
    text = text.replace('proof: "true"', 'proof: "sh t.sh\\0"', 1)
    assert '"sh t.sh\\0"' in text
    path = write(tmp_path / "slice.yaml", text)
    r = leap("slice", "cut", str(path), cwd=root)
    assert r.code == 2, r
    assert r.err == f"leap: {path}: balls[0].proof: {MESSAGE}\n"
    assert ref(root, "leap/ledger") == ledger


def test_respec_refuses_a_nul_byte_with_the_same_check(tmp_path: Path) -> None:
    root = draft_repo(tmp_path / "repo")
    assert leap("init", cwd=root).code == 0
    cut = leap("slice", "cut", str(write(tmp_path / "slice.yaml", base_draft())), cwd=root)
    assert cut.code == 0, cut
    ledger = ref(root, "leap/ledger")
    repair = base_draft()["balls"][0] | {"proof": f"sh t.sh{NUL}"}
    del repair["id"]
    path = write(tmp_path / "repair.yaml", repair)
    r = leap("ball", "respec", "s1", "a", str(path), cwd=root)
    assert (r.code, r.out) == (2, ""), r
    assert r.err == f"leap: {path}: proof: {MESSAGE}\n", r
    assert ref(root, "leap/ledger") == ledger  # no spec version 2
