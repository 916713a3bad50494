"""`leap red` (T7.1, T9): a red is a test that ran and failed for the missing behaviour, at a
red commit on a base where the ball's tests are green; every refused red shows the tail of
what the command printed; a red is redone only before the first round. Real pytest runs in
a tiny project (tests/scoring/tiny.py)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from leapgit.ledger import history, layout
from leapgit.ledger.store import Ledger
from leapgit.records import yamlio
from leapgit.records.types import BallRecord
from tests.scoring.tiny import (
    GENERATED_TEST,
    PYTEST,
    SLICE,
    SUB_TEST,
    draft,
    make_tiny,
    red,
    red_commit,
    served,
    write_respec,
)
from tests.support import git, hinted_leap, leap


def _reds(repo: Path, ball: str = "sub") -> list[int]:
    with Ledger(repo / ".git") as ledger:
        view = ledger.require()
        return [r.red for r in history.reds(view, SLICE, ball)] \
            if history.has(view, SLICE, ball, "reds") else []


def test_a_red_pytest_cannot_collect_is_refused_and_the_reason_is_on_the_terminal(
        tmp_path: Path) -> None:
    """The issue's case: the red test imports a generated file a fresh worktree lacks, so
    pytest stops at collection (exit 2). That proves nothing about the missing behaviour."""
    repo = make_tiny(tmp_path)
    _, r = red(repo, "sub", {"tests/test_sub.py": GENERATED_TEST})
    assert r.code == 1, r
    assert "stopped before any test ran at the red commit" in r.err
    assert "pytest exit 2: interrupted, by a collection error" in r.err and "[T7.1]" in r.err
    # the reason is on the terminal, not only in a record
    assert "ModuleNotFoundError: No module named 'pkg._version'" in r.err
    assert "leap:   | " in r.err and "Traceback" not in r.err.split("leap:   |")[0]
    assert _reds(repo) == []


# The first red of a new module: imported at the test's top, pytest cannot collect it.
NEW_AT_TOP = "from pkg.newmod import sub\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n"
NEW_INSIDE = ("import importlib\n\n\ndef test_sub():\n"
              "    assert importlib.import_module('pkg.newmod').sub(3, 1) == 2\n")


@pytest.mark.parametrize("test", [NEW_AT_TOP, NEW_AT_TOP.replace("pkg.newmod", "pkg.calc")],
                         ids=["new-module", "new-name"])
def test_a_red_importing_what_its_ball_writes_at_its_top_is_told_to_import_inside(
        tmp_path: Path, test: str) -> None:
    """A walk-away hunt: a red whose test imports the module its ball is to write, at the
    top, stops pytest at collection (exit 2); the refusal said only "make the proof run its
    test". It names the import and where it goes; the red so written is taken."""
    cut = draft()
    cut["balls"][0]["scope"] = ["pkg/calc.py", "pkg/newmod.py", "tests/test_sub.py"]
    repo = make_tiny(tmp_path, slice_draft=cut)
    _, r = red(repo, "sub", {"tests/test_sub.py": test})
    assert r.code == 1 and "not a red" in r.err, r
    module = "pkg.newmod" if "newmod" in test else "pkg.calc"
    assert f"the test imports {module} at its top, which this ball is to write" in r.err, r
    assert "import it inside the test function" in r.err, r
    inside = NEW_INSIDE if "newmod" in test else SUB_TEST
    sha, again = red(repo, "sub", {"tests/test_sub.py": inside})
    assert again.code == 0, again
    assert len(_reds(repo)) == 1


def test_a_red_importing_a_module_outside_its_scope_gets_no_import_advice(
        tmp_path: Path) -> None:
    """The missing module is no file the ball writes (a generated one): the hint keeps to
    making the proof run its test."""
    repo = make_tiny(tmp_path)
    _, r = red(repo, "sub", {"tests/test_sub.py": GENERATED_TEST})
    assert r.code == 1 and "make the proof run its test" in r.err, r
    assert "import it inside the test function" not in r.err, r


@pytest.mark.parametrize(("proof", "test", "reason"), [
    (f"{PYTEST} tests/test_sbu.py", SUB_TEST,
     "pytest exit 4: a usage error (a bad option, or a test path that is not there)"),
    (f"{PYTEST} tests/test_sub.py -k no_such_test", SUB_TEST,
     "pytest exit 5: no tests collected"),
    (f"{shlex.quote(sys.executable)} -m unittest tests.test_sub", GENERATED_TEST,
     "exit 1: unittest could not import a test module"),
    ("no-such-runner tests/test_sub.py", SUB_TEST,
     "exit 127: the shell found no such command"),
])
def test_a_runner_error_is_no_red(tmp_path: Path, proof: str, test: str, reason: str) -> None:
    repo = make_tiny(tmp_path, slice_draft=draft(proof=proof))
    _, r = red(repo, "sub", {"tests/test_sub.py": test})
    assert r.code == 1 and f"({reason}): not a red" in r.err, r
    assert "the proof at the red commit, the last" in r.err  # its tail follows
    assert _reds(repo) == []


def test_a_proof_that_times_out_is_no_red(tmp_path: Path) -> None:
    repo = make_tiny(tmp_path, tests_timeout=2, slice_draft=draft(
        proof="echo started; sleep 30", tests="true"))
    _, r = red(repo, "sub", {"tests/test_sub.py": SUB_TEST})
    assert r.code == 3, r
    assert "(it timed out after 2 s): not a red" in r.err and "leap:   | started" in r.err
    assert _reds(repo) == []


def test_a_passing_proof_is_refused_with_what_it_printed(tmp_path: Path) -> None:
    repo = make_tiny(tmp_path)
    passing = "def test_sub():\n    assert 3 - 1 == 2\n"
    _, r = red(repo, "sub", {"tests/test_sub.py": passing})
    assert r.code == 1 and "a red test that passes is refused [T7.1]" in r.err, r
    assert "1 passed" in r.err.split("the last")[1]


def test_a_red_refused_for_the_wrong_reason_is_repaired_with_the_commands_it_names(
        tmp_path: Path) -> None:
    """While the ball has no round, its spec and its red can be redone: the hinted
    `leap ball respec` takes a ball that is ready, and `leap red` then records the red."""
    repo = make_tiny(tmp_path, slice_draft=draft(proof=f"{PYTEST} tests/test_sbu.py"))
    sha, r = red(repo, "sub", {"tests/test_sub.py": SUB_TEST})
    assert r.code == 1 and "pytest exit 4" in r.err, r
    assert f"`leap ball respec {SLICE} sub FILE`" in r.err
    assert f"`leap red {SLICE} sub COMMIT` again" in r.err
    fixed = write_respec(tmp_path / "fixed.yaml", proof=f"{PYTEST} tests/test_sub.py")
    r = leap("ball", "respec", SLICE, "sub", str(fixed), cwd=repo)
    assert r.code == 0 and "spec version 1 -> 2" in r.out, r
    r = leap("red", SLICE, "sub", sha, cwd=repo)
    assert r.code == 0 and "red 1 of tiny/sub" in r.out, r
    assert _reds(repo) == [1]
    # the server judges the respec of a ball never thrown as `leap ball respec` does (L3)
    bare = served(tmp_path, repo)
    assert git("rev-parse", "leap/ledger", cwd=bare) == git("rev-parse", "leap/ledger", cwd=repo)


def test_a_red_is_refused_when_the_tests_are_not_green_at_the_base(tmp_path: Path) -> None:
    """T9: a `tests` command that names the red test file fails at the base (the file is
    not there yet): every mechanical check of every candidate would be INVALID."""
    repo = make_tiny(tmp_path, slice_draft=draft(tests=f"{PYTEST} tests/test_sub.py"))
    sha, r = red(repo, "sub", {"tests/test_sub.py": SUB_TEST})
    assert r.code == 1, r
    base = git("rev-parse", "main", cwd=repo)
    assert (f"the ball's tests `{PYTEST} tests/test_sub.py` are not green at its base "
            f"{base[:12]}") in r.err and "INVALID" in r.err and "[T9]" in r.err
    assert "ERROR: file or directory not found: tests/test_sub.py" in r.err  # the tail
    hinted = f"`leap ball respec {SLICE} sub FILE`"
    assert hinted in r.err
    r = leap("ball", "respec", SLICE, "sub", str(write_respec(tmp_path / "f.yaml")), cwd=repo)
    assert r.code == 0, r
    r = leap("red", SLICE, "sub", sha, cwd=repo)
    assert r.code == 0, r


def test_a_ball_without_tests_gets_them_through_the_hinted_respec(tmp_path: Path) -> None:
    """A ball recorded before `tests` was required (a ledger of an older leapgit) has no
    `tests`: red says so and names the respec that gives it one."""
    repo = make_tiny(tmp_path)
    with Ledger(repo / ".git") as ledger:
        view = ledger.require()
        old = view.record(layout.ball_path(SLICE, "sub", 1), BallRecord)
        assert old is not None
        data = old.to_dict()
        data.pop("tests")
        data["spec_version"] = 2
        ledger.append({layout.ball_path(SLICE, "sub", 2): yamlio.dumps(data)}, "an old spec")
    sha, r = red(repo, "sub", {"tests/test_sub.py": SUB_TEST})
    assert r.code == 1 and "tiny/sub declares no `tests` command" in r.err, r
    assert "tests: " in r.err and "[L1]" in r.err
    assert f"`leap ball respec {SLICE} sub FILE`" in r.err
    r = leap("ball", "respec", SLICE, "sub", str(write_respec(tmp_path / "f.yaml")), cwd=repo)
    assert r.code == 0, r
    assert leap("red", SLICE, "sub", sha, cwd=repo).code == 0


def test_tests_that_never_run_the_red_test_are_refused_at_red_and_the_respec_repairs_them(
        tmp_path: Path) -> None:
    """A blind review: a `tests` command that runs only the old suite passes every check,
    then the honest build is refused at its score as a fake green (-1: the candidate's tests
    pass against the base code), its rounds spent. `leap red` runs that same check and
    refuses it there, naming the respec; followed, the red is recorded."""
    repo = make_tiny(tmp_path, slice_draft=draft(tests=f"{PYTEST} tests/test_calc.py"))
    sha, r = red(repo, "sub", {"tests/test_sub.py": SUB_TEST})
    assert r.code == 1, r
    assert (f"the ball's tests `{PYTEST} tests/test_calc.py` pass at its base with the "
            "red's test files (tests/test_sub.py): they do not run the red test, so every "
            "candidate would be refused as a fake green") in r.err, r.err
    assert "[T7]" in r.err and _reds(repo) == []
    hinted = f"`leap ball respec {SLICE} sub FILE` (it has no round yet), then `leap red " \
        f"{SLICE} sub {sha[:12]}` again"
    assert hinted in r.err, r.err
    r = leap("ball", "respec", SLICE, "sub", str(write_respec(tmp_path / "f.yaml")), cwd=repo)
    assert r.code == 0, r
    # what comes next is the red, not a throw (a blind review: it said "throw it again")
    assert f"its red next: its failing test committed on `leap ball base {SLICE} sub`, then " \
        f"`leap red {SLICE} sub COMMIT`" in r.out, r.out
    assert "leap throw" not in r.out
    again = leap("red", SLICE, "sub", sha[:12], cwd=repo)
    assert again.code == 0, again
    assert _reds(repo) == [1]


def test_a_red_is_not_redone_in_flight_or_after_a_round_and_says_why(tmp_path: Path) -> None:
    repo = make_tiny(tmp_path)
    sha, r = red(repo, "sub", {"tests/test_sub.py": SUB_TEST})
    assert r.code == 0, r
    assert leap("throw", SLICE, "--ball", "sub", cwd=repo).code == 0
    again = red_commit(repo, {"tests/test_sub.py": SUB_TEST + "\n"})
    r = leap("red", SLICE, "sub", again, cwd=repo)
    assert r.code == 1 and "tiny/sub is in flight (episode 1, no round yet)" in r.err, r
    assert f"its red 1 ({sha[:12]}) stands" in r.err
    r = leap("round", SLICE, "sub", "--outcome", "0", "--evidence", "nothing yet", cwd=repo)
    assert r.code == 3 and "round 1" in r.out, r
    r = leap("red", SLICE, "sub", again, cwd=repo)
    assert r.code == 1, r
    assert ("tiny/sub already has 1 round(s) in episode 1: red comes first, before the build, "
            "and no red is redone once a round was built [T7.1]") in r.err
    assert f"its red 1 ({sha[:12]}) stands" in r.err
    assert _reds(repo) == [1]


def test_status_names_the_red_a_ready_ball_waits_for_and_the_hint_records_it(
        tmp_path: Path) -> None:
    """A blind review: status said "ready to throw (L5)" of a ball with no red, which `leap
    throw` then refused (T7.1). It names the red; followed, the ball is ready to throw."""
    repo = make_tiny(tmp_path)
    shown = leap("status", cwd=repo).out
    line = (f"ready to throw once its red is recorded (T7.1): its failing test committed on "
            f"its base (`leap ball base {SLICE} sub`), then `leap red {SLICE} sub COMMIT`")
    assert line in shown, shown
    base = leap("ball", "base", SLICE, "sub", cwd=repo).out.split()[0]
    from tests.scoring.world import commit_files

    sha = commit_files(repo, base, {"tests/test_sub.py": SUB_TEST}, "red: sub")
    assert leap("red", SLICE, "sub", sha, cwd=repo).code == 0
    after = leap("status", cwd=repo).out.splitlines()
    at = after.index(next(x for x in after if x.strip().startswith("sub ")))
    assert after[at + 1].strip().startswith("ready to throw (L5): "), after
    throw, run = hinted_leap(after[at + 1])
    assert throw == ["throw", SLICE, "--ball", "sub"] and run == ["run", SLICE], after
    assert leap(*throw, cwd=repo).code == 0  # as printed
    assert "in-flight" in leap("status", "--json", cwd=repo).out


@pytest.mark.parametrize("command", [("red", SLICE, "nope", "HEAD"), ("ball", "check", SLICE,
                                                                          "nope")])
def test_a_wrong_ball_id_lists_the_slices_balls(tmp_path: Path, command: tuple[str, ...]
                                                ) -> None:
    """A blind review: `leap red` and `leap ball check` named an unknown ball without the
    slice's balls, as `leap score` and `leap throw` list them."""
    repo = make_tiny(tmp_path)
    r = leap(*command, cwd=repo)
    assert r.code == 2, r
    assert f"unknown ball 'nope' in slice '{SLICE}' (balls: sub, doc)" in r.err, r.err
