"""Every hint leads on (helper h3): the first messages a new user meets (no ledger yet, an
unknown slice), followed exactly as printed on real repositories."""

from __future__ import annotations

from pathlib import Path

from tests.support import git, hinted_leap, leap, make_repo, ref
from tests.worktrees.conftest import DIAMOND


def test_a_repository_without_a_ledger_is_sent_to_init_which_starts_one(
        tmp_path: Path) -> None:
    """store.py: "no ledger yet (...); run `leap init` first"."""
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    said = leap("status", cwd=repo)
    assert said.code == 2 and "no ledger yet" in said.err, said
    [init] = hinted_leap(said.err)
    assert init == ["init"], said.err
    assert leap(*init, cwd=repo).code == 0
    assert leap("status", cwd=repo).code == 0


def test_a_clone_whose_remote_has_no_ledger_is_told_so_by_the_sync_its_hint_names(
        tmp_path: Path) -> None:
    """store.py: "no ledger yet (...); if origin has one, `leap sync origin` takes it; if
    no remote does, `leap init` starts one". A user who cannot know whether origin has one
    runs the first command; it must either take a ledger or say origin has none (and lead
    to `leap init`), not answer as if all were well and leave the user where they were."""
    bare = tmp_path / "origin.git"
    git("init", "-q", "--bare", "-b", "main", str(bare), cwd=tmp_path)
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    git("remote", "add", "origin", str(bare), cwd=repo)
    git("push", "-q", "-u", "origin", "main", cwd=repo)
    said = leap("status", cwd=repo)
    assert said.code == 2 and "no ledger yet" in said.err, said
    sync, init = hinted_leap(said.err)
    assert sync == ["sync", "origin"] and init == ["init"], said.err
    synced = leap(*sync, cwd=repo)
    after = leap("status", cwd=repo)
    moved_on = after.code == 0 or ["init"] in hinted_leap(synced.out + synced.err)
    assert moved_on, (synced, after)
    # the other branch of the hint: init starts one, and the sync then puts it up
    assert leap(*init, cwd=repo).code == 0
    assert leap(*sync, cwd=repo).code == 0
    assert ref(bare, "refs/heads/leap/ledger") == ref(repo, "refs/heads/leap/ledger")


def test_an_unknown_slice_names_status_which_lists_the_slices(tmp_path: Path) -> None:
    """query.py: "unknown slice 'X' (known: ...); see `leap status` for the slices the
    ledger holds"."""
    repo = make_repo(tmp_path / "repo", {"src/a.py": "A = 1\n", "src/b.py": "B = 1\n",
                                         "src/c.py": "C = 1\n", "src/d.py": "D = 1\n"})
    assert leap("init", cwd=repo).code == 0
    (tmp_path / "dia.yaml").write_text(DIAMOND)
    assert leap("slice", "cut", str(tmp_path / "dia.yaml"), cwd=repo).code == 0
    typo = leap("throw", "dai", cwd=repo)
    assert typo.code == 2 and "unknown slice 'dai' (known: dia)" in typo.err, typo
    [status] = hinted_leap(typo.err)
    shown = leap(*status, cwd=repo)
    assert shown.code == 0 and "slice dia " in shown.out, shown
