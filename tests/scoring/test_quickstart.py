"""`leap quickstart` runs the whole protocol end to end: cut, red, throw to a scripted
builder, score with scripted jurors, merge onto a local bare remote whose server hook judges
the push, audit, and the git log that shows it."""

from __future__ import annotations

from pathlib import Path

from tests.support import git, leap


def test_quickstart_lands_the_slice_and_audits_it(tmp_path: Path) -> None:
    # how long it takes is a benchmark's question, never a pass/fail timer here
    r = leap("quickstart", "--dir", str(tmp_path), cwd=tmp_path)
    assert r.code == 0, r
    for step in ("$ leap red calc-positions lexer", "$ leap throw calc-positions --run",
                 "$ leap score calc-positions parser", "$ leap merge calc-positions",
                 "$ leap audit", "$ git log --graph"):
        assert step in r.out
    assert r.out.count(": 1 (pass), candidate") == 3
    assert "audit: every pass re-derived; all holds" in r.out
    assert "pushed to origin" in r.out
    assert "[L8] refs/heads/main" in r.out and "not an integration merge" in r.out
    root = tmp_path / "calc"
    remote = tmp_path / "calc-remote.git"
    assert git("rev-parse", "main", cwd=root) == git("rev-parse", "main", cwd=remote)
    merges = git("log", "--first-parent", "--format=%(trailers:key=Leap-Ball,valueonly)",
                 "main", cwd=root).split()
    assert merges == ["parser", "docs", "lexer"]
    assert leap("audit", cwd=root).code == 0
