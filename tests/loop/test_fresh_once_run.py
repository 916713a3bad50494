"""A passing run is not repeated within one `leap run` (``worktree.once_a_tree``), end to
end: a wave of two balls on one base runs the ball's `tests` there once for both reds' and
both scores' harness, and once for the tribunal's baseline. Each run of the tests writes
where it ran (the commit and the throwaway tree) outside the project."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.loop.test_review_findings import duo
from tests.loop.world import jurors
from tests.templates import Served
from tests.tribunal.jurors import JurorServer


def test_leap_run_runs_the_tests_at_a_wave_s_base_once(
        isolated: Path, served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = served.folder("fresh-once-run")
    log = folder / "tests-ran.log"
    monkeypatch.setattr("tests.scoring.world.TESTS",
                        f"echo $(git rev-parse HEAD)@$PWD >> {log} && python -m unittest -q")
    with JurorServer("openai", jurors) as server:
        p = duo(folder, served.daemon, server.url, "fo", ("a", "b"))
        res = p.leap("run", "fo", "--json", "--heartbeat", "0")
    assert res.code == 0, res.out[-3000:]
    ran = [line.split("@") for line in log.read_text().split()]
    kinds = Counter((commit == p.base, Path(where).parent.name.rsplit("-", 1)[0])
                    for commit, where in ran)
    # at the base: the red's harness once for both balls, the score's never again; the
    # tribunal's baseline once (the rest at the base are the fake-green checks, each in a
    # tree of its own with the red's test files: once a ball at its red, once at its score)
    assert kinds[(True, "leap-red-base")] == 1 and kinds[(True, "leap-score-base")] == 0, kinds
    assert kinds[(True, "leap-tree")] == 1 + 4, kinds
    assert kinds[(False, "leap-tree")] == 2, kinds  # each ball's head: the tribunal's check
