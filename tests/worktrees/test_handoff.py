"""The handoff: the ball only, as a file outside the tracked tree plus environment variables;
never committed by accident."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from leapgit.errors import InvalidRecord
from leapgit.ledger.store import Ledger
from leapgit.records import yamlio
from leapgit.worktrees.rounds import record_round
from tests.reds import red_commit
from tests.support import git, leap
from tests.worktrees.conftest import set_config, worktree_of


def test_builder_gets_the_ball_by_file_and_env(diamond: Path, tmp_path: Path,
                                               builder: Callable[..., str]) -> None:
    seen = tmp_path / "seen.json"
    set_config(diamond, builder=builder(f"""
        import json
        keys = [k for k in os.environ if k.startswith("LEAP_")]
        data = {{k: os.environ[k] for k in keys}}
        data["handoff_text"] = pathlib.Path(os.environ["LEAP_HANDOFF"]).read_text()
        data["cwd"] = os.getcwd()
        data["git_dir_env"] = os.environ.get("GIT_DIR")
        pathlib.Path("{seen}").write_text(json.dumps(data))
        # a careless builder commits everything it can see
        pathlib.Path("src/a.py").write_text("A = 2\\n")
        os.system("git add -A && git commit -q -m careless")
    """))
    r = leap("throw", "dia", "--run", cwd=diamond, env={"GIT_DIR": "/nonexistent"})
    data = json.loads(seen.read_text())
    wt = worktree_of(diamond, "A")
    assert data["cwd"] == str(wt)
    assert data["git_dir_env"] is None  # git's location variables are scrubbed
    assert data["LEAP_SLICE"] == "dia" and data["LEAP_BALL"] == "A"
    assert data["LEAP_ROUND"] == "1" and data["LEAP_EPISODE"] == "1"
    assert data["LEAP_SPEC"] == "change a" and data["LEAP_SCOPE"] == "src/a.py\ntests/a.sh"
    handoff = Path(data["LEAP_HANDOFF"])
    assert not handoff.is_relative_to(wt) and not handoff.is_relative_to(diamond / "src")
    content = yamlio.loads(data["handoff_text"].encode(), "handoff")
    assert content["ball"] == "A" and content["scope"][0]["path"] == "src/a.py"
    assert content["previous_receipt"] is None and "B" not in json.dumps(content["scope"])
    tracked = git("ls-tree", "-r", "--name-only", "leap/ball/dia/A", cwd=diamond).split()
    assert sorted(tracked) == ["README.md", "src/a.py", "src/b.py", "src/c.py", "src/d.py",
                               "tests/a.sh"]  # T7.1: the red commit's test, frozen
    assert r.code == 0, r
    # issue 14 item 5: the builder's own commit is folded into the round's one commit
    red = red_commit(diamond, "dia", "A")  # the branch starts at the red commit
    assert git("log", "--format=%s", f"{red}..leap/ball/dia/A", cwd=diamond) == \
        "leap: round 1 of dia/A (pass)"


@pytest.mark.parametrize("said", ["true", "1.0"])
def test_a_report_that_only_looks_like_one_is_refused_and_the_ledger_stays_readable(
        diamond: Path, builder: Callable[..., str], said: str) -> None:
    set_config(diamond, builder=builder(f"""
        pathlib.Path("src/a.py").write_text("A = 2\\n")
        pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: {said}\\nevidence: ok\\n")
    """))
    r = leap("throw", "dia", "--run", cwd=diamond)
    assert r.code == 1, r
    assert "malformed builder report report.yaml: needs outcome -1, 0 or 1" in r.out
    status = leap("status", "dia", cwd=diamond)
    assert status.code == 0 and "A  refused     round 1/4" in status.out, status  # readable


@pytest.mark.parametrize("outcome", [True, 1.0, 2])
def test_no_schema_invalid_receipt_reaches_the_ledger(diamond: Path, outcome: object) -> None:
    leap("throw", "dia", cwd=diamond)
    with Ledger(diamond / ".git") as ledger:
        tip = ledger.tip()
        with pytest.raises(InvalidRecord, match="outcome"):
            record_round(ledger, "dia", "A", outcome=outcome,  # type: ignore[arg-type]
                         evidence="x", round_cap=4)
        assert ledger.tip() == tip
