from __future__ import annotations

from pathlib import Path

from tests.support import git, leap


def test_quickstart_runs_the_flow_in_a_throwaway_repository(tmp_path: Path) -> None:
    result = leap("quickstart", "--dir", str(tmp_path), cwd=tmp_path, timeout=120)
    assert result.code == 0, result
    root = tmp_path / "calc"
    assert f"a throwaway repository in {root}" in result.out
    for step in ("$ leap init", "$ leap slice check", "$ leap slice cut", "$ leap status",
                 "$ leap log"):
        assert step in result.out
    assert git("show", "leap/ledger:slices/calc-positions/slice.yaml", cwd=root)
    status = leap("status", "--json", cwd=root)
    assert status.code == 0 and '"calc-positions"' in status.out


def test_quickstart_refuses_a_folder_in_use(tmp_path: Path) -> None:
    (tmp_path / "calc").mkdir()
    (tmp_path / "calc" / "mine.txt").write_text("keep me")
    result = leap("quickstart", "--dir", str(tmp_path), cwd=tmp_path)
    assert result.code == 2 and "not empty" in result.err
    assert (tmp_path / "calc" / "mine.txt").read_text() == "keep me"
