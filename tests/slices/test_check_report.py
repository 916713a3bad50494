"""Issue 14 item 11: `leap slice check` names the scope files that do not exist at the base
("to be created") apart from the ones that do, ball by ball, so a typo in a path shows."""

from __future__ import annotations

from pathlib import Path

from tests.slices.drafts import base_draft, draft_repo, write
from tests.support import leap_inproc, ref


def test_check_names_the_files_to_be_created_apart_from_the_existing_ones(
    tmp_path: Path,
) -> None:
    root = draft_repo(tmp_path / "repo")
    assert leap_inproc("init", cwd=root).code == 0
    before = ref(root, "leap/ledger")
    d = base_draft()
    d["balls"][1]["scope"] = ["src/b.py", "src/bb.py", "src/new.py"]  # src/bb.py: a typo
    draft = write(tmp_path / "d.yaml", d)
    for command in ("check", "cut"):
        result = leap_inproc("slice", command, str(draft), cwd=root)
        assert result.code == 0, result
        lines = result.out.splitlines()
        assert "slice s1: ok (2 balls, 5 scope files, 2 to be created, spine integrator)" \
            in lines[0], lines
        assert "  ball a: exists: src/a.py, tests/test_a.py" in lines, lines
        assert "  ball b: exists: src/b.py; to be created: src/bb.py, src/new.py" in lines, lines
        if command == "check":
            assert ref(root, "leap/ledger") == before
