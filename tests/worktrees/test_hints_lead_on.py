"""Issue 14 (6, 11): every hint leads on. A test runs exactly the command a refusal names
and shows it makes progress, and then the refused command goes through (or, where a rule
forbids that for good, the named command moves the ball on). Real git, the real CLI.

(a) a throw refused because a ball's branch or worktree already exists, although the ball was
    never thrown (a throw killed before it recorded anything leaves that) and it holds work
    no throw recorded: its hint is `leap worktree prune`, which keeps it and names --force;
    one that holds no work the next throw takes over;
(b) a folder in a worktree's place that is no worktree: prune never removes a folder leapgit
    did not make, so no hint may send the user there;
(c) `leap red` refused because the ball is in flight names what leads on."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from leapgit.errors import UsageError
from leapgit.ledger.workspace import open_workspace
from leapgit.worktrees import place
from tests.reds import red_commit
from tests.scoring.world import commit_files
from tests.support import git, leap, ref
from tests.worktrees.conftest import set_config

Builder = Callable[..., str]


def _hinted(err: str) -> list[str]:
    """The commands a message names, in backticks, that start with `leap`."""
    return re.findall(r"`(leap [^`]*)`", err)


def _leftover(repo: Path, ball: str = "A") -> tuple[Path, str]:
    """What a throw killed (SIGKILL) between `git worktree add` and its throw record leaves:
    the ball's branch at its start point (the red commit) and its worktree."""
    path = repo.parent / "repo.leap-worktrees" / "dia" / ball
    branch = f"leap/ball/dia/{ball}"
    git("worktree", "add", "--quiet", "-b", branch, str(path), red_commit(repo, "dia", ball),
        cwd=repo)
    return path, branch


def test_a_never_thrown_balls_branch_left_alone_is_taken_over_by_the_next_throw(
        diamond: Path) -> None:
    """A throw killed before its record, whose worktree folder went since (`rm -rf`, then
    git's own `worktree prune`): the branch alone is left, at the start point. It holds no
    work, so the next throw makes the ball afresh, as it does over a clean worktree (before:
    refused, naming `leap worktree prune`; a `leap run` stopped there)."""
    path, branch = _leftover(diamond)
    git("worktree", "remove", "--force", str(path), cwd=diamond)
    thrown = leap("throw", "dia", "--ball", "A", cwd=diamond)
    assert thrown.code == 0, thrown
    assert ref(diamond, branch) == red_commit(diamond, "dia", "A")
    assert path.is_dir()


def test_a_leftover_branch_holding_commits_is_kept_unless_forced(diamond: Path) -> None:
    path, branch = _leftover(diamond)
    work = commit_files(diamond, red_commit(diamond, "dia", "A"), {"src/a.py": "A = 9\n"},
                        "someone's work")
    git("update-ref", f"refs/heads/{branch}", work, cwd=diamond)
    refused = leap("throw", "dia", "--ball", "A", cwd=diamond)  # work no throw recorded
    assert refused.code == 2, refused
    assert f"branch {branch} or worktree {path} already exists" in refused.err
    assert _hinted(refused.err) == ["leap worktree prune"], refused.err
    kept = leap("worktree", "prune", cwd=diamond)
    assert kept.code == 0, kept
    assert "dia/A: kept: its branch holds commits no throw recorded" in kept.out, kept
    assert "--force removes it" in kept.out
    assert ref(diamond, branch) == work
    forced = leap("worktree", "prune", "--force", cwd=diamond)
    assert "dia/A: removed: left over by a throw that never recorded one" in forced.out, forced
    assert ref(diamond, branch) is None
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0


def test_a_stray_folder_in_a_worktrees_place_names_no_prune(diamond: Path) -> None:
    path = diamond.parent / "repo.leap-worktrees" / "dia" / "A"
    path.mkdir(parents=True)
    (path / "notes.txt").write_text("mine\n")
    refused = leap("throw", "dia", "--ball", "A", cwd=diamond)
    assert refused.code == 2 and "is not a worktree of this ball" in refused.err, refused
    assert _hinted(refused.err) == [], refused.err
    ws = open_workspace(diamond)
    with pytest.raises(UsageError) as caught:  # the last guard, for a folder made meanwhile
        place.add(ws, path, "leap/ball/dia/A", red_commit(diamond, "dia", "A"),
                  new_branch=True)
    assert "is not a worktree of this ball" in str(caught.value)
    assert _hinted(str(caught.value)) == [], caught.value
    # the old hint's command leaves the folder: prune removes only worktrees leapgit made
    assert leap("worktree", "prune", cwd=diamond).code == 0
    assert (path / "notes.txt").read_text() == "mine\n"


def test_the_in_flight_red_refusal_names_what_leads_on(diamond: Path, builder: Builder
                                                      ) -> None:
    set_config(diamond, builder=builder(
        "pathlib.Path('src/a.py').write_text('A = 2\\n')\n"
        "pathlib.Path(os.environ['LEAP_REPORT']).write_text('outcome: 1\\nevidence: a\\n')\n"))
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    other = commit_files(diamond, git("rev-parse", "HEAD", cwd=diamond),
                         {"tests/a.sh": "exit 1\n"}, "another red")
    refused = leap("red", "dia", "A", other, cwd=diamond)
    assert refused.code == 1 and "is in flight" in refused.err, refused
    hinted = _hinted(refused.err)
    assert hinted == ["leap throw dia --ball A --run"], refused.err
    run = leap(*hinted[0].split()[1:], cwd=diamond)
    assert run.code == 0, run
    assert "A: 1 round(s), last pass (claim)" in run.out, run.out


def test_someone_elses_worktree_in_a_balls_place_is_named_and_kept(diamond: Path) -> None:
    path = diamond.parent / "repo.leap-worktrees" / "dia" / "A"
    git("worktree", "add", "--quiet", "-b", "mine", str(path), "main", cwd=diamond)
    pruned = leap("worktree", "prune", cwd=diamond)
    assert pruned.code == 0, pruned
    assert "dia/A: kept: the worktree in the ball's place is on refs/heads/mine, not on " \
        "leap/ball/dia/A: move it away with `git worktree move`" in pruned.out, pruned
    assert path.is_dir() and ref(diamond, "mine") is not None
    git("worktree", "move", str(path), str(diamond.parent / "elsewhere"), cwd=diamond)
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0


def _half_made(repo: Path, ball: str = "A") -> tuple[Path, str]:
    """What a kill inside `git worktree add` leaves (a blind review, SIGKILL while git
    checked out): the worktree locked by git for the add, its index without any entry, and
    only some of its files written."""
    path, branch = _leftover(repo, ball)
    admin = Path(git("rev-parse", "--git-dir", cwd=path))
    admin = admin if admin.is_absolute() else (path / admin).resolve()
    (admin / "locked").write_text("initializing\n")
    (admin / "index").unlink()
    (path / "README.md").unlink()  # not checked out yet
    return path, branch


@pytest.mark.parametrize("how", ["prune", "throw"])
def test_a_worktree_add_a_kill_stopped_is_made_again(diamond: Path, how: str) -> None:
    """Before: every file of the half-made checkout read as uncommitted work, so prune kept
    it, `prune --force` failed on git's lock, every throw was refused naming prune, and the
    slice was stuck. Its files are git's checkout: prune removes it, or the next throw makes
    the ball afresh over it."""
    path, branch = _half_made(diamond)
    if how == "prune":
        pruned = leap("worktree", "prune", cwd=diamond)
        assert pruned.code == 0, pruned
        assert "dia/A: removed: left over by a throw that never recorded one" in pruned.out, \
            pruned.out
        assert not path.exists() and ref(diamond, branch) is None
    thrown = leap("throw", "dia", "--ball", "A", cwd=diamond)
    assert thrown.code == 0, thrown
    assert (path / "README.md").is_file() and git("status", "--porcelain", cwd=path) == ""


def test_a_half_made_worktree_holding_a_file_of_someones_is_kept(diamond: Path) -> None:
    """Nothing lost: a file the checkout did not write (or one changed) is work, kept
    unless forced; forced, git's lock does not stop the removal."""
    path, _ = _half_made(diamond)
    (path / "notes.txt").write_text("mine\n")
    kept = leap("worktree", "prune", cwd=diamond)
    assert "dia/A: kept: uncommitted work (notes.txt); --force removes it" in kept.out, kept
    assert (path / "notes.txt").read_text() == "mine\n"
    refused = leap("throw", "dia", "--ball", "A", cwd=diamond)
    assert refused.code == 2 and _hinted(refused.err) == ["leap worktree prune"], refused
    forced = leap("worktree", "prune", "--force", cwd=diamond)
    assert forced.code == 0 and not path.exists(), forced
