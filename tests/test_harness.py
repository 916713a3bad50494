"""The test harness itself: the CLI in this process answers as the installed entry points
do as processes, and a copied world is the world it was copied from."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hooks.world import World, hook_world, remote_refs
from tests.support import IDENTITY, Result, leap, make_repo
from tests.templates import Served, check_world

BIN = Path(sys.executable).parent


def entry_point(argv: list[str], cwd: Path) -> Result:
    env = {**os.environ, **IDENTITY, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env, timeout=120)
    return Result(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "repo", {"src/a.py": "A = 1\n", "src/b.py": "B = 1\n"})
    assert leap("init", cwd=root).code == 0
    return root


@pytest.mark.parametrize("args", [
    ("status",), ("log", "-n", "1"), ("status", "--json"), ("--version",),
    ("status", "nosuchslice"), ("throw",), ("no-such-command",), ("slice", "cut", "missing.yaml"),
])
def test_in_process_and_as_a_process_the_cli_says_the_same(project: Path,
                                                              args: tuple[str, ...]) -> None:
    inside = leap(*args, cwd=project)
    outside = leap(*args, cwd=project, subprocess=True)
    assert inside == outside


DRAFT = """\
slice: s1
spine: integrator
balls:
  - {id: a, goal: a, spec: set A, scope: [src/a.py], proof: "true", tests: "true",
     rollback: restore-scope}
  - {id: b, goal: b, spec: set B, scope: [src/b.py], proof: "true", tests: "true",
     rollback: restore-scope}
"""


def test_in_process_the_env_and_cwd_are_the_commands_and_then_the_tests_again(
        project: Path, tmp_path: Path) -> None:
    # LEAP_SIGNING_KEY names a key that does not exist: the command must see it (and fail
    # saying so), exactly as a process given that environment does
    (tmp_path / "d.yaml").write_text(DRAFT)
    env = {"LEAP_SIGNING_KEY": str(tmp_path / "no-such-key")}
    before = (os.getcwd(), dict(os.environ), sys.stdout, sys.stderr, sys.stdin,
              signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    inside = leap("slice", "cut", str(tmp_path / "d.yaml"), cwd=project, env=env)
    after = (os.getcwd(), dict(os.environ), sys.stdout, sys.stderr, sys.stdin,
             signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    assert after == before
    assert inside.code != 0 and "no-such-key" in inside.err, inside
    outside = leap("slice", "cut", str(tmp_path / "d.yaml"), cwd=project, env=env,
                   subprocess=True)
    assert outside == inside
    assert leap("slice", "cut", str(tmp_path / "d.yaml"), cwd=project).code == 0


def test_outside_a_repository_both_refuse_alike(tmp_path: Path) -> None:
    inside, outside = (leap("status", cwd=tmp_path, subprocess=s) for s in (False, True))
    assert inside == outside and inside.code != 0


@pytest.mark.parametrize("argv", [
    ["leap", "status"], ["git-leap", "status"], ["git", "leap", "status"],
    [sys.executable, "-m", "leapgit", "status"],
])
def test_each_installed_entry_point_runs_as_a_process(project: Path, argv: list[str]) -> None:
    if argv[0] in ("leap", "git-leap"):
        argv = [str(BIN / argv[0]), *argv[1:]]
    assert entry_point(argv, project) == leap("status", cwd=project)


def test_a_copied_world_stands_on_its_own_and_its_template_stays_as_built(
        served: Served) -> None:
    with hook_world(served) as first:
        check_world(first.base_dir, served.daemon)
        built = remote_refs(first.bare), first.tip("leap/ledger")
        moved = first.append(dict([first.lease(1, "take", "integrator")]), "a lease")
        assert first.push("leap/ledger", verify=True).returncode == 0
        assert remote_refs(first.bare)["refs/heads/leap/ledger"] == moved
    with hook_world(served) as second:
        check_world(second.base_dir, served.daemon)
        assert second.base_dir == first.base_dir  # the same path, a fresh copy
        assert (remote_refs(second.bare), second.tip("leap/ledger")) == built
        assert second.url == first.url
        # the copy's remote is served and judged: its own pre-receive refuses a forged record
        assert _forged_push(second).returncode != 0


def _forged_push(w: World) -> subprocess.CompletedProcess[str]:
    from tests.hooks.world import forge_ledger_commit

    forge_ledger_commit(w, {"LEDGER.yaml": None})
    return w.push("leap/ledger")


def test_a_world_has_one_copy_at_a_time(served: Served) -> None:
    with hook_world(served), pytest.raises(RuntimeError, match="one copy of a world"):
        with hook_world(served):
            pass


def test_in_process_a_ledger_lock_the_test_holds_blocks_the_command(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As another process's would: the command gets a lock object of its own (the ones
    this process holds are not lent to it), waits, and gives up."""
    from leapgit.ledger import recovery

    (tmp_path / "d.yaml").write_text(DRAFT)
    monkeypatch.setattr(recovery, "LOCK_TIMEOUT", 0.5)
    with recovery._writer_lock(recovery.lock_path(project / ".git")):
        held = leap("slice", "cut", str(tmp_path / "d.yaml"), cwd=project)
    assert held.code != 0 and "held the ledger lock for 0 s" in held.err, held
    assert leap("slice", "cut", str(tmp_path / "d.yaml"), cwd=project).code == 0


def test_in_process_a_command_past_its_timeout_fails_the_test(
        project: Path, tmp_path: Path) -> None:
    """A hang must fail, as the process's TimeoutExpired did, never wait for ever: the
    command waits up to a minute for the ledger lock this test holds."""
    from leapgit.ledger import recovery

    (tmp_path / "d.yaml").write_text(DRAFT)
    with recovery._writer_lock(recovery.lock_path(project / ".git")), \
            pytest.raises(AssertionError, match=r"leap slice cut .* still ran after 1 s"):
        leap("slice", "cut", str(tmp_path / "d.yaml"), cwd=project, timeout=1)
    assert signal.getsignal(signal.SIGALRM) == signal.SIG_DFL
    assert leap("slice", "cut", str(tmp_path / "d.yaml"), cwd=project).code == 0
