"""Score step 1, the source check (L7.1): a candidate that changes nothing beyond the red
test backs no claim; one that changes its scope does. A real repository, the real check."""

from __future__ import annotations

from pathlib import Path

from leapgit.git import blob_at
from leapgit.ledger import query
from leapgit.ledger.store import Ledger
from leapgit.records.scoring import FileBlob, RedRecord, RunEvidence
from leapgit.scoring.source import check_source
from tests.scoring.world import commit_files
from tests.support import git, leap, make_repo

DRAFT = """\
slice: src1
spine: integrator
balls:
  - {id: A, goal: a is two, spec: make A two, scope: [src/a.py, tests/test_a.py],
     proof: "true", tests: "true", rollback: restore-scope}
  - {id: B, goal: b, spec: change b, scope: [src/b.py], proof: "true", tests: "true",
     rollback: restore-scope}
"""
TEST = "import a\n\n\ndef test_a():\n    assert a.A == 2\n"


def _cut_with_red(tmp_path: Path, draft: str) -> tuple[Path, str, str, RedRecord]:
    """A repository with ``draft`` cut, and ball A's red commit and record."""
    repo = make_repo(tmp_path / "repo", {"src/a.py": "A = 1\n", "src/b.py": "B = 1\n"})
    assert leap("init", cwd=repo).code == 0
    (tmp_path / "d.yaml").write_text(draft)
    assert leap("slice", "cut", str(tmp_path / "d.yaml"), cwd=repo).code == 0
    base = git("rev-parse", "HEAD", cwd=repo)
    red_commit = commit_files(repo, base, {"tests/test_a.py": TEST}, "red: A")
    red = RedRecord("src1", "A", 1, red_commit, base,
                    (FileBlob("tests/test_a.py", blob_at(repo, red_commit, "tests/test_a.py")),),
                    RunEvidence("red", "true", 1), "2024-01-01T00:00:00Z")
    return repo, base, red_commit, red


def test_a_candidate_that_only_holds_the_red_test_is_an_unbacked_claim(tmp_path: Path) -> None:
    repo, base, red_commit, red = _cut_with_red(tmp_path, DRAFT)
    with Ledger(repo / ".git") as ledger:
        ball = query.load_ball(ledger.require(), "src1", "A")
    found = check_source(repo, base, red_commit, ball, red)
    assert (found.step.result, found.step.rule) == ("fail", "L7.1"), found.step
    assert "an unbacked claim: the candidate changes nothing beyond the red test" in \
        found.step.detail
    built = commit_files(repo, red_commit, {"src/a.py": "A = 2\n"}, "a is two")
    found = check_source(repo, base, built, ball, red)
    assert found.step.result == "ok" and found.step.rule is None, found.step


def test_a_candidate_built_beside_a_findings_red_fails_t7_6(tmp_path: Path) -> None:
    """``rules.balls.unheld_reds`` (the server's spine rule asks it too): the tribunal
    refused candidate ``built``; the test author added the findings' test on it (a
    finding's red); a candidate rebuilt from ``built`` beside that red fails the source
    step, naming the red and the score it answers; one built on it is ok."""
    repo, base, red_commit, red = _cut_with_red(tmp_path, DRAFT.replace(
        "tests/test_a.py]", "tests/test_a.py, tests/test_a_finding.py]"))
    built = commit_files(repo, red_commit, {"src/a.py": "A = 2\n"}, "a is two")
    finding_test = "def test_a_finding():\n    assert False\n"
    on_it = commit_files(repo, built, {"tests/test_a_finding.py": finding_test}, "finding")
    finding = RedRecord("src1", "A", 2, on_it, base,
                        (FileBlob("tests/test_a_finding.py",
                                  blob_at(repo, on_it, "tests/test_a_finding.py")),),
                        RunEvidence("red", "true", 1), "2024-01-01T00:00:00Z",
                        answers=1, episode=1)
    assert finding.finding
    with Ledger(repo / ".git") as ledger:
        ball = query.load_ball(ledger.require(), "src1", "A")
    beside = commit_files(repo, built, {"src/a.py": "A = 2  # again\n"}, "rebuilt beside")
    found = check_source(repo, base, beside, ball, red, [finding])
    assert (found.step.result, found.step.rule) == ("fail", "T7.6"), found.step
    assert found.step.detail == (f"the candidate does not hold red 2 at {on_it[:12]}, the "
                                 "tests for the findings of score 1")
    fixed = commit_files(repo, on_it, {"src/a.py": "A = 2  # fixed\n"}, "on the finding")
    found = check_source(repo, base, fixed, ball, red, [finding])
    assert found.step.result == "ok", found.step
