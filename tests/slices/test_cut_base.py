"""A slice's base is a commit of the project, never one of the ledger's own (an orphan
branch of records): `leap slice cut --base leap/ledger` was recorded, and `leap ball base`
then handed the ledger commit out as the base to build on."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.slices.drafts import base_draft, draft_repo, write
from tests.support import git, leap, ref


@pytest.mark.parametrize("rev", ["leap/ledger", "refs/heads/leap/ledger", "LEDGER_ROOT"])
def test_a_ledger_commit_as_base_is_refused_naming_base(tmp_path: Path, rev: str) -> None:
    root = draft_repo(tmp_path / "repo")
    assert leap("init", cwd=root).code == 0
    first = leap("slice", "cut", str(write(tmp_path / "s0.yaml", base_draft() | {
        "slice": "s0", "balls": [b | {"scope": [f"x/{b['id']}.py"]}
                                 for b in base_draft()["balls"]]})), cwd=root)
    assert first.code == 0, first  # the ledger has history: its root is an ancestor
    ledger = ref(root, "leap/ledger")
    assert ledger is not None
    if rev == "LEDGER_ROOT":
        rev = git("rev-list", "--max-parents=0", "leap/ledger", cwd=root)
    sha = git("rev-parse", rev, cwd=root)
    path = write(tmp_path / "slice.yaml", base_draft())
    r = leap("slice", "cut", str(path), "--base", rev, cwd=root)
    assert (r.code, r.out) == (2, ""), r
    assert r.err == (f"leap: --base: {sha[:12]} is a commit of the ledger "
                     "(refs/heads/leap/ledger), not of the project; cut from a commit of "
                     "the project, e.g. the spine's tip (the default is HEAD)\n"), r
    assert ref(root, "leap/ledger") == ledger  # nothing recorded
    assert leap("ball", "base", "s1", "a", cwd=root).code == 2


def test_a_project_commit_as_base_is_still_taken(tmp_path: Path) -> None:
    root = draft_repo(tmp_path / "repo")
    assert leap("init", cwd=root).code == 0
    r = leap("slice", "cut", str(write(tmp_path / "slice.yaml", base_draft())), "--base",
             "main", cwd=root)
    assert r.code == 0, r
