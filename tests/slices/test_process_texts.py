"""L1: no text of a ball that a process receives (its commands, run by a shell; its goal
and spec, handed to the builder in its environment) holds a NUL byte, which no command
line, path or environment can carry, or only blanks: a goal or spec of spaces tells a
builder nothing, and a command of spaces is a shell's exit 0 (a proof that proves nothing,
a rollback that restores nothing). `leap slice check`, `cut` and `leap ball respec` refuse
one, naming the field, and nothing is recorded: before, the cut took a NUL and `leap red`
died on it later (``ValueError: embedded null byte``, exit 70), and took "   " (the schema
refuses the empty text only), found only at `leap red` (a bad-input hunt)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.slices.drafts import base_draft, draft_repo, with_ball, write
from tests.support import leap, ref

NUL = "\0"
MESSAGE = ("holds a NUL byte (\\x00), which no command, path or environment can carry "
           "[L1]; remove it")
BLANK = "holds only blanks [L1]; write it out, or leave an optional field away"
# what a field holds, and what check, cut and respec say of it
TEXTS = {"nul": ("sh t.sh" + NUL, MESSAGE), "space": (" ", BLANK), "lines": ("  \n  ", BLANK)}


def _with_text(field: str, value: str) -> dict[str, Any]:
    if field == "metric.command":
        return with_ball(0, metric={"command": value,
                                    "fields": [{"name": "p95", "better": "lower"}]})
    if field == "live_proof":
        draft = base_draft()
        draft["live_proof"] = value
        return draft
    return with_ball(0, **{field.replace("ball ", ""): value})


@pytest.mark.parametrize("text", list(TEXTS))
@pytest.mark.parametrize("field", ["proof", "tests", "rollback", "goal", "spec",
                                   "ball live_proof", "metric.command", "live_proof"])
def test_a_field_a_process_cannot_take_is_refused_by_check_and_cut(
        tmp_path: Path, field: str, text: str) -> None:
    value, said = TEXTS[text]
    root = draft_repo(tmp_path / "repo")
    assert leap("init", cwd=root).code == 0
    ledger = ref(root, "leap/ledger")
    path = write(tmp_path / "slice.yaml", _with_text(field, value))
    name = field.replace("ball ", "")
    where = name if field == "live_proof" else f"balls[0].{name}"
    for command in ("check", "cut"):
        r = leap("slice", command, str(path), cwd=root)
        assert (r.code, r.out) == (2, ""), r
        assert r.err == f"leap: {path}: {where}: {said}\n", r
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


@pytest.mark.parametrize("text", ["nul", "space"])
def test_respec_refuses_such_a_proof_with_the_same_check(tmp_path: Path, text: str) -> None:
    value, said = TEXTS[text]
    root = draft_repo(tmp_path / "repo")
    assert leap("init", cwd=root).code == 0
    cut = leap("slice", "cut", str(write(tmp_path / "slice.yaml", base_draft())), cwd=root)
    assert cut.code == 0, cut
    ledger = ref(root, "leap/ledger")
    repair = base_draft()["balls"][0] | {"proof": value}
    del repair["id"]
    path = write(tmp_path / "repair.yaml", repair)
    r = leap("ball", "respec", "s1", "a", str(path), cwd=root)
    assert (r.code, r.out) == (2, ""), r
    assert r.err == f"leap: {path}: proof: {said}\n", r
    assert ref(root, "leap/ledger") == ledger  # no spec version 2


def test_each_ball_of_a_slice_cut_with_blanks_before_the_check_can_be_repaired(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A blind review: a respec checks the whole slice, the other balls as recorded, so a
    slice cut with two blank proofs before this check could have neither repaired (each
    respec was refused for the other ball's proof, named in the repair's file)."""
    from leapgit.slices import check

    root = draft_repo(tmp_path / "repo")
    assert leap("init", cwd=root).code == 0
    draft = base_draft()
    for ball in draft["balls"]:
        ball["proof"] = "   "
    with monkeypatch.context() as m:  # a cut made before the check existed
        m.setattr(check, "blank_texts", lambda *_: [])
        cut = leap("slice", "cut", str(write(tmp_path / "slice.yaml", draft)), cwd=root)
        assert cut.code == 0, cut
    for ball in ("a", "b"):
        repair = next(b for b in base_draft()["balls"] if b["id"] == ball)
        del repair["id"]
        repair.pop("depends_on", None)
        r = leap("ball", "respec", "s1", ball, str(write(tmp_path / f"{ball}.yaml", repair)),
                 cwd=root)
        assert r.code == 0, (ball, r)
