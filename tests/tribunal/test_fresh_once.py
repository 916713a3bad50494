"""A command that scores runs each command once in a fresh tree of a commit, once it passed
(``worktree.once_a_tree``): the ball's `tests` at its base are run once for the red's and
the score's harness (T9) and once for the tribunal's baseline, not once a caller and a ball;
the tribunal's tests at the head once for its check and its mutants' baseline. Each `leap`
command asks again, an ask with another commit or time cap runs again, and so does one
whose earlier run failed: the machine may be ready now."""

from __future__ import annotations

import shlex
import threading
import time
from pathlib import Path

from leapgit.records.types import BallRecord, StampedScope
from leapgit.scoring import proofrun, red
from leapgit.tribunal import mechanical, mutants, worktree
from tests.support import git, make_repo


def _project(tmp_path: Path) -> tuple[Path, str, str, Path]:
    root = make_repo(tmp_path / "repo", {"src/a.py": "A = 1\n", "tests/test_a.py": "ok\n"})
    base = git("rev-parse", "HEAD", cwd=root)
    (root / "src/a.py").write_text("A = 2\n")
    git("commit", "-qam", "head", cwd=root)
    return root, base, git("rev-parse", "HEAD", cwd=root), tmp_path / "runs.log"


def _ball(log: Path) -> BallRecord:
    # each run of the tests says where it ran, outside the tree, so the test can count them
    tests = f"git rev-parse HEAD >> {shlex.quote(str(log))}"
    return BallRecord("s", "b", 1, "g", "spec", (StampedScope("src/a.py", "x"),), "true",
                      "restore-scope", tests=tests)


def _asks(root: Path, base: str, head: str, ball: BallRecord) -> None:
    """What `leap run` asks of one wave of two balls on one base: the red's harness, each
    ball's score harness, the tribunal's baseline and, at the head, its check and the
    mutants' baseline."""
    assert ball.tests
    red._green_at_base(root, ball, base, 60.0)
    for _ in range(2):
        assert proofrun.harness(root, base, ball, 60.0) is None
        check, run = mechanical.baseline(root, base, ball.tests, 60.0)
        assert check.result == "ok", check
    assert mechanical.at_head(root, head, ball.tests, 60.0, run).result == "ok"
    harness = mutants.Harness(root, head, ball.tests, 60.0, frozenset({"src/a.py"}))
    assert mutants.baseline(harness) is None


def test_a_scoring_command_runs_the_tests_at_a_base_once(tmp_path: Path) -> None:
    root, base, head, log = _project(tmp_path)
    ball = _ball(log)
    worktree.once_a_tree(_asks)(root, base, head, ball)
    # the typed harness at the base (red and score), the tribunal's baseline, its head run
    assert log.read_text().split() == [base, base, head], log.read_text()

    log.unlink()
    _asks(root, base, head, ball)  # no command around it: every ask runs
    assert log.read_text().split() == [base] * 5 + [head] * 2, log.read_text()


def test_each_command_asks_again_and_another_commit_or_cap_runs_again(tmp_path: Path) -> None:
    root, base, head, log = _project(tmp_path)
    ball = _ball(log)
    assert ball.tests

    @worktree.once_a_tree
    def command(commit: str, timeout: float) -> None:
        assert proofrun.harness(root, commit, ball, timeout) is None

    command(base, 60.0)
    command(base, 60.0)  # a second `leap` command: a process of its own, which asks again
    assert log.read_text().split() == [base, base]

    @worktree.once_a_tree
    def several() -> None:
        command(base, 60.0)  # one command inside another (quickstart) keeps the outer's runs
        for commit, timeout in ((base, 60.0), (head, 60.0), (base, 30.0), (head, 60.0)):
            assert proofrun.harness(root, commit, ball, timeout) is None

    log.unlink()
    several()
    assert log.read_text().split() == [base, head, base], log.read_text()


def test_a_run_that_raised_is_run_again_and_two_asks_at_once_share_one(tmp_path: Path) -> None:
    root, base, _, _ = _project(tmp_path)
    tried: list[Path] = []

    def flaky(tree: Path) -> str:
        tried.append(tree)
        if len(tried) == 1:
            raise OSError("the first try broke")
        time.sleep(0.3)  # long enough for the second thread to ask while it runs
        return (tree / "src/a.py").read_text()

    got: list[str] = []

    @worktree.once_a_tree
    def command() -> None:
        try:
            worktree.in_fresh(root, base, ("flaky",), flaky, bool)
        except OSError:
            pass
        asks = [threading.Thread(target=lambda: got.append(
            worktree.in_fresh(root, base, ("flaky",), flaky, bool))) for _ in range(2)]
        for ask in asks:
            ask.start()
        for ask in asks:
            ask.join()

    command()
    assert got == ["A = 1\n", "A = 1\n"] and len(tried) == 2, (got, tried)
    assert not any(tree.exists() for tree in tried)  # each throwaway tree removed after its run


def test_a_run_that_failed_is_asked_again_and_kept_once_it_passes(tmp_path: Path) -> None:
    """A `leap worker` runs for days: a base that was not green because the machine was not
    ready (here: a file the tests need, outside the tree) is run again at the next ask, and
    only its passing run is kept."""
    root, base, head, log = _project(tmp_path)
    ready = tmp_path / "ready"
    tests = f"echo ran >> {shlex.quote(str(log))} && test -e {shlex.quote(str(ready))}"
    ball = _ball(log)._replace(tests=tests)
    said: list[bool] = []

    @worktree.once_a_tree
    def worker() -> None:
        for n in range(4):
            if n == 2:
                ready.touch()
            said.append(proofrun.harness(root, base, ball, 60.0) is None)
            check, _ = mechanical.baseline(root, base, tests, 60.0)
            said.append(check.result == "ok")

    worker()
    assert said == [False, False, False, False, True, True, True, True], said
    assert log.read_text().split() == ["ran"] * 6  # two failed asks each, one pass each
