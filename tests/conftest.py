from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import isolate, make_repo
from tests.templates import Served


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    _sigint_as_in_a_terminal()
    _temporary_files_in_memory()
    _bytecode()
    """``-n N`` distributes whole modules (``--dist loadscope``), not single tests: the
    tests of a module that share a module-scoped world run on one worker, in the module's
    order, and it is built once. (``--dist loadgroup`` cannot say which: pytest 9 ignores
    the node id it renames.)"""
    if getattr(config.option, "dist", "no") == "load":
        config.option.dist = "loadscope"


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: two workers a core. Most tests wait on processes they start (git, a
    hook behind `git daemon`, a builder, a juror server) or on a lease's clock; a second
    worker a core runs while the first waits (on 2 cores: 2 workers 9 min, 4 workers 6)."""
    return 2 * max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                   else os.cpu_count() or 1)


@pytest.fixture(scope="session", autouse=True)
def _isolated_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The run's own home and git settings under every fixture: a module-wide world (and
    its `git daemon`) is built before any test's own ``_isolated_git``, and never sees the
    user's home, git config or PATH."""
    with pytest.MonkeyPatch.context() as mp:
        isolate(mp, tmp_path_factory.mktemp("run-home"), _shared_cache(tmp_path_factory))
        yield


@pytest.fixture(autouse=True)
def _isolated_git(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Every test runs with a fixed identity and no user or system git config."""
    isolate(monkeypatch, tmp_path_factory.mktemp("home"), _shared_cache(tmp_path_factory))


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The run's one `git daemon` (one per xdist worker, in the worker's own temporary
    folder), serving the worlds each test gets a copy of."""
    root = tmp_path_factory.mktemp("served-root")
    with pytest.MonkeyPatch.context() as mp:
        isolate(mp, root / "home", _shared_cache(tmp_path_factory))
        with Served(root / "served") as found:
            yield found


def _shared_cache(factory: pytest.TempPathFactory) -> Path:
    """The run's XDG_CACHE_HOME (one per xdist worker)."""
    return factory.getbasetemp() / "xdg-cache"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with a small project committed on main."""
    return make_repo(tmp_path / "repo", {
        "src/a.py": "A = 1\n",
        "src/b.py": "B = 2\n",
        "src/c.py": "C = 3\n",
        "tests/test_a.py": "def test_a():\n    assert True\n",
        "README.md": "# sample\n",
    })


TMPFS = "/dev/shm"
TMPFS_ROOM = 4 << 30  # a run writes ~1 GB; the last run's files are kept (pyproject.toml)
_RUN_TMP = "LEAP_TESTS_TMPDIR"  # the run's folder for temporary files, made by the controller
_made_here: str | None = None  # that folder, in the process that made it
_OWNER = "controller.pid"  # in that folder: the pid of the run that made it


def _temporary_files_in_memory() -> None:
    """The run's temporary files (pytest's tmp_path, the worlds, every temporary worktree
    leapgit makes) on Linux's tmpfs, when the machine has one with room and TMPDIR is not
    set: git and dulwich fsync every ref they move and every pack, and on a disk that is a
    sixth of the run (tests/hooks and tests/scoring: 124 s -> 103 s).

    Whatever leapgit and the processes the tests start make there goes into one folder of
    this run (``leap-tests-*``), removed when the run ends: a test that kills a `leap run`
    or a builder with SIGKILL leaves its temporary worktrees behind, as a real kill would,
    and those must not pile up run after run in memory. pytest's own folders stay beside
    it (PYTEST_DEBUG_TEMPROOT), the last run's kept (pyproject.toml). The xdist workers and
    every process a test starts inherit both. Nothing a test checks depends on where its
    files are."""
    import tempfile

    if os.environ.get(_RUN_TMP):
        return  # an xdist worker: the controller made the run's folder
    base = tempfile.gettempdir()
    if not os.environ.get("TMPDIR") and _usable_tmpfs():
        base = TMPFS
    os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", base)
    _remove_left_by_killed_runs(base)
    global _made_here
    _made_here = tempfile.mkdtemp(prefix="leap-tests-", dir=base)
    Path(_made_here, _OWNER).write_text(_owner())
    os.environ["TMPDIR"] = os.environ[_RUN_TMP] = _made_here
    tempfile.tempdir = None  # gettempdir() reads TMPDIR again


def _usable_tmpfs() -> bool:
    """Linux's tmpfs, writable, with room, and mounted to run programs: on a ``noexec``
    mount (hardened hosts, Docker's /dev/shm) git skips every hook there without a word, and
    a test that a hook should refuse would pass."""
    import shutil

    if not os.path.isdir(TMPFS) or not os.access(TMPFS, os.W_OK):
        return False
    return not os.statvfs(TMPFS).f_flag & os.ST_NOEXEC and \
        shutil.disk_usage(TMPFS).free >= TMPFS_ROOM


def _owner(pid: int | None = None) -> str:
    """Who made a run's folder: this machine (its boot and, in a container, its host name:
    a /dev/shm shared between containers holds other namespaces' pids) and the pid."""
    import socket

    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as fh:
            boot = fh.read().strip()
    except OSError:
        boot = "-"
    return f"{boot} {socket.gethostname()} {os.getpid() if pid is None else pid}"


def _remove_left_by_killed_runs(base: str) -> None:
    """The folders of runs on this machine whose controller is gone (killed: a CI timeout,
    an OOM kill, SIGKILL), which their own ``pytest_unconfigure`` never removed."""
    import shutil

    for folder in Path(base).glob("leap-tests-*"):
        try:
            owner = (folder / _OWNER).read_text().strip()
            pid = int(owner.rsplit(" ", 1)[-1])
            if owner != _owner(pid):
                continue  # another machine's, or another container's
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except (OSError, ValueError):
            continue  # another user's, or one still being made: left alone


def pytest_unconfigure(config: pytest.Config) -> None:
    """The run's temporary folder goes when the run that made it ends."""
    import shutil

    if _made_here is not None:
        shutil.rmtree(_made_here, ignore_errors=True)


def _bytecode() -> None:
    """Bytecode written and read, whatever the environment says: leapgit's modules compiled
    once for the run (the controller's, before any worker starts), and pytest's rewritten
    test modules kept. With PYTHONDONTWRITEBYTECODE set (as some CI images and this machine
    do), every hook, `leap` and builder process the tests start compiled leapgit's source
    again (suite 4:30 -> 3:58 on 2 cores), and every xdist worker rewrote the asserts of
    every test module it collected (collection 3.5 s -> 1.0 s a worker)."""
    import compileall
    import sys

    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # the workers and every process started
    sys.dont_write_bytecode = False
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        compileall.compile_dir(str(Path(__file__).resolve().parents[1] / "leapgit"),
                               quiet=1)


def _sigint_as_in_a_terminal() -> None:
    """The tests that press Ctrl-C (SIGINT to a `leap` they started) need SIGINT as a
    terminal gives it. A suite started as a background job of a non-interactive shell
    (`cmd &`) inherits SIGINT ignored, every process it starts would too, and Python then
    never raises KeyboardInterrupt: those tests would fail for the harness, not the code."""
    import signal

    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
