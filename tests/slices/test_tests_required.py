"""L1: every ball declares `tests`, the suite its candidate must keep green (without it no
score can pass the ball). `leap slice check` and `cut` name the field; nothing runs."""

from __future__ import annotations

from pathlib import Path

from tests.slices.drafts import DELETE, draft_repo, with_ball, write
from tests.support import leap, ref


def test_a_ball_without_tests_is_named_by_check_and_cut_and_nothing_runs(
        tmp_path: Path) -> None:
    root = draft_repo(tmp_path / "repo")
    assert leap("init", cwd=root).code == 0
    ran = tmp_path / "ran"
    draft = with_ball(1, tests=DELETE)
    draft["balls"][0]["tests"] = f"touch {ran}"  # a check never runs a command
    path = write(tmp_path / "slice.yaml", draft)
    for command in ("check", "cut"):
        r = leap("slice", command, str(path), cwd=root)
        assert r.code == 2, r
        assert r.err.startswith(f"leap: {path}: balls[1].tests: ball 'b' declares no `tests` "
                                "command (the suite a candidate must keep green; without it "
                                "no score can pass the ball) [L1]"), r
        assert "balls[0]" not in r.err and not ran.exists()
    assert ref(root, "leap/ledger") is not None  # init's root record, and no slice
    draft["balls"][1]["tests"] = "true"
    assert leap("slice", "check", str(write(path, draft)), cwd=root).code == 0
    assert not ran.exists()


def test_every_ball_missing_tests_is_named_in_one_pass_at_its_own_place(
        tmp_path: Path) -> None:
    """Dogfooding: a ball its schema refused had its missing `tests` named only on the
    second try; and a later ball's message named the place of the first ball the schema
    accepted (`balls[0].tests` for the second ball). One pass, each at its own place."""
    root = draft_repo(tmp_path / "repo")
    assert leap("init", cwd=root).code == 0
    draft = with_ball(0, tests=DELETE, goal=DELETE)
    del draft["balls"][1]["tests"]
    path = write(tmp_path / "slice.yaml", draft)
    r = leap("slice", "check", str(path), cwd=root)
    assert r.code == 2, r
    lines = r.err.splitlines()
    assert lines[0] == f"leap: {path}: balls[0]: missing required field(s): goal [L1]", r
    assert lines[1].startswith(f"leap: {path}: balls[0].tests: ball 'a' declares no"), r
    assert lines[2].startswith(f"leap: {path}: balls[1].tests: ball 'b' declares no"), r
    assert len(lines) == 3, r
