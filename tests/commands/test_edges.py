"""Edge cases found in review (defect and boundary lenses), each pinned by a test."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from leapgit.records import yamlio
from tests.slices.drafts import base_draft, write
from tests.support import git, leap_inproc, make_repo, ref


# names YAML would read as something else; a name git refuses ("dev #x", "a: b") is
# refused before anything is written (tests/records/test_config_bad_input.py)
@pytest.mark.parametrize("spine", ["2024", "true", "1.0", "dev#x", "null", "yes"])
def test_any_spine_name_is_written_so_it_reads_back(tmp_path: Path, spine: str) -> None:
    root = make_repo(tmp_path / "r", {"a": "1"})
    result = leap_inproc("init", "--spine", spine, cwd=root)
    assert result.code == 0, result
    assert yamlio.load_file(root / ".leap" / "config.yaml")["spine"] == spine
    assert leap_inproc("status", cwd=root).code == 0


def test_a_branch_named_like_a_ledger_folder_is_named_not_crashed_on(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a": "1"})
    git("branch", "leap", cwd=root)
    result = leap_inproc("init", cwd=root)
    assert result.code == 2, result
    assert "cannot create refs/heads/leap/ledger" in result.err and "ledger_ref" in result.err


@pytest.mark.parametrize("bad", ["refs/heads/x.lock", "refs/heads/a..b", "refs/heads/main"])
def test_a_ledger_ref_git_would_refuse_or_the_spine_is_a_config_error(
    tmp_path: Path, bad: str
) -> None:
    root = make_repo(tmp_path / "r", {"a": "1"})
    (root / ".leap").mkdir()
    (root / ".leap" / "config.yaml").write_text(
        f"version: 1\nspine: main\nledger_ref: {bad}\n")
    result = leap_inproc("init", cwd=root)
    assert result.code == 2 and "ledger_ref" in result.err and "[config]" in result.err, result
    assert ref(root, "main") == git("rev-parse", "HEAD", cwd=root)


def test_a_ledger_ref_naming_a_users_branch_is_never_written_onto(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a": "1"})
    git("branch", "work", cwd=root)
    (root / ".leap").mkdir()
    (root / ".leap" / "config.yaml").write_text(
        "version: 1\nspine: main\nledger_ref: refs/heads/work\n")
    before = ref(root, "work")
    result = leap_inproc("init", cwd=root)
    assert result.code == 2 and "not a leapgit ledger" in result.err, result
    cut = leap_inproc("slice", "cut", str(write(tmp_path / "d.yaml", base_draft())), cwd=root)
    assert cut.code == 2
    assert ref(root, "work") == before


def test_a_hostile_committer_identity_cannot_forge_commit_headers(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"src/a.py": "A\n", "src/b.py": "B\n",
                                      "tests/test_a.py": "t\n"})
    env = {"GIT_COMMITTER_NAME": "evil\nparent " + "0" * 40, "GIT_COMMITTER_EMAIL": "x>y"}
    assert leap_inproc("init", cwd=root).code == 0
    proc = subprocess.run(
        [*_leap(), "slice", "cut", str(write(tmp_path / "d.yaml", base_draft()))],
        cwd=root, capture_output=True, text=True, env={**_env(), **env})
    assert proc.returncode == 0, proc.stderr
    fsck = subprocess.run(["git", "fsck", "--strict", "--no-dangling"], cwd=root,
                          capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    assert git("log", "-1", "--format=%cn <%ce>", "leap/ledger", cwd=root) == \
        "evilparent " + "0" * 40 + " <xy>"


def test_log_refuses_a_pattern_for_a_slice_and_survives_odd_subjects(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a": "1"})
    assert leap_inproc("init", cwd=root).code == 0
    bad = leap_inproc("log", "--slice", "[", cwd=root)
    assert bad.code == 2 and "not a slice id" in bad.err
    tip = git("rev-parse", "leap/ledger", cwd=root)
    odd = git("commit-tree", f"{tip}^{{tree}}", "-p", tip, "-m", "evil\x1esubject\x1f!",
              cwd=root)
    git("update-ref", "refs/heads/leap/ledger", odd, cwd=root)
    result = leap_inproc("log", cwd=root)
    assert result.code == 0, result
    # the subject survives whole; its control characters are shown escaped (issue 18 F9)
    assert "evil\\x1esubject\\x1f!" in result.out


def _leap() -> list[str]:
    import sys

    return [sys.executable, "-m", "leapgit"]


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)
