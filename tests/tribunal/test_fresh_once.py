"""A command that scores keeps a passing run in a fresh tree of a commit
(``worktree.once_a_tree``): the ball's `tests` at its base are run once for the red's and
the score's harness (T9) and once for the tribunal's baseline, not once a caller and a ball.
Each `leap` command asks again; so does an ask with another commit or time cap, one whose
earlier run failed (the machine may be ready now), and one a failure after the pass puts
in doubt (a kept pass gone stale is no -1 charged to the builder). Measurements (the
metric), the red's proof and the mutants' control run fresh every time."""

from __future__ import annotations

import shlex
import threading
import time
from pathlib import Path

from leapgit.records.types import BallRecord, StampedScope
from leapgit.scoring import proofrun, red
from leapgit.tribunal import mechanical, mutants, worktree
from leapgit.tribunal.changes import read_change
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


def _asks(root: Path, base: str, head: str, ball: BallRecord, kept: bool = True) -> None:
    """What `leap run` asks of one wave of two balls on one base: the red's harness, each
    ball's score harness and the tribunal's baseline; at the head, the tribunal's check and
    its mutants' control."""
    assert ball.tests
    red._green_at_base(root, ball, base, 60.0)
    said = []
    for _ in range(2):
        assert proofrun.harness(root, base, ball, 60.0) is None
        check, run = mechanical.baseline(root, base, ball.tests, 60.0)
        assert check.result == "ok", check
        said.append(check.detail)
    # a kept pass is said as one in the tribunal's record (a blind review: it read as new)
    assert said[1] == ("exit 0 (kept: run earlier in this command)" if kept else "exit 0"), said
    head_run = mechanical.tests_at(root, head, ball.tests, 60.0)
    assert mechanical.at_head(head_run, run).result == "ok"
    harness = mutants.Harness(root, head, ball.tests, 60.0, frozenset({"src/a.py"}))
    assert mutants.baseline(harness) is None


def test_a_scoring_command_runs_the_tests_at_a_base_once(tmp_path: Path) -> None:
    root, base, head, log = _project(tmp_path)
    ball = _ball(log)
    worktree.once_a_tree(_asks)(root, base, head, ball)
    # the typed harness at the base (red and score), the tribunal's baseline; at the head,
    # its check and the mutants' control, each its own run
    assert log.read_text().split() == [base, base, head, head], log.read_text()

    log.unlink()
    _asks(root, base, head, ball, kept=False)  # no command around it: every ask runs
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
            worktree.in_fresh(root, base, ("flaky",), flaky, bool)[0]
        except OSError:
            pass
        asks = [threading.Thread(target=lambda: got.append(
            worktree.in_fresh(root, base, ("flaky",), flaky, bool)[0])) for _ in range(2)]
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


def _service(tmp_path: Path) -> tuple[Path, str, str, str, Path, BallRecord]:
    """A project whose tests need a service outside the tree (here: a file), and a
    candidate that adds a test."""
    root, base, _, log = _project(tmp_path)
    (root / "tests/test_new.py").write_text("new\n")
    git("add", "tests/test_new.py", cwd=root)
    git("commit", "-qm", "candidate", cwd=root)
    head = git("rev-parse", "HEAD", cwd=root)
    up = tmp_path / "service-up"
    up.touch()
    tests = f"test -e {shlex.quote(str(up))} && echo ran >> {shlex.quote(str(log))}"
    ball = _ball(log)._replace(tests=tests, scope=(StampedScope("src/a.py", "x"),
                                                   StampedScope("tests/test_new.py", "x")))
    return root, base, head, git("rev-parse", "HEAD^{tree}", cwd=root), up, ball


def test_a_kept_base_pass_gone_stale_is_a_hold_not_a_refusal(tmp_path: Path) -> None:
    """A blind review: in one long `leap run`, a's base passed, then the service the suite
    needs went down; b's candidate failed its tests, and the kept pass made that an L7.4
    -1 where a fresh look at the base gives the T9 hold (the builder is not charged)."""
    root, base, head, candidate, up, ball = _service(tmp_path)

    @worktree.once_a_tree
    def run() -> tuple[proofrun.Proved, mechanical.Mechanical]:
        assert proofrun.harness(root, base, ball, 60.0) is None  # a's scoring: green
        assert ball.tests
        assert mechanical.baseline(root, base, ball.tests, 60.0)[0].result == "ok"
        up.unlink()  # the service goes down
        change = read_change(root, base, head)
        return (proofrun.run_proofs(root, base, head, candidate, ball, 60.0),
                mechanical.run_checks(root, change, ball.tests, None, 60.0))

    proved, checks = run()
    assert (proved.step.result, proved.step.rule) == ("hold", "T9"), proved.step
    # the hold says why (a blind review: it sent the user to repair a `tests` that is fine)
    assert "the harness is INVALID" in proved.step.detail and "the tests passed there " \
        "earlier in this command: the suite is flaky, or something it needs outside the " \
        "tree changed" in proved.step.detail and "need repair" not in proved.step.detail, \
        proved.step
    # the candidate's failing runs stay in the evidence, before the base's
    assert [(r.type, r.exit_code) for r in proved.runs] == [("proof", 0), ("tests", 1),
                                                            ("tests", 1)], proved.runs
    assert proved.runs[-1].where.startswith("clean worktree of the base"), proved.runs
    assert checks.invalid, checks
    assert [(c.name, c.result) for c in checks.checks] == [
        ("new tests pass at head", "fail"), ("base is cleanly green", "invalid")], checks
    assert checks.checks[-1].detail.startswith("it passed earlier in this command, and now: "), \
        checks


def test_a_failure_after_a_pass_that_still_holds_is_the_candidate_s(tmp_path: Path) -> None:
    """The same look again finds the base green: the candidate's own failure stands."""
    root, base, head, candidate, _, ball = _service(tmp_path)
    assert ball.tests
    failing = ball._replace(proof="exit 1")

    @worktree.once_a_tree
    def run() -> proofrun.Proved:
        assert proofrun.harness(root, base, failing, 60.0) is None
        return proofrun.run_proofs(root, base, head, candidate, failing, 60.0)

    proved = run()
    assert (proved.step.result, proved.step.rule) == ("fail", "L7.4"), proved.step


def test_asks_that_wait_on_a_failing_run_share_it_and_a_later_ask_runs_again(
        tmp_path: Path) -> None:
    """A blind review: asks waiting on a run that failed each ran it again, one after
    another (four balls on a base whose suite hangs: four time caps in a row)."""
    root, base, _, _ = _project(tmp_path)
    ran: list[int] = []

    def failing(tree: Path) -> int:
        ran.append(1)
        time.sleep(0.5)
        return 1

    got: list[int] = []

    @worktree.once_a_tree
    def command() -> None:
        asks = [threading.Thread(target=lambda: got.append(
            worktree.in_fresh(root, base, ("hangs",), failing, lambda code: code == 0)[0]))
            for _ in range(3)]
        for ask in asks:
            ask.start()
        for ask in asks:
            ask.join()
        assert len(ran) == 1, ran  # the three asked while it ran
        worktree.in_fresh(root, base, ("hangs",), failing, lambda code: code == 0)

    command()
    assert got == [1, 1, 1] and len(ran) == 2, (got, ran)


def test_a_metric_and_a_red_s_proof_run_fresh_every_time(tmp_path: Path) -> None:
    """A blind review: the keep-or-revert metric is a measurement (a p95 under load), and
    the champion's was reused for every ball of the run. It is measured at each ask."""
    from leapgit.records.types import Metric, MetricField
    from leapgit.scoring import keep

    root, base, _, log = _project(tmp_path)
    metric = Metric(f"echo ran >> {shlex.quote(str(log))}; echo '{{\"p95_ms\": 1}}'",
                    (MetricField("p95_ms", "lower"),))

    @worktree.once_a_tree
    def command() -> None:
        for _ in range(2):
            _, fields, problem = keep._measure(root, base, metric, "champion", 60.0)
            assert problem is None and fields == {"p95_ms": 1.0}, (fields, problem)

    command()
    assert log.read_text().split() == ["ran", "ran"], log.read_text()


def test_a_failure_looks_at_the_base_again_only_after_a_kept_pass(tmp_path: Path) -> None:
    """Blind reviews: the look again ran after every failing candidate of a command that
    keeps runs, a kept pass or not (one `leap score`: the base suite twice), and after a
    candidate that changed its own bytes, whose -1 a flaky base must not turn into a hold."""
    root, base, head, candidate, _, ball = _service(tmp_path)
    log = tmp_path / "runs.log"
    failing = ball._replace(proof="exit 1")
    tampering = ball._replace(proof="echo changed >> src/a.py")
    assert ball.tests

    def base_runs() -> int:
        return log.read_text().split().count("ran") if log.exists() else 0

    @worktree.once_a_tree
    def score(b: BallRecord) -> proofrun.Proved:
        return proofrun.run_proofs(root, base, head, candidate, b, 60.0)

    proved = score(failing)  # its own command: the base's pass was run just now
    assert proved.step.rule == "L7.4" and base_runs() == 1, (proved.step, base_runs())

    @worktree.once_a_tree
    def wave() -> proofrun.Proved:
        assert proofrun.harness(root, base, ball, 60.0) is None  # another ball's pass
        return proofrun.run_proofs(root, base, head, candidate, tampering, 60.0)

    proved = wave()
    assert proved.step.rule == "L7.4" and "changed bytes" in proved.step.detail, proved.step
    assert base_runs() == 2, base_runs()  # the kept pass stands: no look again

    # green at the base, red at the head (which adds the test file)
    tests = f"echo ran >> {shlex.quote(str(log))} && test ! -e tests/test_new.py"

    @worktree.once_a_tree
    def checks() -> mechanical.Mechanical:
        return mechanical.run_checks(root, read_change(root, base, head), tests, None, 60.0)

    said = checks()  # a failing head under one command: the base once, no look again
    assert [(c.name, c.result) for c in said.checks][:2] == [
        ("base is cleanly green", "ok"), ("new tests pass at head", "fail")], said
    assert base_runs() == 2 + 3, base_runs()  # the base, the head, the fake-green check


def test_asks_waiting_on_a_run_that_raised_or_a_look_again_share_it(tmp_path: Path) -> None:
    """A blind review: a run that raised (a setup that fails after its time cap), and
    looks again asked at once by a wave's failing candidates, ran once an ask, one after
    another."""
    root, base, _, _ = _project(tmp_path)
    ran: list[int] = []

    def broken(tree: Path) -> int:
        ran.append(1)
        time.sleep(0.5)
        raise OSError("the setup failed")

    def green(tree: Path) -> int:
        ran.append(1)
        time.sleep(0.5)
        return 0

    raised: list[str] = []
    got: list[int] = []

    def ask_broken() -> None:
        try:
            worktree.in_fresh(root, base, ("broken",), broken, lambda code: code == 0)
        except OSError as exc:
            raised.append(str(exc))

    def ask_again() -> None:
        got.append(worktree.in_fresh(root, base, ("green",), green, lambda code: code == 0,
                                     again=True)[0])

    @worktree.once_a_tree
    def command() -> None:
        for target in (ask_broken, ask_again):
            asks = [threading.Thread(target=target) for _ in range(3)]
            for ask in asks:
                ask.start()
            for ask in asks:
                ask.join()

    command()
    assert raised == ["the setup failed"] * 3 and got == [0, 0, 0], (raised, got)
    assert len(ran) == 2, ran  # one run for the three that raised, one for the looks again
