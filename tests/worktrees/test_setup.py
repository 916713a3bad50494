"""`worktrees.setup` (issue 14 item 8; L2): a command run in each fresh worktree before
anything else (ball worktrees, and the throwaway trees of red and score), for generated or
ignored files the proof needs; its output goes to the round's log, and its failure is a hold
(0) with the tail shown."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from leapgit.ledger import query
from leapgit.ledger.store import Ledger
from leapgit.records.types import Receipt
from leapgit.tribunal.worktree import SetupFailed, temporary
from tests.support import git, leap
from tests.worktrees.conftest import set_config, worktree_of

Builder = Callable[..., str]

# the generated folder is ignored in every worktree (info/exclude lives in the common dir)
SETUP = 'mkdir -p gen && echo "$LEAP_WORKTREE" > gen/where && echo ran >> "$COUNT"'
BUILDER = """
if not pathlib.Path("gen/where").exists():
    print("gen/where is missing")
    sys.exit(3)
pathlib.Path(os.environ["SEEN"], os.environ["LEAP_ROUND"]).write_text("")
r = os.environ["LEAP_ROUND"]
pathlib.Path("src/a.py").write_text(f"A = {r}\\n")
outcome = 0 if r == "1" else 1
pathlib.Path(os.environ["LEAP_REPORT"]).write_text(f"outcome: {outcome}\\nevidence: r{r}\\n")
"""


def set_setup(repo: Path, command: str) -> None:
    path = repo / ".leap" / "config.yaml"
    text = path.read_text()
    lines = [ln for ln in text.splitlines(keepends=True) if not ln.startswith("  setup:")]
    at = lines.index("worktrees:\n") + 1
    lines.insert(at, f"  setup: {json.dumps(command)}\n")
    path.write_text("".join(lines))


@pytest.fixture
def project(diamond: Path, builder: Builder, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    (diamond / ".git" / "info" / "exclude").write_text("gen/\n")
    set_config(diamond, builder=builder(BUILDER))
    set_setup(diamond, SETUP)
    seen = tmp_path / "seen"
    seen.mkdir()
    return diamond, {"COUNT": str(tmp_path / "count"), "SEEN": str(seen)}


def _receipts(repo: Path) -> list[Receipt]:
    with Ledger(repo / ".git") as ledger:
        return query.receipts(ledger.require(), "dia", "A", 1)


def _count(env: dict[str, str]) -> int:
    path = Path(env["COUNT"])
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_setup_runs_once_in_a_fresh_ball_worktree_before_the_builder(
        project: tuple[Path, dict[str, str]]) -> None:
    repo, env = project
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=repo, env=env)
    assert r.code == 0, r
    wt = worktree_of(repo, "A")
    assert (wt / "gen/where").read_text().strip() == str(wt)  # in the ball's own worktree
    assert _count(env) == 1  # once a worktree, not once a round
    got = _receipts(repo)
    assert [(x.round, x.outcome) for x in got] == [(1, 0), (2, 1)]
    first = Path(got[0].log or "").read_text()
    assert first.startswith(f"[leap] worktree setup (worktrees.setup): $ {SETUP}\n")
    assert "[leap] the worktree setup" in first and "exited 0" in first
    assert "worktree setup" not in Path(got[1].log or "").read_text()
    tracked = git("ls-tree", "-r", "--name-only", "leap/ball/dia/A", cwd=repo).split()
    assert not any(p.startswith("gen/") for p in tracked)  # ignored: never a round's file


def test_a_failing_setup_holds_the_round_with_its_tail_and_no_builder_runs(
        project: tuple[Path, dict[str, str]]) -> None:
    repo, env = project
    set_setup(repo, "echo cannot fetch the version >&2; exit 5")
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=repo, env=env)
    assert r.code == 3, r
    assert "cannot fetch the version" in r.out  # the tail, on the terminal
    got = _receipts(repo)
    assert [(x.round, x.outcome, x.claim, x.commit) for x in got] == [(1, 0, False, None)]
    assert "the worktree setup `echo cannot fetch the version >&2; exit 5` exited 5" in \
        got[0].evidence
    assert "the builder did not run" in got[0].evidence
    assert "`leap throw dia --ball A --run` continues at round 2" in got[0].evidence
    assert not any(Path(env["SEEN"]).iterdir())  # the builder never ran
    assert "cannot fetch the version" in Path(got[0].log or "").read_text()
    set_setup(repo, SETUP)  # repaired: the hint's command goes on, setting up first
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=repo, env=env)
    assert r.code == 0, r
    assert [(x.round, x.outcome) for x in _receipts(repo)] == [(1, 0), (2, 1)]
    assert _count(env) == 1 and (Path(env["SEEN"]) / "2").exists()


def test_a_plain_throw_sets_up_the_worktrees_it_creates(
        project: tuple[Path, dict[str, str]]) -> None:
    repo, env = project
    r = leap("throw", "dia", cwd=repo, env=env)
    assert r.code == 0, r
    assert "setup in A: ok" in r.out
    assert (worktree_of(repo, "A") / "gen/where").exists() and _count(env) == 1
    assert leap("throw", "dia", "--ball", "A", "--run", cwd=repo, env=env).code == 0
    assert _count(env) == 1  # set up already: the run does not set it up again


def test_a_plain_throw_whose_setup_fails_holds_and_shows_the_tail(
        project: tuple[Path, dict[str, str]]) -> None:
    repo, env = project
    set_setup(repo, "echo no network >&2; exit 7")
    r = leap("throw", "dia", cwd=repo, env=env)
    assert r.code == 3, r
    assert "setup in A: hold (0): the worktree setup `echo no network >&2; exit 7` exited 7" \
        in r.out
    assert "| no network" in r.out
    assert worktree_of(repo, "A").is_dir()  # thrown: the setup runs again on the next round
    set_setup(repo, SETUP)
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=repo, env=env)  # the hint's command
    assert r.code == 0 and _count(env) == 1, r
    log = Path(_receipts(repo)[0].log or "").read_text()
    assert log.startswith("[leap] worktree setup")


def test_throwaway_trees_are_set_up_and_a_failure_is_a_hold(
        project: tuple[Path, dict[str, str]]) -> None:
    repo, env = project
    commit = git("rev-parse", "main", cwd=repo)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("COUNT", env["COUNT"])
        with temporary(repo, commit) as tree:
            assert (tree / "gen/where").read_text().strip() == str(tree)
        set_setup(repo, "echo no compiler; exit 2")
        with pytest.raises(SetupFailed) as failed:
            with temporary(repo, commit):
                raise AssertionError("nothing runs in a tree whose setup failed")
    err = failed.value
    assert err.exit_code == 3
    assert err.lines()[0].startswith(".leap/config.yaml: worktrees.setup: the worktree setup "
                                     "`echo no compiler; exit 2` exited 2")
    assert "nothing ran there; it printed: no compiler [L2]" in err.lines()[0]
    listed = git("worktree", "list", "--porcelain", cwd=repo)
    assert "leap-tree-" not in listed  # removed as ever


def test_leap_red_holds_when_its_worktree_setup_fails(
        project: tuple[Path, dict[str, str]]) -> None:
    repo, env = project
    set_setup(repo, "echo the generator is broken; exit 9")
    base = git("rev-parse", "main", cwd=repo)
    git("switch", "-q", "-c", "red-a", cwd=repo)
    (repo / "src/a.py").write_text("A = 1\nassert A == 2\n")
    git("commit", "-qam", "red: A is 2", cwd=repo)
    red = git("rev-parse", "HEAD", cwd=repo)
    git("switch", "-q", "main", cwd=repo)
    assert git("merge-base", base, red, cwd=repo) == base
    r = leap("red", "dia", "A", red, cwd=repo, env=env)
    assert r.code == 3, r
    assert "worktrees.setup: the worktree setup `echo the generator is broken; exit 9` " \
        "exited 9" in r.err
    assert "it printed: the generator is broken [L2]" in r.err
