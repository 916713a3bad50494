"""Red team: a scope entry narrowed to a line range (L1: "the exact files, optionally
narrowed to symbols or line ranges"). The range was recorded and never judged: a ball whose
scope is lines 2-3 of src/multi.py rewrote lines 1 and 5 and the server took the round.
Now every judge of a commit (``rules.commits.check_scope``: post-commit, `leap round`,
pre-receive, the spine's candidate history, the audit) keeps the lines outside the range
as the slice's base holds them."""

from __future__ import annotations

import pytest

from leapgit.ledger import layout
from leapgit.records import yamlio
from leapgit.records.types import ThrowRecord
from tests.hooks.test_server_rules import refused
from tests.hooks.world import NOW, World, commit, remote_refs, round_message
from tests.support import git, leap

MULTI = "1\n2\n3\n4\n5\n"
DRAFT = """\
slice: s2
spine: integrator
balls:
  - id: m
    goal: m
    spec: change lines 2-3 of src/multi.py
    scope: [{path: src/multi.py, lines: "2-3"}]
    proof: "true"
    tests: "true"
    rollback: restore-scope
  - id: n
    goal: n
    spec: n
    scope: [src/c.py]
    proof: "true"
    tests: "true"
    rollback: restore-scope
"""
BALL_M = "leap/ball/s2/m"


def _thrown(w: World) -> str:
    """Slice s2 cut on a base holding src/multi.py, ball m thrown; the base is returned."""
    base = commit(w.work, {"src/multi.py": MULTI}, "multi")
    git("branch", "side", base, cwd=w.work)
    (w.work / "d.yaml").write_text(DRAFT)
    cut = leap("slice", "cut", "d.yaml", "--base", base, cwd=w.work)
    assert cut.code == 0, cut
    (w.work / "d.yaml").unlink()
    rec = ThrowRecord("s2", "m", 1, 1, base, BALL_M, NOW)
    w.append({layout.throw_path("s2", "m", 1): yamlio.dumps(rec.to_dict())}, "throw m")
    pushed = w.push("side", "leap/ledger")
    assert pushed.returncode == 0, pushed.stderr
    git("checkout", "-q", "-b", BALL_M, base, cwd=w.work)
    return base


@pytest.mark.parametrize("text", ["EVIL\n2\n3\n4\n5\n", "1\n2\n3\n4\nEVIL\n", "1\n2\n3\n",
                                  "1\n2\n3\n4\n5\nmore\n"])
def test_a_round_outside_its_line_range_is_refused(fresh_world: World, text: str) -> None:
    w = fresh_world
    _thrown(w)
    sha = commit(w.work, {"src/multi.py": text}, round_message("m", 1, 1))
    before = remote_refs(w.bare)
    refused(w, w.push(BALL_M), before, "L4", sha[:12], "src/multi.py",
            "outside lines 2-3")


def test_a_round_inside_its_line_range_lands(fresh_world: World) -> None:
    w = fresh_world
    _thrown(w)
    commit(w.work, {"src/multi.py": "1\ntwo\nthree\nand more\n4\n5\n"}, round_message("m", 1))
    sha = commit(w.work, {"src/multi.py": "1\nTWO\n4\n5\n"}, round_message("m", 2, 1))
    result = w.push(BALL_M)
    assert result.returncode == 0, result.stderr
    assert remote_refs(w.bare)[f"refs/heads/{BALL_M}"] == sha
