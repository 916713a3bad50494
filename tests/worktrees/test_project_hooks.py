"""The project's own git hooks and leapgit's rounds. Real git, real builders."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support import git, leap
from tests.worktrees.conftest import built_a, make_diamond, set_config, worktree_of

Builder = Callable[..., str]


@pytest.mark.parametrize("hook", ["commit-msg", "pre-commit", "prepare-commit-msg",
                                  "prepare-commit-msg-adds"])
def test_the_project_s_own_commit_hooks_do_not_refuse_a_round(
        tmp_path: Path, builder: Builder, hook: str) -> None:
    """A project with its own commit hooks (a commit-msg lint such as commitlint, a
    formatter in pre-commit that refuses until it is rerun): they judge a person's commits.
    The round's commit records what the builder left; the ball's proof, tests and tribunal
    judge it (before: the hook refused the commit, the round was refused and its work
    rolled back)."""
    repo = make_diamond(tmp_path)
    script = "#!/bin/sh\necho 'subject must follow Conventional Commits' >&2\nexit 1\n"
    if hook == "prepare-commit-msg-adds":  # a line after the receipt's trailers
        hook, script = "prepare-commit-msg", "#!/bin/sh\nprintf '\\nRefs: JIRA-1\\n' >> \"$1\"\n"
    refuse = repo / ".git" / "hooks" / hook
    refuse.write_text(script)
    refuse.chmod(0o755)
    wt = built_a(repo, builder)
    assert git("status", "--porcelain", cwd=wt) == ""
    assert "Leap-Round: 1" in git("log", "-1", "--format=%(trailers)", cwd=wt)


def test_a_refused_round_s_mode_change_is_rolled_back(tmp_path: Path, builder: Builder
                                                       ) -> None:
    """git records a file's executable bit as a change. A round the builder refused after
    `chmod +x` on a scope file: the rollback puts the mode back (before: "0 scope file(s)
    restored", and the mode rode into the next round)."""
    import os

    repo = make_diamond(tmp_path)
    set_config(repo, builder=builder("""
        os.chmod("src/a.py", 0o755)
        pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: -1\\nevidence: gave up\\n")
        """))
    r = leap("throw", "dia", "--run", "--ball", "A", cwd=repo)
    assert "rolled back (restore-scope): 1 scope file(s) restored" in r.out + r.err, r
    assert not os.access(worktree_of(repo, "A") / "src/a.py", os.X_OK)


def test_a_mode_changed_outside_any_round_is_named_by_the_map_check(tmp_path: Path) -> None:
    """Before: "map ok" for a scope file made executable by hand in a thrown ball."""
    repo = make_diamond(tmp_path)
    assert leap("throw", "dia", "--ball", "A", cwd=repo).code == 0
    (worktree_of(repo, "A") / "src/a.py").chmod(0o755)
    checked = leap("ball", "check", "dia", "A", cwd=repo)
    assert checked.code == 1, checked
    assert "src/a.py: changed outside any round: its mode is not 100644" in \
        checked.out + checked.err, checked


def test_a_mode_is_no_change_where_git_records_none(tmp_path: Path) -> None:
    """``core.fileMode=false`` (git sets it on a filesystem without an executable bit): a
    chmod is no change to git, nor to the map check (a blind review: every round refused)."""
    repo = make_diamond(tmp_path)
    git("config", "core.fileMode", "false", cwd=repo)
    _chmod_is_no_change(repo, 0o755)


def _chmod_is_no_change(repo: Path, mode: int) -> None:
    """A thrown ball's scope file chmod-ed to ``mode``: no change to git, map ok."""
    assert leap("throw", "dia", "--ball", "A", cwd=repo).code == 0
    (worktree_of(repo, "A") / "src/a.py").chmod(mode)
    assert git("status", "--porcelain", cwd=worktree_of(repo, "A")) == ""
    checked = leap("ball", "check", "dia", "A", cwd=repo)
    assert checked.code == 0 and "map ok" in checked.out, checked


def test_only_the_owner_s_executable_bit_counts_as_git_counts_it(tmp_path: Path) -> None:
    """git records the owner's executable bit alone: `chmod g+x` is no change to git, nor
    to the map check (a blind review: a false "its mode is not 100644")."""
    _chmod_is_no_change(make_diamond(tmp_path), 0o654)


def test_a_rewind_keeps_edits_a_clean_filter_would_hide(tmp_path: Path) -> None:
    """A clean filter that drops lines makes git store a file with uncommitted extra lines
    as the committed blob; the rewind of a refused commit judges the file's own bytes, so
    those edits are kept, never written over (a blind review)."""
    from leapgit.ledger.repo import open_repo
    from leapgit.worktrees.rewind import _changes, _undo
    from tests.support import make_repo

    repo = make_repo(tmp_path / "r", {"f.txt": "v1\n"})
    git("config", "filter.strip.clean", "sed '/^#local/d'", cwd=repo)
    git("config", "filter.strip.smudge", "cat", cwd=repo)
    (repo / ".gitattributes").write_text("f.txt filter=strip\n")
    git("add", ".gitattributes", cwd=repo)
    git("commit", "-q", "-m", "attributes", cwd=repo)
    start = git("rev-parse", "HEAD", cwd=repo)
    (repo / "f.txt").write_text("v2\n")
    git("commit", "-q", "-am", "the refused round", cwd=repo)
    refused = git("rev-parse", "HEAD", cwd=repo)
    (repo / "f.txt").write_text("v2\n#local uncommitted notes\n")
    with open_repo(str(repo / ".git")) as opened:
        done = _undo(opened, repo, start, _changes(opened, start, refused), frozenset())
    assert "f.txt" in done.kept and "f.txt" not in done.restored, done
    assert (repo / "f.txt").read_text() == "v2\n#local uncommitted notes\n"
