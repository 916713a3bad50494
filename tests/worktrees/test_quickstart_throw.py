"""The quickstart's throw step: a real scripted builder, one claim, one breach rolled back."""

from __future__ import annotations

from pathlib import Path

from tests.support import leap


def test_quickstart_throws_and_rolls_back_a_breach(tmp_path: Path) -> None:
    r = leap("quickstart", "--dir", str(tmp_path), cwd=tmp_path)
    assert r.code == 0, r
    assert "lexer: 1 round(s), last pass (claim)" in r.out
    assert "docs: 1 round(s), last refuse: scope breach (L4, L9): calc/parser.py" in r.out
    assert "rolled back (restore-scope): 1 scope file(s) restored" in r.out
    docs = tmp_path / "calc.leap-worktrees" / "calc-positions" / "docs" / "README.md"
    assert "Errors" not in docs.read_text()  # its scope is back at the base blob
    user_readme = (tmp_path / "calc" / "README.md").read_text()
    assert "Errors" not in user_readme and "Leap-Outcome: -1" in r.out
