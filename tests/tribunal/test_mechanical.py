"""T7 (5), T9: checks jurors cannot fake, run in throwaway worktrees."""

from __future__ import annotations

from pathlib import Path

from tests.support import commit_all, git, make_repo, write_files
from tests.tribunal.conftest import Repo, rung
from tests.tribunal.jurors import JurorServer, detailed_pass

RUN = "for t in tests/*.sh; do sh \"$t\" || exit 1; done"


def _repo(tmp_path: Path, base_ok: bool = True) -> tuple[Path, str]:
    root = make_repo(tmp_path / "m", {
        "src/calc.py": "def add(a, b):\n    return a + b\n",
        "tests/other.sh": "true\n" if base_ok else "exit 1\n",
    })
    from leapgit.commands.init import init

    init(root)
    (root / ".git" / "info" / "exclude").write_text(".leap/\n")
    return root, git("rev-parse", "HEAD", cwd=root)


def _convene(root: Path, base: str, head: str, **extra: str):  # type: ignore[no-untyped-def]
    repo = Repo(root, base, head)
    with JurorServer("openai", detailed_pass) as server:
        repo.config([rung("r1", "openai", server.url)])
        return repo.convene(tests=RUN, **extra)


def test_red_then_green_passes_every_check(tmp_path: Path) -> None:
    root, base = _repo(tmp_path)
    write_files(root, {"tests/div.sh": "grep -q 'def div' src/calc.py\n"})
    red = commit_all(root, "red")
    write_files(root, {"src/calc.py": "def div(a, b):\n    return a / b\n"})
    head = commit_all(root, "green")
    result = _convene(root, base, head, red=red)
    assert [c.result for c in result.mechanical.checks] == ["ok"] * 4
    assert result.decision.outcome == "pass"


def test_fake_green_refuses(tmp_path: Path) -> None:
    root, base = _repo(tmp_path)
    write_files(root, {"tests/div.sh": "true\n",
                       "src/calc.py": "def div(a, b):\n    return a / b\n"})
    head = commit_all(root, "looks green")
    result = _convene(root, base, head)
    assert result.decision.outcome == "refuse"
    assert "fake green" in result.decision.reason


def test_tests_edited_after_red_refuse(tmp_path: Path) -> None:
    root, base = _repo(tmp_path)
    write_files(root, {"tests/div.sh": "grep -q 'def div' src/calc.py\n"})
    red = commit_all(root, "red")
    write_files(root, {"tests/div.sh": "true\n", "src/calc.py": "X = 1\n"})
    head = commit_all(root, "weakened")
    result = _convene(root, base, head, red=red)
    assert result.decision.outcome == "refuse"
    assert "changed after the red commit" in result.decision.reason and "tests/div.sh" in \
        result.decision.reason


def test_base_not_green_is_invalid(tmp_path: Path) -> None:
    root, base = _repo(tmp_path, base_ok=False)
    write_files(root, {"tests/div.sh": "grep -q 'def div' src/calc.py\n",
                       "src/calc.py": "def div(a, b):\n    return a / b\n"})
    head = commit_all(root, "change")
    result = _convene(root, base, head)
    assert result.decision.outcome == "refuse" and "INVALID" in result.decision.reason
    assert result.mechanical.invalid


def test_failing_tests_at_head_refuse(tmp_path: Path) -> None:
    root, base = _repo(tmp_path)
    write_files(root, {"tests/div.sh": "grep -q 'def div' src/calc.py\n", "src/calc.py": "Y=1\n"})
    head = commit_all(root, "not yet")
    result = _convene(root, base, head)
    assert result.decision.outcome == "refuse"
    assert "new tests pass at head: exit 1" in result.decision.reason
