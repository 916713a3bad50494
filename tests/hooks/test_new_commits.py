"""``Objects.new_commits``, the one reading of "the commits a push or a ball branch brings"
that every rule asks: the same commits, in the same order, as `git rev-list --reverse
--topo-order HEAD ^EXCLUDED...`, whether it walks a ball branch's rounds along their single
parents (the post-commit hook's way, without dulwich's walker) or walks the graph."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from leapgit.ledger.repo import open_repo
from leapgit.rules.objects import Objects
from tests.support import commit_all, git, make_repo


def _commits(repo: Path, names: list[str]) -> list[str]:
    out = []
    for name in names:
        (repo / f"{name}.txt").write_text(name + "\n")
        commit_all(repo, name)
        out.append(git("rev-parse", "HEAD", cwd=repo))
    return out


def _rev_list(repo: Path, head: str, exclude: list[str]) -> list[str]:
    listed = git("rev-list", "--reverse", "--topo-order", head, *(f"^{e}" for e in exclude),
                 cwd=repo)
    return listed.split() if listed else []


def _walked(repo: Path, head: str, exclude: list[str]) -> list[str]:
    with open_repo(str(repo / ".git")) as opened:
        return [c.id.decode() for c in Objects(opened).new_commits(head, exclude)]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "r", {"README.md": "r\n"})
    _commits(repo, ["s1", "s2", "s3"])  # a spine of four commits
    return repo


@pytest.mark.parametrize("rounds", [1, 3, 17, 20])  # one, a ball's four, past the chain's reach
def test_a_ball_branchs_rounds_parents_first(repo: Path, rounds: int) -> None:
    base = git("rev-parse", "HEAD", cwd=repo)
    git("checkout", "-q", "-b", "ball", cwd=repo)
    made = _commits(repo, [f"r{i}" for i in range(rounds)])
    assert _walked(repo, made[-1], [base]) == made == _rev_list(repo, made[-1], [base])


def test_a_branch_cut_below_the_excluded_tip_brings_only_its_own_commits(repo: Path) -> None:
    """A chain of single parents that passes the excluded commit's history below its tip
    (cut from HEAD~2) never reaches the tip itself: the walk must not bring the spine's
    older commits along."""
    tip = git("rev-parse", "HEAD", cwd=repo)
    git("checkout", "-q", "-b", "side", "HEAD~2", cwd=repo)
    made = _commits(repo, ["x1", "x2"])
    assert _walked(repo, made[-1], [tip]) == made == _rev_list(repo, made[-1], [tip])


def test_a_merge_on_the_way_is_walked_as_a_graph(repo: Path) -> None:
    base = git("rev-parse", "HEAD", cwd=repo)
    git("checkout", "-q", "-b", "other", cwd=repo)
    _commits(repo, ["o1"])
    git("checkout", "-q", "-b", "ball", base, cwd=repo)
    _commits(repo, ["b1"])
    git("merge", "-q", "--no-edit", "other", cwd=repo)
    _commits(repo, ["b2"])
    head = git("rev-parse", "HEAD", cwd=repo)
    walked = _walked(repo, head, [base])
    assert sorted(walked) == sorted(_rev_list(repo, head, [base]))
    assert len(walked) == 4 and walked[-1] == head  # o1, b1, the merge, b2: parents first


def test_the_excluded_tip_itself_brings_nothing(repo: Path) -> None:
    tip = git("rev-parse", "HEAD", cwd=repo)
    assert _walked(repo, tip, [tip]) == [] == _rev_list(repo, tip, [tip])


def test_a_ball_branchs_rounds_are_read_without_the_graph_walker(repo: Path) -> None:
    """The post-commit hook reads a round's commits along their parents: dulwich's walker
    (and its tree-diff modules) stays unloaded, which a recording hook would pay ~1 ms for."""
    base = git("rev-parse", "HEAD", cwd=repo)
    git("checkout", "-q", "-b", "ball", cwd=repo)
    head = _commits(repo, ["r1", "r2"])[-1]
    code = ("import sys; from leapgit.ledger.repo import open_repo; "
            "from leapgit.rules.objects import Objects; "
            f"o = Objects(open_repo({str(repo / '.git')!r})); "
            f"assert len(o.new_commits({head!r}, [{base!r}])) == 2; "
            "print('dulwich.walk' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert run.stdout.strip() == "False"
