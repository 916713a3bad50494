"""Throwaway trees a killed run left (a chaos hunt: 48 of 98 killed runs left full checkouts
under the temp dir, registered in `git worktree list`, some locked): the next throwaway tree
any process makes first removes those whose process is gone; a commit made in one (a test
author's red never recorded) is kept under ``refs/leap/kept/throwaway/``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from leapgit.procs import alive
from leapgit.tribunal import worktree as wt
from tests.support import IDENTITY, git, make_repo

LEFT = """\
import os, signal, subprocess, sys
from pathlib import Path
from leapgit.tribunal.worktree import export, temporary
# a throwaway tree of the prefix given, or a juror's export ("export")
made = export(Path(sys.argv[1]), sys.argv[2]) if sys.argv[4] == "export" else \\
    temporary(Path(sys.argv[1]), sys.argv[2], prefix=sys.argv[4])
with made as tree:
    if sys.argv[3] == "commit":
        (tree / "red.txt").write_text("a red never recorded\\n")
        subprocess.run(["git", "add", "-A"], cwd=tree, check=True)
        subprocess.run(["git", "commit", "-q", "-m", "red"], cwd=tree, check=True)
    print(tree, flush=True)
    if sys.argv[3] in ("orphan", "juror"):  # a test author (a command juror) it started, in
        # a session of its own; it waits on nothing of its parent's (a pipe from it would
        # end with it, and the author with it: the test then raced the author's own exit)
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                                 cwd=tree, stdin=subprocess.DEVNULL, start_new_session=True)
        print(child.pid, flush=True)
    sys.stdin.read()  # alive until the test closes its stdin, then killed
    os.kill(os.getpid(), signal.SIGKILL)
"""


def _left(repo: Path, head: str, how: str, prefix: str = "leap-score-"
          ) -> tuple[Path, subprocess.Popen[str]]:
    proc = subprocess.Popen([sys.executable, "-c", LEFT, str(repo), head, how, prefix],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, **IDENTITY})
    assert proc.stdout is not None
    return Path(proc.stdout.readline().strip()), proc


def _kill(proc: subprocess.Popen[str]) -> None:
    """Let it go on to kill itself, in the middle of its throwaway tree."""
    assert proc.stdin is not None
    proc.stdin.close()
    assert proc.wait() == -signal.SIGKILL


def _listed(repo: Path) -> str:
    return git("worktree", "list", "--porcelain", cwd=repo)


def test_trees_of_killed_processes_are_removed_and_their_commits_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    head = git("rev-parse", "HEAD", cwd=repo)
    plain, first = _left(repo, head, "plain")  # all alive at once: none reaps another
    red, second = _left(repo, head, "commit")
    live, third = _left(repo, head, "live")
    for proc in (first, second):
        _kill(proc)
    made = git("rev-parse", "HEAD", cwd=red)
    assert all(str(t) in _listed(repo) for t in (plain, red, live))
    monkeypatch.setattr(wt, "_reaped", set())  # as a fresh process
    with wt.temporary(repo, head) as fresh:
        listed = _listed(repo)
        assert str(plain) not in listed and str(red) not in listed, listed
        assert not plain.parent.exists() and not red.parent.exists()
        assert str(live) in listed and live.exists()  # its process is alive: left alone
        assert str(fresh) in listed
    kept = git("for-each-ref", "--format=%(objectname)", "refs/leap/kept/throwaway/", cwd=repo)
    assert kept.split() == [made], kept  # the red no one recorded, kept
    _kill(third)
    assert wt.reap_left(repo) == [live] and not live.parent.exists()  # gone now: removed


def test_a_test_author_s_red_a_killed_run_left_waits_a_day_for_its_ball_s_next_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A blind review: another ball's throwaway tree reaped a finished author's tree first,
    its red kept under a ref no author reads, and the ball's next run paid a second author.
    A test author's tree with its commit waits a day for its ball's run (``loop.author``);
    then it is reaped as any other, its commit kept."""
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    head = git("rev-parse", "HEAD", cwd=repo)
    red, proc = _left(repo, head, "commit", "leap-red-author-")
    _kill(proc)
    assert wt.reap_left(repo) == [] and red.exists()  # its ball's next run takes it
    monkeypatch.setattr(wt, "RED_KEPT_SECONDS", 0)  # the day is over
    assert wt.reap_left(repo) == [red] and not red.exists()
    assert git("for-each-ref", "refs/leap/kept/throwaway/", cwd=repo)  # its commit, kept


@pytest.mark.parametrize("readable", [True, False], ids=["its-cwd-read", "unreadable"])
def test_a_tree_an_orphaned_process_still_works_in_is_left_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, readable: bool) -> None:
    """A blind review: the test author a killed run started outlives it, in a session of its
    own; its tree was removed under it, and the red it was about to commit was lost. A
    second: one whose directory /proc would not show (another uid, a sandbox) counted as
    at work nowhere; started after the tree was made, it now counts as at work there."""
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    head = git("rev-parse", "HEAD", cwd=repo)
    tree, proc = _left(repo, head, "orphan")
    assert proc.stdout is not None
    child = int(proc.stdout.readline())
    _kill(proc)
    if not readable:
        real = os.readlink

        def hidden(path: object, *args: object, **kwargs: object) -> str:
            if str(path) == f"/proc/{child}/cwd":
                raise PermissionError(13, "Permission denied", str(path))
            return real(path, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(os, "readlink", hidden)
    try:
        assert wt.reap_left(repo) == [] and tree.exists()  # its author is at work there
    finally:
        monkeypatch.undo()
        os.kill(child, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)  # gone (a zombie counts as gone)
    assert wt.reap_left(repo) == [tree] and not tree.exists()


def test_reaping_a_killed_tree_forgets_no_worktree_of_the_users(tmp_path: Path) -> None:
    """A worktree of the user's whose folder is not there now (a disk not mounted) stays
    known to git when a throwaway tree a killed run left is reaped: the reap removes its
    own trees, never with a repository-wide `git worktree prune`."""
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    head = git("rev-parse", "HEAD", cwd=repo).strip()
    usb = tmp_path / "usb" / "feature"
    git("worktree", "add", "-q", "-b", "feature", str(usb), cwd=repo)
    (usb.parent).rename(tmp_path / "unmounted")
    tree, proc = _left(repo, head, "idle")
    _kill(proc)
    assert str(tree) in _listed(repo)
    with wt.temporary(repo, head):
        pass
    listed = _listed(repo)
    assert str(tree) not in listed  # the killed run's tree is reaped
    assert f"worktree {usb}\n" in listed  # the user's stays


def test_juror_exports_of_killed_processes_are_reaped_by_the_next_export(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A walk-away hunt: every kill while jurors sat left its read-only export of the
    candidate in the temp dir (fourteen there after a few kills), which a user's `rm -rf`
    cannot take. The next export any process makes removes those whose process is gone;
    one whose process lives, or that a juror still reads in, is left alone."""
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n", "sub/b.txt": "b\n"})
    head = git("rev-parse", "HEAD", cwd=repo)
    started = []
    for how in ("plain", "live", "juror"):
        proc = subprocess.Popen([sys.executable, "-c", LEFT, str(repo), head, how, "export"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                env={**os.environ, **IDENTITY})
        assert proc.stdout is not None
        tree = Path(proc.stdout.readline().strip())
        juror = int(proc.stdout.readline()) if how == "juror" else None
        started.append((how, tree, proc, juror))
    by = {how: (tree, proc, juror) for how, tree, proc, juror in started}
    try:
        for how in ("plain", "juror"):
            _kill(by[how][1])
        assert by["plain"][0].exists() and not by["plain"][0].stat().st_mode & 0o222
        monkeypatch.setattr(wt, "_exports_reaped", [])  # as a fresh process
        with wt.export(repo, head) as fresh:
            assert fresh.is_dir()
            assert not by["plain"][0].parent.exists()  # its process is gone: reaped
            assert by["live"][0].exists()  # its process lives: left alone
            assert by["juror"][0].exists()  # a juror still reads there: left alone
    finally:
        juror_pid = by["juror"][2]
        if juror_pid is not None and alive(juror_pid):
            os.kill(juror_pid, signal.SIGKILL)
        live = by["live"][1]
        if live.poll() is None:
            _kill(live)
    monkeypatch.setattr(wt, "_exports_reaped", [])
    deadline = time.monotonic() + 5
    while juror_pid is not None and alive(juror_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert {p.name for p in wt.reap_exports()} >= {by["live"][0].parent.name,
                                                  by["juror"][0].parent.name}


# ``_worked_in`` as another user sees it: run by a Python that user can run (the system's),
# over this checkout (readable by that user, or the probe says it cannot be run there)
_PROBE = """
import sys
sys.path.insert(0, {root!r})
from pathlib import Path
from leapgit.tribunal.worktree import _worked_in
print(_worked_in(Path({tree!r}), float({made!r})))
"""


def test_an_empty_tree_is_at_work_for_no_user_who_cannot_read_others_processes(
        tmp_path: Path) -> None:
    """A hint hunt: a process whose working directory cannot be read, started after the
    tree was made, counted as working in it. A user who is not root reads no other user's
    (root's daemons, a colleague's build): an empty tree a killed run left was "at work"
    for good, and every `leap run` stopped on "a test author ... still works in TREE"
    naming itself again. Another user's process is no author leapgit started."""
    import shutil

    from tests.support import ROOT

    python = shutil.which("python3", path="/usr/bin:/bin")
    if os.geteuid() != 0 or shutil.which("runuser") is None or python is None:
        pytest.skip("needs root and runuser to probe as another user")
    where = Path("/tmp") / f"leap-worked-in-{os.getpid()}"
    where.mkdir(mode=0o755)
    try:
        tree = where / "tree"
        tree.mkdir(mode=0o777)
        made = time.time()
        time.sleep(1.1)
        other = subprocess.Popen(["sleep", "30"], cwd="/")  # root's, started after the tree

        def probe(code: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(["runuser", "-u", "nobody", "--", python, "-c", code],
                                  capture_output=True, text=True, timeout=60, cwd="/")
        try:
            can = probe(f"import sys; sys.path.insert(0, {str(ROOT)!r}); "
                        "import leapgit.tribunal.worktree")
            if can.returncode != 0:
                pytest.skip(f"user nobody cannot import this checkout: {can.stderr[-300:]}")
            said = probe(_PROBE.format(root=str(ROOT), tree=str(tree), made=made))
        finally:
            other.kill()
            other.wait()
        assert said.returncode == 0, said
        assert said.stdout.strip() == "False", said  # nobody's own: none works there
    finally:
        shutil.rmtree(where, ignore_errors=True)
