"""Installing and removing hooks: chaining and exact restore of a foreign hook, linked
worktrees, bare repositories, idempotence, core.hooksPath."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

from tests.hooks.world import run_git
from tests.support import git, leap, make_repo

FOREIGN = b"#!/bin/sh\necho foreign-ran >> \"$MARKER\"\nexit ${FOREIGN_EXIT:-0}\n"


def test_foreign_hook_is_chained_first_and_restored_exactly(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    remote = tmp_path / "remote.git"
    git("init", "-q", "--bare", str(remote), cwd=tmp_path)
    hook = repo / ".git" / "hooks" / "pre-push"
    hook.write_bytes(FOREIGN)
    hook.chmod(0o750)
    res = leap("hooks", "install", cwd=repo)
    assert res.code == 0, res
    assert "the existing hook runs first, from pre-push.leap-legacy" in res.out
    legacy = hook.with_name("pre-push.leap-legacy")
    assert legacy.read_bytes() == FOREIGN
    assert b"leapgit-hook-id" in hook.read_bytes() and sys.executable.encode() in hook.read_bytes()
    marker = tmp_path / "marker"
    env = {"MARKER": str(marker)}
    import os
    import subprocess

    def push(extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", "push", "-q", str(remote), "main"], cwd=repo, text=True,
                              check=False,
                              capture_output=True, env={**os.environ, **env, **extra})

    refused = push({"FOREIGN_EXIT": "3"})
    assert refused.returncode != 0 and marker.read_text() == "foreign-ran\n"
    assert git("for-each-ref", cwd=remote) == ""
    assert push({}).returncode == 0
    res = leap("hooks", "uninstall", cwd=repo)
    assert res.code == 0 and "the original hook is back" in res.out
    assert hook.read_bytes() == FOREIGN
    assert stat.S_IMODE(hook.stat().st_mode) == 0o750
    assert not legacy.exists()
    assert not (repo / ".git" / "hooks" / "post-commit").exists()


def test_install_is_idempotent(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    assert leap("hooks", "install", cwd=repo).code == 0
    before = sorted(p.name for p in (repo / ".git" / "hooks").iterdir())
    again = leap("hooks", "install", cwd=repo)
    assert again.code == 0 and again.out.count("already installed") == 2
    assert sorted(p.name for p in (repo / ".git" / "hooks").iterdir()) == before
    assert not any(name.endswith(".leap-legacy") for name in before)


def test_linked_worktree_installs_into_the_common_git_dir(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    wt = tmp_path / "wt"
    git("worktree", "add", "-q", "-b", "side", str(wt), cwd=repo)
    res = leap("hooks", "install", cwd=wt)
    assert res.code == 0, res
    assert (repo / ".git" / "hooks" / "post-commit").exists()
    assert not (repo / ".git" / "worktrees" / "wt" / "hooks").exists()
    assert leap("hooks", "uninstall", cwd=wt).code == 0
    assert not (repo / ".git" / "hooks" / "post-commit").exists()


def test_bare_repository_needs_server(tmp_path: Path) -> None:
    bare = tmp_path / "srv.git"
    git("init", "-q", "--bare", str(bare), cwd=tmp_path)
    res = leap("hooks", "install", cwd=bare)
    assert res.code == 2 and "bare repository" in res.err and "--server" in res.err
    res = leap("hooks", "install", "--server", cwd=bare)
    assert res.code == 0, res
    assert (bare / "hooks" / "pre-receive").exists()
    assert not (bare / "hooks" / "post-commit").exists()


def test_server_install_turns_on_gits_object_checks(tmp_path: Path) -> None:
    # receive.fsckObjects: git refuses a malformed object (a tree naming an entry twice)
    # before pre-receive runs; a client install leaves git's config alone
    bare = tmp_path / "srv.git"
    git("init", "-q", "--bare", str(bare), cwd=tmp_path)
    git("config", "receive.fsckObjects", "false", cwd=bare)
    res = leap("hooks", "install", "--server", cwd=bare)
    assert res.code == 0, res
    assert "receive.fsckObjects = true" in res.out
    assert git("config", "--get", "receive.fsckObjects", cwd=bare) == "true"
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    assert leap("hooks", "install", cwd=repo).code == 0
    assert run_git("config", "--get", "receive.fsckObjects", cwd=repo).returncode == 1


def test_server_install_says_it_turns_replace_refs_off_and_why(tmp_path: Path) -> None:
    """Blind review r2: the line for core.useReplaceRefs said "git checks every pushed
    object", which is receive.fsckObjects' reason; each setting says what it does."""
    bare = tmp_path / "srv.git"
    git("init", "-q", "--bare", str(bare), cwd=tmp_path)
    res = leap("hooks", "install", "--server", cwd=bare)
    assert res.code == 0, res
    lines = {line.split()[1]: line for line in res.out.splitlines() if line.startswith("set ")}
    assert set(lines) == {"receive.fsckObjects", "core.useReplaceRefs"}, res.out
    replace = lines["core.useReplaceRefs"]
    assert "core.useReplaceRefs = false in this server's git config" in replace, replace
    assert "git checks every pushed object" not in replace, replace
    assert "refs/replace/" in replace and "the rules judged" in replace, replace
    assert "git checks every pushed object" in lines["receive.fsckObjects"], res.out
    assert git("config", "--get", "core.useReplaceRefs", cwd=bare) == "false"


def test_core_hooks_path_is_refused_unless_forced(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    git("config", "core.hooksPath", ".githooks", cwd=repo)
    res = leap("hooks", "install", cwd=repo)
    assert res.code == 2
    assert "core.hooksPath sends git to" in res.err and "--force" in res.err
    assert not (repo / ".git" / "hooks" / "post-commit").exists()
    res = leap("hooks", "install", "--force", cwd=repo)
    assert res.code == 0, res
    assert (repo / ".githooks" / "post-commit").exists()
    assert leap("hooks", "uninstall", cwd=repo).code == 0
    assert not (repo / ".githooks" / "post-commit").exists()


def test_init_installs_the_client_hooks(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    res = leap("init", cwd=repo)
    assert res.code == 0, res
    assert "hooks   post-commit, pre-push in" in res.out
    for name in ("post-commit", "pre-push"):
        assert b"leapgit-hook-id" in (repo / ".git" / "hooks" / name).read_bytes()


def test_server_install_pins_the_protected_refs(tmp_path: Path) -> None:
    bare = tmp_path / "srv.git"
    git("init", "-q", "--bare", "-b", "master", str(bare), cwd=tmp_path)
    res = leap("hooks", "install", "--server", "--spine", "trunk", cwd=bare)
    assert res.code == 0, res
    assert "leap.spine = trunk" in res.out
    assert git("config", "leap.spine", cwd=bare) == "trunk"
    assert git("config", "leap.ledgerRef", cwd=bare) == "refs/heads/leap/ledger"
    again = leap("hooks", "install", "--server", cwd=bare)  # an earlier pin stays
    assert again.code == 0 and git("config", "leap.spine", cwd=bare) == "trunk"
    bad = leap("hooks", "install", "--server", "--ledger-ref", "refs/heads/trunk", cwd=bare)
    assert bad.code != 0 and "the ledger cannot live on the spine branch" in bad.err
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"}, branch="trunk")
    client = leap("hooks", "install", "--spine", "x", cwd=repo)
    assert client.code == 2 and "--server" in client.err
    assert git("push", "-q", str(bare), "trunk", cwd=repo) == ""  # created: not judged
    (repo / "a.txt").write_text("b\n")
    git("commit", "-q", "-am", "straight onto the pinned spine", cwd=repo)
    before = git("rev-parse", "trunk", cwd=bare)
    refused = run_git("push", "-q", str(bare), "trunk", cwd=repo)
    assert refused.returncode != 0 and "[L8] refs/heads/trunk" in refused.stderr
    assert git("rev-parse", "trunk", cwd=bare) == before


def test_uninstall_cleans_both_hook_dirs_after_core_hooks_path_moved(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    default, moved = repo / ".git" / "hooks", repo / ".githooks"
    moved.mkdir()
    foreign = {default: FOREIGN, moved: FOREIGN.replace(b"foreign-ran", b"other-ran")}
    for folder, data in foreign.items():
        (folder / "pre-push").write_bytes(data)
        (folder / "pre-push").chmod(0o755)
    assert leap("hooks", "install", cwd=repo).code == 0
    git("config", "core.hooksPath", ".githooks", cwd=repo)
    assert leap("hooks", "install", "--force", cwd=repo).code == 0
    res = leap("hooks", "uninstall", cwd=repo)
    assert res.code == 0, res
    assert res.out.count("the original hook is back") == 2, res.out
    for folder, data in foreign.items():
        assert (folder / "pre-push").read_bytes() == data
        assert not (folder / "post-commit").exists()
        assert not any(p.name.endswith(".leap-legacy") for p in folder.iterdir())


def test_hooks_dir_linked_into_the_work_tree_needs_force(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"tools/hooks/README": "tracked\n"})
    hooks = repo / ".git" / "hooks"
    import shutil

    shutil.rmtree(hooks)
    hooks.symlink_to(repo / "tools" / "hooks")
    res = leap("hooks", "install", cwd=repo)
    assert res.code == 2, res
    assert "inside the work tree" in res.err and "--force" in res.err
    assert sorted(p.name for p in (repo / "tools" / "hooks").iterdir()) == ["README"]
    assert leap("hooks", "install", "--force", cwd=repo).code == 0
    assert (repo / "tools" / "hooks" / "post-commit").exists()


def test_an_install_that_fails_midway_leaves_the_foreign_server_hook_in_place(
        tmp_path: Path) -> None:
    """Blind review r2 (reversibility): the foreign hook was moved aside before leapgit's
    was written, so an install that failed there (here: its temporary file cannot be
    written) left the server with no pre-receive at all, every push unchecked. The foreign
    hook stays at its place until leapgit's replaces it in one rename; the next install,
    once the cause is gone, chains it as usual."""
    bare = tmp_path / "srv.git"
    git("init", "-q", "--bare", str(bare), cwd=tmp_path)
    hook = bare / "hooks" / "pre-receive"
    hook.write_bytes(FOREIGN)
    hook.chmod(0o750)
    blocker = hook.with_name("pre-receive.leap-tmp")
    blocker.mkdir()  # the temporary file cannot be written
    res = leap("hooks", "install", "--server", cwd=bare)
    assert res.code != 0, res
    assert hook.read_bytes() == FOREIGN, "the server lost its pre-receive"
    assert stat.S_IMODE(hook.stat().st_mode) == 0o750
    blocker.rmdir()
    res = leap("hooks", "install", "--server", cwd=bare)
    assert res.code == 0, res
    assert "the existing hook runs first, from pre-receive.leap-legacy" in res.out, res.out
    assert hook.with_name("pre-receive.leap-legacy").read_bytes() == FOREIGN
    assert b"leapgit-hook-id" in hook.read_bytes()
    assert leap("hooks", "uninstall", cwd=bare).code == 0
    assert hook.read_bytes() == FOREIGN
    assert not hook.with_name("pre-receive.leap-legacy").exists()


def test_an_install_that_died_after_linking_the_foreign_hook_goes_on(tmp_path: Path) -> None:
    """The state an install killed between its link and its rename leaves: the foreign hook
    under both names, one file. The next install takes it up; the foreign one still runs."""
    import os

    bare = tmp_path / "srv.git"
    git("init", "-q", "--bare", str(bare), cwd=tmp_path)
    hook = bare / "hooks" / "pre-receive"
    hook.write_bytes(FOREIGN)
    hook.chmod(0o750)
    os.link(hook, hook.with_name("pre-receive.leap-legacy"))
    res = leap("hooks", "install", "--server", cwd=bare)
    assert res.code == 0, res
    assert hook.with_name("pre-receive.leap-legacy").read_bytes() == FOREIGN
    assert b"leapgit-hook-id" in hook.read_bytes()


def test_a_chained_foreign_hook_without_a_shebang_runs_as_git_runs_it(tmp_path: Path) -> None:
    """Blind review r2 (boundary condition): git runs a hook script with no `#!` line
    through /bin/sh (ENOEXEC); the chain ran it with exec alone, so after `install
    --server` every push died in a raw traceback (OSError: Exec format error). It runs
    as git ran it, first, and its refusal still stands."""
    import os
    import subprocess

    bare = tmp_path / "srv.git"
    git("init", "-q", "--bare", str(bare), cwd=tmp_path)
    hook = bare / "hooks" / "pre-receive"
    hook.write_bytes(b"echo foreign-ran >> \"$MARKER\"\nexit ${FOREIGN_EXIT:-0}\n")
    hook.chmod(0o755)
    assert leap("hooks", "install", "--server", cwd=bare).code == 0
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    marker = tmp_path / "marker"

    def push(extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", "push", "-q", str(bare), "main:refs/heads/side"],
                              cwd=repo, text=True, capture_output=True,
                              env={**os.environ, "MARKER": str(marker), **extra})

    refused = push({"FOREIGN_EXIT": "3"})
    assert refused.returncode != 0 and "Traceback" not in refused.stderr, refused.stderr
    assert marker.read_text() == "foreign-ran\n"
    assert git("for-each-ref", cwd=bare) == ""
    landed = push({})
    assert landed.returncode == 0, landed.stderr
    assert marker.read_text() == "foreign-ran\n" * 2


def test_a_chained_post_commit_without_a_shebang_runs(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    hook = repo / ".git" / "hooks" / "post-commit"
    marker = tmp_path / "marker"
    hook.write_bytes(f"echo foreign-ran >> {marker}\n".encode())
    hook.chmod(0o755)
    assert leap("hooks", "install", cwd=repo).code == 0
    done = run_git("commit", "-q", "--allow-empty", "-m", "x", cwd=repo)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert marker.read_text() == "foreign-ran\n"


def test_hooks_in_a_folder_many_repositories_share_leave_the_others_alone(
        tmp_path: Path) -> None:
    """`core.hooksPath` set for the user (a global hooks folder): `leap init` names --force
    to install there, and then every repository runs leapgit's hooks. One with no leapgit
    in it (no config, no ledger) has no rules to judge by: its pushes go through (before:
    refused, "[L9] no open integrator lease", in every repository of the machine)."""
    shared = tmp_path / "globalhooks"
    shared.mkdir()
    git("config", "--global", "core.hooksPath", str(shared), cwd=tmp_path)
    leap_repo = make_repo(tmp_path / "leap", {"a.txt": "a\n"})
    assert leap("init", cwd=leap_repo).code == 0
    assert leap("hooks", "install", "--force", cwd=leap_repo).code == 0
    assert b"leapgit-hook-id" in (shared / "pre-push").read_bytes()

    other = make_repo(tmp_path / "other", {"b.txt": "b\n"})
    bare = tmp_path / "other.git"
    git("init", "-q", "--bare", "-b", "main", str(bare), cwd=tmp_path)
    git("push", "-q", str(bare), "main", cwd=other)
    (other / "b.txt").write_text("c\n")
    git("commit", "-q", "-am", "an ordinary change", cwd=other)
    pushed = run_git("push", str(bare), "main", cwd=other)
    assert pushed.returncode == 0, pushed.stderr
    assert "leap pre-push" not in pushed.stderr
    # where leapgit works, the same hook still judges: straight onto its spine is refused
    served = tmp_path / "leap.git"
    git("init", "-q", "--bare", "-b", "main", str(served), cwd=tmp_path)
    git("push", "-q", str(served), "main", "leap/ledger", cwd=leap_repo)  # created: not judged
    (leap_repo / "a.txt").write_text("b\n")
    git("commit", "-q", "-am", "straight onto the spine", cwd=leap_repo)
    refused = run_git("push", str(served), "main", cwd=leap_repo)
    assert refused.returncode != 0 and "leap pre-push" in refused.stderr, refused.stderr


def test_a_fresh_clone_whose_config_is_not_committed_is_still_judged(tmp_path: Path) -> None:
    """The config stays a machine's own (`.leap/` untracked) and a clone keeps the remote's
    ledger under `refs/remotes/`: leapgit works there, and pre-push judges (a blind review:
    taken for a repository without leapgit, it let through what the server refuses)."""
    work = make_repo(tmp_path / "work", {"a.txt": "a\n"})
    assert leap("init", cwd=work).code == 0
    served = tmp_path / "served.git"
    git("init", "-q", "--bare", "-b", "main", str(served), cwd=tmp_path)
    git("push", "-q", str(served), "main", "leap/ledger", cwd=work)
    fresh = tmp_path / "fresh"
    git("clone", "-q", str(served), str(fresh), cwd=tmp_path)
    assert not (fresh / ".leap" / "config.yaml").exists()
    assert leap("hooks", "install", cwd=fresh).code == 0
    (fresh / "a.txt").write_text("b\n")
    git("commit", "-q", "-am", "straight onto the spine", cwd=fresh)
    refused = run_git("push", "origin", "main", cwd=fresh)
    assert refused.returncode != 0 and "leap pre-push" in refused.stderr, refused.stderr


def test_a_master_server_pinned_to_main_says_so_and_the_command_it_names_protects_master(
        tmp_path: Path) -> None:
    """`--server` pins `main` by default: on a server that holds `master` (its HEAD) and no
    `main`, a direct push to `master` went through without a word. Install says so, and
    the command it names protects `master`."""
    bare = tmp_path / "srv.git"
    git("init", "-q", "--bare", "-b", "master", str(bare), cwd=tmp_path)
    quiet = leap("hooks", "install", "--server", cwd=bare)  # HEAD names a branch not pushed
    assert quiet.code == 0 and "note" not in quiet.out, quiet.out
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"}, branch="master")
    git("push", "-q", str(bare), "master", cwd=repo)
    res = leap("hooks", "install", "--server", cwd=bare)
    assert res.code == 0, res
    note = [line for line in res.out.splitlines() if line.startswith("note")]
    assert note == ["note         this server holds no main, the spine it protects, but holds "
                    "master, which is not protected: if master is the spine, run `leap hooks "
                    "install --server --spine master`"], res.out
    (repo / "a.txt").write_text("b\n")
    git("commit", "-q", "-am", "straight onto master", cwd=repo)
    assert run_git("push", "-q", str(bare), "master", cwd=repo).returncode == 0  # unprotected
    command = note[0].split("run `")[1].rstrip("`").split()
    assert command[0] == "leap"
    followed = leap(*command[1:], cwd=bare)
    assert followed.code == 0 and "note" not in followed.out, followed.out
    (repo / "a.txt").write_text("c\n")
    git("commit", "-q", "-am", "straight onto master again", cwd=repo)
    refused = run_git("push", "-q", str(bare), "master", cwd=repo)
    assert refused.returncode != 0 and "[L8] refs/heads/master" in refused.stderr


def test_a_server_whose_only_branch_is_not_the_pin_says_so(tmp_path: Path) -> None:
    """A blind review: the bare repository's HEAD names `master`, which nobody pushed; its
    only branch is `trunk`, and the pin protected `main` without a word."""
    bare = tmp_path / "srv.git"
    git("init", "-q", "--bare", "-b", "master", str(bare), cwd=tmp_path)
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"}, branch="trunk")
    git("push", "-q", str(bare), "trunk", "trunk:leap/ball/s/b", cwd=repo)
    res = leap("hooks", "install", "--server", cwd=bare)
    assert res.code == 0, res
    assert "but holds trunk, which is not protected" in res.out, res.out
    assert "`leap hooks install --server --spine trunk`" in res.out, res.out
    git("push", "-q", str(bare), "trunk:other", cwd=repo)  # two branches, none at HEAD
    assert "note" not in leap("hooks", "install", "--server", cwd=bare).out
