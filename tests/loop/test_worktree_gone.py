"""A ball worktree deleted by hand between the throw and its first round (`rm -rf` of a
folder that looked stray): `leap run` met it as "git is not installed or not on PATH;
install git" (the build's git ran in a folder that is not there), a message and a hint that
lead nowhere. It is the missing-worktree hold every other command gives (L5), whose
commands, run as printed, bring the worktree back on the ball's branch; the slice lands.
Real git behind `git daemon`, scripted author, builder and jurors."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from leapgit.errors import EXIT_HOLD
from tests.loop.test_review_findings import duo
from tests.loop.world import jurors
from tests.templates import Served
from tests.tribunal.jurors import JurorServer


def test_a_worktree_deleted_by_hand_is_a_hold_whose_commands_bring_it_back(
        isolated: Path, served: Served) -> None:
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("wt-gone"), served.daemon, server.url, "gone", ("a", "b"))
        from leapgit.ledger.workspace import open_workspace
        from leapgit.loop.author import author_red

        for ball in ("a", "b"):  # the reds, as `leap run` has its author write them
            author_red(open_workspace(p.work), "gone", ball)
        thrown = p.leap("throw", "gone")
        assert thrown.code == 0, thrown
        place = p.worktree("a", "gone")
        assert place.is_dir()
        shutil.rmtree(place)

        held = p.leap("run", "gone", "--heartbeat", "0")
        assert held.code == EXIT_HOLD, held.out[-3000:]
        assert "not installed" not in held.out, held.out[-3000:]
        assert f"the worktree of gone/a is gone: {place}" in held.out, held.out[-3000:]
        found = re.search(r"recreate it on its branch \(`([^`]+)`\)", held.out)
        assert found is not None, held.out[-3000:]
        subprocess.run(["sh", "-c", found.group(1)], cwd=p.work, check=True,
                       capture_output=True)
        assert place.is_dir()

        ran = p.leap("run", "gone", "--heartbeat", "0")  # "then run this again"
        assert ran.code == 0 and "landed" in ran.out, ran.out[-3000:]
        assert p.remote_tip("refs/heads/main") == p.tip("main") != p.base
        audit = p.leap("audit")
    assert audit.code == 0, audit.out[-3000:]


def test_git_run_in_a_folder_that_is_gone_says_so_not_that_git_is_missing(
        tmp_path: Path) -> None:
    import pytest

    from leapgit import git

    with pytest.raises(git.GitFailed) as raised:
        git.run(["status", "--porcelain"], tmp_path / "gone")
    said = raised.value.lines()[0]
    assert "no such folder" in said and str(tmp_path / "gone") in said, said
    assert "not installed" not in said, said
    assert git.run(["--version"], tmp_path).returncode == 0  # git itself is there


def test_git_run_in_a_file_where_a_folder_was_says_so(tmp_path: Path) -> None:
    """Blind review: a file where the folder was escaped as a raw NotADirectoryError."""
    import pytest

    from leapgit import git

    (tmp_path / "was-a-folder").write_text("x")
    with pytest.raises(git.GitFailed) as raised:
        git.run(["status"], tmp_path / "was-a-folder")
    assert "no such folder" in raised.value.lines()[0], raised.value.lines()


def test_a_ball_branch_deleted_with_its_worktree_is_a_hold_whose_commands_bring_both_back(
        isolated: Path, served: Served) -> None:
    """Stop 36 found: after `rm -rf` of the worktree, `git worktree prune` and `git branch
    -D` of the ball's branch, the hold named `git worktree add PATH BRANCH`, which git
    refuses (the branch is gone). The commands make the branch again at the commit the
    ledger last names for the ball (here its red), and the slice lands."""
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("br-gone"), served.daemon, server.url, "brgone", ("a", "b"))
        from leapgit.ledger.workspace import open_workspace
        from leapgit.loop.author import author_red

        for ball in ("a", "b"):
            author_red(open_workspace(p.work), "brgone", ball)
        assert p.leap("throw", "brgone").code == 0
        place, branch = p.worktree("a", "brgone"), "leap/ball/brgone/a"
        red = subprocess.run(["git", "rev-parse", branch], cwd=p.work, check=True,
                             capture_output=True, text=True).stdout.strip()
        shutil.rmtree(place)
        for cmd in (["worktree", "prune"], ["branch", "-D", branch]):
            subprocess.run(["git", *cmd], cwd=p.work, check=True, capture_output=True)

        held = p.leap("run", "brgone", "--heartbeat", "0")
        assert held.code == EXIT_HOLD, held.out[-3000:]
        assert f"its branch {branch} with it" in held.out, held.out[-3000:]
        found = re.search(r"recreate both at the ball's last recorded commit \(`([^`]+)`\)",
                          held.out)
        assert found is not None, held.out[-3000:]
        assert red in found.group(1), found.group(1)
        subprocess.run(["sh", "-c", found.group(1)], cwd=p.work, check=True,
                       capture_output=True)
        assert place.is_dir()
        back = subprocess.run(["git", "rev-parse", "HEAD"], cwd=place, check=True,
                              capture_output=True, text=True).stdout.strip()
        assert back == red

        ran = p.leap("run", "brgone", "--heartbeat", "0")
        assert ran.code == 0 and "landed" in ran.out, ran.out[-3000:]
        assert p.remote_tip("refs/heads/main") == p.tip("main") != p.base
        audit = p.leap("audit")
    assert audit.code == 0, audit.out[-3000:]
