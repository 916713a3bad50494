"""``ledger.repo.open_repo``: the plain handle for a plain repository, dulwich's ``Repo``
for every special case, and a ledger written through either that git reads the same."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from dulwich.repo import Repo

from leapgit.errors import UsageError
from leapgit.ledger.repo import PlainRepo, open_repo
from leapgit.ledger.store import Ledger
from leapgit.rules.objects import Objects
from tests.support import IDENTITY, commit_all, git, make_repo, write_files


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"f.txt": "x\n"})


def _write_ledger(root: Path) -> str:
    with Ledger(root / ".git") as ledger:
        ledger.init(b"kind: ledger\n")
        return ledger.append({"a/b.yaml": b"k: v\n"}, "add b").commit


def test_a_plain_repository_gets_the_plain_handle_and_git_reads_what_it_wrote(
        root: Path) -> None:
    handle = open_repo(str(root / ".git"))
    assert isinstance(handle, PlainRepo)
    handle.close()
    commit = _write_ledger(root)
    assert git("fsck", "--strict", "--no-dangling", cwd=root) == ""
    assert git("show", "leap/ledger:a/b.yaml", cwd=root) == "k: v"
    # the reflog lines are git's own format, with the writer's identity
    who = f"{IDENTITY['GIT_COMMITTER_NAME']} <{IDENTITY['GIT_COMMITTER_EMAIL']}>"
    log = git("reflog", "show", "--format=%H %gn <%ge> %gs", "leap/ledger", cwd=root)
    newest = log.splitlines()[0]
    assert newest.startswith(f"{commit} {who} leap: add b")
    assert len(log.splitlines()) == 2


def _shallow(root: Path) -> None:
    (root / ".git" / "shallow").write_text(git("rev-parse", "HEAD", cwd=root) + "\n")


def _grafts(root: Path) -> None:
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "grafts").write_text(git("rev-parse", "HEAD", cwd=root) + "\n")


SPECIAL: dict[str, Callable[[Path], object]] = {
    "worktree config": lambda r: git("config", "extensions.worktreeConfig", "true", cwd=r),
    "an include": lambda r: git("config", "include.path", "../extra.config", cwd=r),
    "a conditional include": lambda r: git("config", "includeIf.gitdir:/x/.path", "y", cwd=r),
    "shared permissions": lambda r: git("config", "core.sharedRepository", "group", cwd=r),
    "shared permissions, any case": lambda r: git("config", "core.SHAREDrepository", "0664",
                                                  cwd=r),
    "a shallow clone": _shallow,
    "grafts": _grafts,
}


@pytest.mark.parametrize("case", sorted(SPECIAL))
def test_a_special_repository_is_left_to_dulwich_and_the_ledger_still_works(
        root: Path, case: str) -> None:
    SPECIAL[case](root)
    handle = open_repo(str(root / ".git"))
    assert isinstance(handle, Repo), case
    handle.close()
    _write_ledger(root)
    assert git("show", "leap/ledger:a/b.yaml", cwd=root) == "k: v"


def test_a_linked_worktrees_git_dir_is_not_opened_plain(root: Path, tmp_path: Path) -> None:
    git("worktree", "add", "-q", "-b", "side", str(tmp_path / "wt"), cwd=root)
    assert PlainRepo.open(str(root / ".git" / "worktrees" / "wt")) is None
    handle = PlainRepo.open(str(root / ".git"))
    assert isinstance(handle, PlainRepo)
    handle.close()


def test_a_config_dulwich_cannot_parse_is_left_to_repo(root: Path) -> None:
    assert PlainRepo.open(str(root / ".git")) is not None
    (root / ".git" / "config").write_text("[core\n")
    assert PlainRepo.open(str(root / ".git")) is None


def test_a_folder_that_is_no_repository_is_a_clear_usage_error(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(UsageError, match="cannot open git repository"):
        Ledger(tmp_path / "plain")


def test_ancestry_through_the_plain_handle_matches_git(root: Path) -> None:
    """``Objects.is_ancestor`` (dulwich's graph walk over the plain handle's parents) agrees
    with ``git merge-base --is-ancestor`` across a merge."""
    base = git("rev-parse", "HEAD", cwd=root)
    git("checkout", "-q", "-b", "side", cwd=root)
    write_files(root, {"s.txt": "s\n"})
    side = commit_all(root, "side")
    git("checkout", "-q", "main", cwd=root)
    write_files(root, {"m.txt": "m\n"})
    main = commit_all(root, "main")
    git("merge", "-q", "--no-edit", "side", cwd=root)
    merged = git("rev-parse", "HEAD", cwd=root)
    handle = open_repo(str(root / ".git"))
    assert isinstance(handle, PlainRepo)
    objects = Objects(handle)
    pairs = [(a, b) for a in (base, side, main, merged) for b in (base, side, main, merged)]
    for older, newer in pairs:
        git_says = subprocess.run(["git", "merge-base", "--is-ancestor", older, newer],
                                  cwd=root, capture_output=True).returncode == 0
        assert objects.is_ancestor(older, newer) == git_says, (older, newer)
    assert objects.is_ancestor(side, merged) and not objects.is_ancestor(side, main)
    handle.close()


def test_a_reflog_that_cannot_be_written_is_named_and_the_ref_stays(root: Path) -> None:
    """dulwich writes the reflog line under the ref's lock, before the ref moves (review r4,
    F1): when it cannot, nothing moves, and the error names the reflog, not another ref."""
    with Ledger(root / ".git") as ledger:
        ledger.init(b"kind: ledger\n")
    before = git("rev-parse", "leap/ledger", cwd=root)
    logs = root / ".git" / "logs" / "refs" / "heads" / "leap"
    for child in logs.iterdir():
        child.unlink()
    logs.rmdir()
    logs.write_text("not a folder\n")
    with Ledger(root / ".git") as ledger, \
            pytest.raises(UsageError, match="cannot write the ledger ref's reflog") as caught:
        ledger.append({"a.yaml": b"k: v\n"}, "add a")
    assert str(logs) in caught.value.lines()[0]
    assert git("rev-parse", "leap/ledger", cwd=root) == before


@pytest.mark.parametrize("blocker", ["full disk", "folder"])
def test_a_reflog_failure_says_what_failed_and_what_to_do(root: Path, blocker: str) -> None:
    """Final review (reversibility F2, telemetry F5, F6): a full disk is named as the
    reflog's, not as "another ref is in the way"; a folder where the reflog file belongs
    says to remove it. The ref stays where it was."""
    with Ledger(root / ".git") as ledger:
        ledger.init(b"kind: ledger\n")
    before = git("rev-parse", "leap/ledger", cwd=root)
    reflog = root / ".git" / "logs" / "refs" / "heads" / "leap" / "ledger"
    reflog.unlink()
    if blocker == "full disk":
        reflog.symlink_to("/dev/full")
    else:
        reflog.mkdir()
    with Ledger(root / ".git") as ledger, pytest.raises(UsageError) as caught:
        ledger.append({"a.yaml": b"k: v\n"}, "add a")
    [line] = caught.value.lines()
    assert str(reflog) in line and "cannot write the ledger ref's reflog" in line, line
    assert ("free disk space" if blocker == "full disk" else "remove that folder") in line
    assert "another ref is in the way" not in line
    assert git("rev-parse", "leap/ledger", cwd=root) == before
