"""Blind review (issue 17, lens correctness; T9): a claimed mutant that is not a mutant, or
whose patch reaches past the candidate's own files or past the throwaway worktree, is
INVALID and writes nothing outside that worktree. Each case re-runs a real patch with real
``git apply`` in a real worktree of the fixture's candidate."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from leapgit.tribunal import mutants
from tests.support import commit_all, git
from tests.tribunal.conftest import HEAD_FILES, Repo
from tests.tribunal.test_mutants import _convene, _tests, patch

CALC = HEAD_FILES["src/calc.py"]


def _harness(repo: Repo, tmp: Path, head: str | None = None) -> mutants.Harness:
    return mutants.Harness(repo.root, head or repo.head, _tests(tmp), 20.0,
                           frozenset({"src/calc.py"}))


def _hunk(old_name: str, new_name: str, old: str = "    return a / b\n",
          new: str = "    return a // b\n") -> str:
    return (f"--- {old_name}\n+++ {new_name}\n@@ -5,2 +5,2 @@\n def div(a, b):\n"
            f"-{old}+{new}")


def test_a_patch_that_changes_no_byte_is_no_mutant_and_never_a_survivor(
        repo: Repo, tmp_path: Path) -> None:
    # the hunk takes the line out and puts the same line back: git applies it, the tests
    # pass on the unchanged candidate; that is the baseline again, not a surviving mutant
    same = _hunk("a/src/calc.py", "b/src/calc.py", new="    return a / b\n")
    rerun = mutants.rerun(_harness(repo, tmp_path), same)
    assert rerun.status == "INVALID", rerun
    assert "changes no byte" in rerun.detail


def test_a_no_op_mutant_does_not_refuse_the_lens(repo: Repo, tmp_path: Path) -> None:
    same = _hunk("a/src/calc.py", "b/src/calc.py", new="    return a / b\n")
    result, defect = _convene(repo, tmp_path, same)
    assert defect.primary.verdict is not None
    [finding] = defect.primary.verdict.findings
    assert finding.rerun is not None and finding.rerun.status == "INVALID"
    assert defect.outcome == "pass", defect.reason
    assert "unsupported mutant claim(s): INVALID" in defect.reason
    assert result.out.is_dir()


@pytest.mark.parametrize("old, new", [
    ("a/../outside.py", "b/../outside.py"),
    ("a/src/../../outside.py", "b/src/../../outside.py"),
    ("a/src/../src/calc.py", "b/src/../src/calc.py"),
])
def test_a_dotdot_path_is_invalid_and_writes_nothing_outside(
        repo: Repo, tmp_path: Path, old: str, new: str) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text(CALC)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*.py") if p.is_file()}
    rerun = mutants.rerun(_harness(repo, tmp_path), _hunk(old, new))
    assert rerun.status == "INVALID", rerun
    assert {p: p.read_bytes() for p in before} == before


def test_an_absolute_path_is_invalid_and_writes_nothing_outside(
        repo: Repo, tmp_path: Path) -> None:
    target = tmp_path / "abs" / "src" / "calc.py"
    target.parent.mkdir(parents=True)
    target.write_text(CALC)
    rerun = mutants.rerun(_harness(repo, tmp_path), _hunk(str(target), str(target)))
    assert rerun.status == "INVALID", rerun
    assert target.read_text() == CALC


def test_a_patch_that_creates_a_file_is_invalid(repo: Repo, tmp_path: Path) -> None:
    create = ("--- /dev/null\n+++ b/src/calc.py.new\n@@ -0,0 +1 @@\n+X = 2\n")
    rerun = mutants.rerun(_harness(repo, tmp_path), create)
    assert rerun.status == "INVALID", rerun


def test_a_patch_through_a_symlinked_candidate_file_writes_nothing_outside(
        repo: Repo, tmp_path: Path) -> None:
    # the candidate's changed file is a symlink to a file outside the repository: a patch
    # written against the target's text must not reach the target through the link
    outside = tmp_path / "target.py"
    outside.write_text(CALC)
    link = repo.root / "src" / "calc.py"
    link.unlink()
    os.symlink(os.path.relpath(outside, link.parent), link)
    head = commit_all(repo.root, "calc is a link")
    rerun = mutants.rerun(_harness(repo, tmp_path, head),
                          patch("src/calc.py", "a / b", "a // b"))
    assert rerun.status == "INVALID", rerun
    assert outside.read_text() == CALC
    assert git("status", "--porcelain", cwd=repo.root) == ""


def test_a_rerun_leaves_no_worktree_behind(repo: Repo, tmp_path: Path) -> None:
    mutants.rerun(_harness(repo, tmp_path), patch("src/calc.py", "a / b", "a // b"))
    listed = git("worktree", "list", "--porcelain", cwd=repo.root)
    assert listed.count("worktree ") == 1, listed
    assert sys.executable  # the tests ran under this interpreter (``_tests``)


def test_a_worktree_setup_that_fails_makes_the_harness_invalid_not_a_crash(
        repo: Repo, tmp_path: Path) -> None:
    # T9: a harness that cannot run is INVALID (the mechanical checks say so already); the
    # re-run must not explode after the seats, leaving the paid verdicts off the ledger
    # with no summary (T6)
    import yaml

    from leapgit.records import yamlio
    from tests.tribunal.conftest import rung
    from tests.tribunal.jurors import JurorServer
    from tests.tribunal.test_independence import _summary
    from tests.tribunal.test_mutants import MUTANTS, _claiming

    with JurorServer("openai", _claiming(MUTANTS["survives"][0])) as server:  # type: ignore[arg-type]
        repo.config([rung("r1", "openai", server.url, response_format="none")],
                    test_timeout=3)
        cfg = repo.root / ".leap" / "config.yaml"
        data = yaml.safe_load(cfg.read_text())
        data["worktrees"] = {"setup": "echo broken >&2; exit 3"}
        cfg.write_bytes(yamlio.dumps(data))
        result = repo.convene(tests=_tests(tmp_path))
    assert result.decision.outcome == "refuse" and result.decision.exit_code == 1
    defect = next(r for r in result.results if r.lens == "defect")
    assert defect.reason.startswith("INVALID: the mutation-free baseline is not cleanly green")
    assert "worktrees.setup" in defect.reason
    assert _summary(repo, result.info.run_id).outcome == "refuse"


def test_a_rerun_whose_tree_cannot_be_set_up_is_invalid(repo: Repo, tmp_path: Path) -> None:
    import yaml

    from leapgit.records import yamlio
    from tests.tribunal.conftest import rung

    repo.config([rung("r1", "openai", "http://127.0.0.1:9")])
    cfg = repo.root / ".leap" / "config.yaml"
    data = yaml.safe_load(cfg.read_text())
    data["worktrees"] = {"setup": "exit 3"}
    cfg.write_bytes(yamlio.dumps(data))
    rerun = mutants.rerun(_harness(repo, tmp_path), patch("src/calc.py", "a / b", "a // b"))
    assert rerun.status == "INVALID", rerun
    assert "the harness cannot run" in rerun.detail and "worktrees.setup" in rerun.detail


def test_a_patch_that_renames_under_a_git_header_is_invalid(repo: Repo, tmp_path: Path) -> None:
    # `diff --git a/T b/T` whose `+++` names the candidate's file: `git apply --numstat`
    # lists only that file, but applying it deletes the test file and writes the test's
    # text over the code (an unannounced rename). The tests then pass for want of a test:
    # that must never be a confirmed survivor
    test_text = HEAD_FILES["tests/test_calc.py"]
    hunk = "".join(f" {line}\n" for line in test_text.splitlines()[:-1])
    renaming = ("diff --git a/tests/test_calc.py b/tests/test_calc.py\n"
                "--- a/tests/test_calc.py\n+++ b/src/calc.py\n"
                f"@@ -1,5 +1,5 @@\n{hunk}-    assert div(4, 2) == 2\n+    pass\n")
    pytest_run = f"{sys.executable} -m pytest -q -p no:cacheprovider tests"
    h = mutants.Harness(repo.root, repo.head, pytest_run, 60.0, frozenset({"src/calc.py"}))
    assert mutants.baseline(h) is None  # the candidate's tests are green unmutated
    rerun = mutants.rerun(h, renaming)
    assert rerun.status == "INVALID", rerun
    assert "tests/test_calc.py" in rerun.detail


def test_a_mutant_of_a_file_with_a_non_ascii_name_is_rerun(repo: Repo, tmp_path: Path) -> None:
    # git quotes such a path in --numstat ("src/na\303\257ve.py") unless told not to: the
    # claim was INVALID for naming a file the candidate does not have
    name = "src/naïve.py"
    (repo.root / name).write_text("X = 1\n", encoding="utf-8")
    head = commit_all(repo.root, "a file with a non-ASCII name")
    passing = f"{sys.executable} -c pass"
    h = mutants.Harness(repo.root, head, passing, 20.0, frozenset({name}))
    rerun = mutants.rerun(h, patch(name, "X = 1", "X = 2", "X = 1\n"))
    assert (rerun.status, rerun.files) == ("SURVIVED", (name,)), rerun
