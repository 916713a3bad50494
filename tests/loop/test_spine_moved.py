"""A slice lands after the spine moved under it (a blind review of `leap run`): two slices
cut at one base, the first lands, then `leap run` of the second. Before, its balls were
thrown from the moved spine's tip while their reds stood on the cut's base, so no ball
branch held its red test, every round was refused (T7.1: "frozen test files edited after
red") and the respec the stop named led to the same refusal. A ball without dependencies
is now thrown from the base its red was written on, as a dependent ball is thrown from its
stack on the slice's base; the merge lands each candidate onto the spine as it stands."""

from __future__ import annotations

from pathlib import Path

from tests.loop.world import CODE, jurors, red_test, scripted_author
from tests.scoring.world import Project, ball_yaml, build_project
from tests.support import git
from tests.templates import Served
from tests.tribunal.jurors import JurorServer


def _slice(slice_id: str, balls: str) -> str:
    return f"slice: {slice_id}\nspine: integrator\nballs:\n" + "".join(
        ball_yaml(b, [f"calc/{b}.py", f"tests/test_{b}.py"], f"test_{b}") for b in balls)


def _two_slices(base: Path, served: Served, url: str) -> Project:
    p = build_project(base, served.daemon, url, _slice("s1", "ab") + "\n---\n" +
                      _slice("s2", "cd"), None,
                      {b: {f"calc/{b}.py": CODE[b]} for b in "abcd"})
    scripted_author(p, {b: [f"tests/test_{b}.py", red_test(b)] for b in "abcd"})
    return p


def test_a_slice_cut_beside_one_that_landed_first_lands_after_it(isolated: Path,
                                                                 served: Served) -> None:
    with JurorServer("openai", jurors) as server:
        p = _two_slices(served.folder("moved-two"), served, server.url)
        first = p.leap("run", "s1", "--heartbeat", "0")
        assert first.code == 0 and "landed" in first.out, first.out[-2000:]
        moved = p.tip("main")
        assert moved != p.base
        second = p.leap("run", "s2", "--heartbeat", "0")
    assert second.code == 0 and "landed" in second.out, second.out[-3000:]
    assert git("merge-base", "--is-ancestor", moved, "main", cwd=p.work) == ""
    for b in "abcd":  # every ball's bytes are on the spine
        assert git("show", f"main:calc/{b}.py", cwd=p.work) == CODE[b].rstrip("\n")


def _red_on_the_tip(p: Project, slice_id: str, ball: str) -> str:
    """A red commit for ``ball`` on the base `leap ball base` names, recorded."""
    from tests.scoring.world import commit_files

    base = p.leap("ball", "base", slice_id, ball)
    assert base.code == 0, base
    commit = commit_files(p.work, base.out.split()[0],
                          {f"tests/test_{ball}.py": red_test(ball)}, f"red {ball}")
    recorded = p.leap("red", slice_id, ball, commit)
    assert recorded.code == 0, recorded
    return commit


def test_a_red_the_spine_moved_past_before_the_throw_is_written_again(
        isolated: Path, served: Served) -> None:
    """Its red written, the spine moved (the other slice landed) before the ball was thrown:
    by hand, the throw holds and names where to write the red again, which leads on; under
    `leap run`, the test author writes it again by itself and the slice lands."""
    with JurorServer("openai", jurors) as server:
        p = _two_slices(served.folder("moved-red"), served, server.url)
        old_c = _red_on_the_tip(p, "s2", "c")
        _red_on_the_tip(p, "s2", "d")
        first = p.leap("run", "s1", "--heartbeat", "0")
        assert first.code == 0 and "landed" in first.out, first.out[-2000:]
        held = p.leap("throw", "s2", "--ball", "c")
        assert held.code == 3 and "s2/c's red 1 stands on" in held.err, held
        assert "`leap ball base s2 c` names it), then `leap red s2 c COMMIT`" in held.err
        new_c = _red_on_the_tip(p, "s2", "c")  # the hint, exactly
        assert new_c != old_c
        thrown = p.leap("throw", "s2", "--ball", "c")
        assert thrown.code == 0, thrown
        assert git("merge-base", "--is-ancestor", new_c, "leap/ball/s2/c", cwd=p.work) == ""
        landed = p.leap("run", "s2", "--heartbeat", "0")  # d: the author writes it again
    assert landed.code == 0 and "landed" in landed.out, landed.out[-3000:]
    assert "the spine moved since its red" in landed.out, landed.out[-3000:]
