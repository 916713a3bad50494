"""Throwaway trees of one commit (T5, T8): jurors and test runs never sit in the tree being
graded. A test run gets a writable worktree (tests write caches); a command juror gets a
plain read-only export with no ``.git`` (no history, authors or ledger to read), hashed
before and after it sits so a write under the seat is seen.

A fresh worktree holds only tracked files. ``worktrees.setup`` (``.leap/config.yaml``) is
the command that makes what the project needs beyond them (generated files, an ``.env``
copy, an install): ``run_setup`` runs it in each fresh worktree before anything else, the
throwaway ones here (red, score, metric, mechanical checks, the merged result) and every
ball worktree (``worktrees.setup``). Its failure holds (0): a missing dependency (L2)."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import wraps
from pathlib import Path
from typing import ParamSpec, TypeVar

from leapgit import git
from leapgit.errors import Hold
from leapgit.procs import alive, run_group, started_at
from leapgit.records.config import load_config

SETUP_FIELD = "worktrees.setup"
_FULL_SHA = re.compile(r"[0-9a-f]{40}")
P = ParamSpec("P")
T = TypeVar("T")
_IN_USE: set[str] = set()  # the throwaway worktrees this process has open now
_IN_USE_LOCK = threading.Lock()


def throwaway(path: str) -> bool:
    """A throwaway worktree ``temporary`` made, by any process (one a killed run left
    too): ``<tmp>/leap-*/tree-*``. Only leapgit's test, red and merge runs write there."""
    parent = os.path.dirname(path)
    return os.path.dirname(parent) == os.path.realpath(tempfile.gettempdir()) and \
        os.path.basename(parent).startswith("leap-") and \
        os.path.basename(path).startswith("tree-")


def in_use() -> frozenset[str]:
    """The real paths of the throwaway worktrees this process holds now: leapgit's own
    test, red and merge runs write there, so no builder's round is held for it (L5, L9)."""
    with _IN_USE_LOCK:
        return frozenset(_IN_USE)


_TAIL = 4000  # characters of the setup's output kept
_SHOWN = 10  # of its lines shown under a hold


@dataclass(frozen=True)
class SetupRun:
    command: str
    exit_code: int | None  # None: it timed out
    seconds: float
    output_tail: str

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def describe(self) -> str:
        how = "timed out" if self.exit_code is None else f"exited {self.exit_code}"
        return f"the worktree setup `{self.command}` {how}"

    def shown(self) -> list[str]:
        lines = self.output_tail.rstrip("\n").splitlines()[-_SHOWN:]
        if not lines:
            return ["the worktree setup printed nothing"]
        return [f"the worktree setup, the last {len(lines)} line(s) it printed:",
                *(f"| {line}" for line in lines)]

    def tail(self, count: int = 5) -> str:
        """Its last lines on one line, for a receipt or an error line."""
        lines = [ln.strip() for ln in self.output_tail.strip().splitlines()[-count:]]
        return " | ".join(ln for ln in lines if ln) or "(no output)"


class SetupFailed(Hold):
    """L2: what the proof needs is missing from the fresh worktree; nothing ran there."""

    def __init__(self, run: SetupRun, where: str) -> None:
        super().__init__(f"{run.describe()} in {where}; nothing ran there; it printed: "
                         f"{run.tail()}", rule="L2", file=".leap/config.yaml",
                         field=SETUP_FIELD, hint=f"fix {SETUP_FIELD} (it runs in each fresh "
                         "worktree before anything else), then run again")
        self.run = run


def run_setup(tree: Path, command: str, repo_root: Path, timeout: float,
              log: Path | None = None) -> SetupRun:
    """Run the setup in ``tree`` through the shell, in its own process group (a timeout
    stops everything it started), with ``$LEAP_WORKTREE`` and ``$LEAP_REPO_ROOT`` (the
    checkout leapgit runs from, e.g. to copy an ``.env``); its output is appended to
    ``log`` when given."""
    env = git.scrubbed_env({"LEAP_WORKTREE": str(tree), "LEAP_REPO_ROOT": str(repo_root)})
    env.pop("LC_ALL", None)  # the user's locale, not the C one leapgit's git runs under
    if "LC_ALL" in os.environ:
        env["LC_ALL"] = os.environ["LC_ALL"]
    started = time.monotonic()
    code, out = run_group(command, tree, env, timeout)
    text = out.decode("utf-8", "replace")
    run = SetupRun(command, code, time.monotonic() - started, text[-_TAIL:])
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"[leap] worktree setup ({SETUP_FIELD}): $ {command}\n")
            fh.write(text if not text or text.endswith("\n") else text + "\n")
            fh.write(f"[leap] {run.describe()} after {run.seconds:.1f} s\n")
    return run


def _set_up(repo_root: Path, tree: Path, commit: str) -> None:
    config = load_config(repo_root)
    if config.worktree_setup:
        run = run_setup(tree, config.worktree_setup, repo_root, config.builder_timeout)
        if not run.ok:
            raise SetupFailed(run, f"a fresh worktree of {commit[:12]}")


def _chmod_tree(root: Path, writable: bool) -> None:
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            if path.is_symlink():
                continue
            mode = path.stat().st_mode
            path.chmod(mode | stat.S_IWUSR if writable else mode & ~0o222)
    mode = root.stat().st_mode
    root.chmod(mode | stat.S_IWUSR if writable else mode & ~0o222)


OWNER = "leap-owner"  # beside a throwaway tree: "<pid> <commit>" of the process that made it
_reaped: set[str] = set()  # repositories whose left throwaway trees this process removed


@dataclass(frozen=True)
class LeftTree:
    """A throwaway tree whose maker is gone (a run killed mid-score, mid-red): its path,
    the commit it was made at, its HEAD now and when it was made."""

    tree: Path
    made: str
    head: str
    made_at: float

    def at_work(self) -> bool:
        """Whether a process it started (a test author) works in it still."""
        return _worked_in(self.tree, self.made_at)


def left_behind(repo_root: Path, prefix: str = "leap-") -> list[LeftTree]:
    """The throwaway trees (of ``prefix``) whose maker process is gone. Not marked (being
    made now, or by an older leapgit): never named."""
    out = git.run(["worktree", "list", "--porcelain"], repo_root, check=False)
    found: list[LeftTree] = []
    for block in out.stdout.decode(errors="replace").split("\n\n"):
        fields = dict(line.partition(" ")[::2] for line in block.splitlines())
        path = fields.get("worktree", "")
        if not path or not throwaway(os.path.realpath(path)) or \
                not os.path.basename(os.path.dirname(path)).startswith(prefix):
            continue
        tree = Path(path)
        try:
            pid, made = (tree.parent / OWNER).read_text(encoding="utf-8").split()
            made_at = (tree.parent / OWNER).stat().st_mtime
        except (OSError, ValueError):
            continue
        if pid.isdigit() and not alive(int(pid)):
            found.append(LeftTree(tree, made, fields.get("HEAD", made), made_at))
    return found


def reap_left(repo_root: Path) -> list[Path]:
    """The throwaway trees of processes that are gone (a run killed mid-score), removed
    from git's list and the disk: each is a full checkout, and a kill left one per scoring,
    red or merge in flight. A commit made in one (a test author's red never recorded) is
    kept under ``refs/leap/kept/throwaway/``, never lost. Returns the trees removed."""
    gone: list[Path] = []
    for left in left_behind(repo_root):
        if left.at_work():
            continue  # a process it started (a test author) is at work there
        if left.head != left.made and left.tree.parent.name.startswith(RED_TREES) and \
                time.time() - left.made_at < RED_KEPT_SECONDS:
            continue  # a test author's red: its ball's next run takes it (``loop.author``)
        discard(repo_root, left)
        gone.append(left.tree)
    return gone


# the throwaway trees of test authors (``loop.author``): one a killed run left, with the
# author's commit in it, waits a day for its ball's next run to record that commit as the
# red (a blind review: reaped first by another ball's throwaway tree, its red was written
# again by a second author), and is reaped, its commit kept, after that
RED_TREES = ("leap-red-author-", "leap-red-findings-")
RED_KEPT_SECONDS = 24 * 3600


def discard(repo_root: Path, left: LeftTree) -> None:
    """Remove a tree ``left_behind`` named, keeping a commit made in it (``reap_left``)."""
    if left.head != left.made:
        git.run(["update-ref", f"refs/leap/kept/throwaway/{left.tree.parent.name}",
                 left.head], repo_root, check=False)
    _remove(repo_root, left.tree, left.tree.parent)


def _remove(repo_root: Path, tree: Path, parent: Path) -> bool:
    """Remove a throwaway ``tree`` and its ``parent`` folder: git forgets it, even when
    its files would not go (a folder made read-only in it), and no other worktree (never a
    repository-wide `git worktree prune`: it forgets the user's on a disk not mounted)."""
    removed = git.run(["worktree", "remove", "--force", "--force", str(tree)], repo_root,
                      check=False).returncode == 0
    shutil.rmtree(parent, ignore_errors=True)
    if not removed:  # its files are gone now: the same removal forgets the folder git lists
        removed = git.run(["worktree", "remove", "--force", "--force", str(tree)], repo_root,
                          check=False).returncode == 0
    return removed


def _worked_in(tree: Path, made_at: float) -> bool:
    """Whether any process works in ``tree`` now (its working directory there: a test author
    a killed run started in a session of its own, still writing its red). Unknown counts as
    at work, nothing is removed on a guess: no /proc, or a process of this user whose
    directory cannot be read that started after the tree was made (one started before,
    init say, was not started in it). Another user's process is no author leapgit
    started: a user who is not root reads no other user's directory, and counting those
    held an empty tree at work for good (a hint hunt: the run's hold came back each time)."""
    proc = Path("/proc")
    if not (proc / "self" / "cwd").exists():
        return True
    inside = os.path.realpath(tree)
    me = os.getuid()
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
        except FileNotFoundError:
            continue  # gone meanwhile
        except OSError:
            try:
                if entry.stat().st_uid != me:
                    continue  # another user's
            except OSError:
                continue  # gone meanwhile
            began = started_at(int(entry.name))
            if began is None or began >= made_at - 1:
                return True
            continue
        if cwd == inside or cwd.startswith(inside + os.sep):
            return True
    return False


# the runs kept while a command that scores runs (``once_a_tree``), by (repository, commit,
# worktree setup and its time cap, the caller's key: what ran, how, its time cap)
_runs: dict[tuple[str, ...], _Slot] | None = None
_depth = 0  # the decorated calls open now, in any thread
_runs_lock = threading.Lock()


@dataclass
class _Slot:
    lock: threading.Lock
    passed: list[object]  # the run that passed, once one did
    # the last run's result (or what it raised), and when it ended: an ask made before
    # that takes it, whatever it was (it ran while that ask waited)
    last: tuple[object, BaseException | None, float] | None = None


def once_a_tree(command: Callable[P, T]) -> Callable[P, T]:
    """For the length of ``command`` (a `leap` command that scores: one `leap run`, however
    long it drives its slice), a run in a fresh throwaway tree (``in_fresh``) that passed is
    not made there again: a fresh tree of one commit holds the same bytes each time. The
    ball's `tests` at its base are run once for the red's and the score's harness and the
    balls of a wave that share the base, and once for the tribunal's baseline (a real
    project's suite: minutes a run). A run that failed or timed out is asked again: the
    machine may be ready since (a dependency installed, a service back). A kept pass that a
    failure after it puts in doubt is asked again by the caller (``again``). Each `leap`
    command is a process of its own and asks afresh."""
    @wraps(command)
    def scoped(*args: P.args, **kwargs: P.kwargs) -> T:
        global _runs, _depth
        with _runs_lock:  # nested (quickstart runs the flow) or beside: one memo
            _depth += 1
            if _runs is None:
                _runs = {}
        try:
            return command(*args, **kwargs)
        finally:
            with _runs_lock:
                _depth -= 1
                if _depth == 0:
                    _runs = None
    return scoped


def in_fresh(repo_root: Path, commit: str, key: tuple[str, ...], run: Callable[[Path], T],
             passed: Callable[[T], bool], *, prefix: str = "leap-tree-",
             again: bool = False) -> tuple[T, bool]:
    """What ``run`` gives in a fresh throwaway tree of ``commit``, and whether it is kept
    from an earlier ask: under ``once_a_tree``, the run of an earlier ask with the same
    ``key`` (the command, how it is run, its time cap) that ``passed``, unless ``again`` (a
    failure since puts it in doubt). An ask that waited while another ran gets that run's
    result, passed or not, or what it raised (``again`` too: it ran after the doubt came);
    a later one runs again, unless a pass is kept."""
    runs = _runs
    if runs is None:
        with temporary(repo_root, commit, prefix=prefix) as tree:
            return run(tree), False
    full = commit if _FULL_SHA.fullmatch(commit) else \
        git.out(["rev-parse", "--verify", f"{commit}^{{commit}}"], repo_root)
    config = load_config(repo_root)
    setup = (config.worktree_setup or "", repr(config.builder_timeout))
    asked = time.monotonic()
    with _runs_lock:
        slot = runs.setdefault((os.path.realpath(repo_root), full, *setup, *key),
                               _Slot(threading.Lock(), []))
    with slot.lock:  # a second ask while the first runs waits for its result
        if slot.last is not None and slot.last[2] >= asked:  # it ran while this one asked
            if slot.last[1] is not None:
                raise slot.last[1]
            return slot.last[0], True  # type: ignore[return-value]
        if slot.passed and not again:
            return slot.passed[0], True  # type: ignore[return-value]
        try:
            with temporary(repo_root, full, prefix=prefix) as tree:
                result = run(tree)
        except Exception as exc:
            slot.last = (None, exc, time.monotonic())
            raise
        slot.passed[:] = [result] if passed(result) else []
        slot.last = (result, None, time.monotonic())
        return result, False


@contextmanager
def temporary(repo_root: Path, commit: str, *, prefix: str = "leap-tree-") -> Iterator[Path]:
    root_key = os.path.realpath(repo_root)
    if root_key not in _reaped:  # once a process: what killed runs left
        _reaped.add(root_key)
        reap_left(repo_root)
    parent = Path(tempfile.mkdtemp(prefix=prefix))
    # a name of its own: git names the worktree's admin folder after it, and two trees of
    # one name added at once (two scorings of `leap run`) race for `.git/worktrees/tree`
    tree = parent / f"tree-{parent.name.removeprefix(prefix)}"
    key = os.path.realpath(tree)
    with _IN_USE_LOCK:
        _IN_USE.add(key)
    full = commit if len(commit) == 40 else \
        git.out(["rev-parse", "--verify", f"{commit}^{{commit}}"], repo_root)
    (parent / OWNER).write_text(f"{os.getpid()} {full}\n", encoding="utf-8")
    git.run(["worktree", "add", "--detach", "--quiet", str(tree), commit], repo_root)
    try:
        _set_up(repo_root, tree, commit)  # before anything else runs there
        yield tree
    finally:
        try:
            _remove(repo_root, tree, parent)
        finally:
            with _IN_USE_LOCK:
                _IN_USE.discard(key)


def _restore_writable(root: Path) -> None:
    """Undo the read-only marks (a juror may have added unreadable folders) for removal."""
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            if not path.is_symlink():
                with _quiet():
                    path.chmod(path.stat().st_mode | stat.S_IRWXU)
    with _quiet():
        root.chmod(root.stat().st_mode | stat.S_IRWXU)


@contextmanager
def _quiet() -> Iterator[None]:
    try:
        yield
    except OSError:
        pass


EXPORT_PREFIX = "leap-juror-"
_exports_reaped: list[bool] = []  # once a process: what killed runs left


@contextmanager
def export(repo_root: Path, commit: str, *, prefix: str = EXPORT_PREFIX) -> Iterator[Path]:
    """T5: the commit's files in a fresh folder, read-only, with no ``.git`` beside them;
    marked with its process (``OWNER``), so what a killed run left is reaped later
    (``reap_exports``)."""
    if not _exports_reaped:
        _exports_reaped.append(True)
        reap_exports()
    parent = Path(tempfile.mkdtemp(prefix=prefix))
    tree, index = parent / "tree", {"GIT_INDEX_FILE": str(parent / "index")}
    try:
        (parent / OWNER).write_text(f"{os.getpid()} {commit}\n", encoding="utf-8")
        git.run(["read-tree", commit], repo_root, env=index)
        git.run(["checkout-index", "--all", "--force", f"--prefix={tree}/"], repo_root,
                env=index)
        (parent / "index").unlink()
        tree.mkdir(exist_ok=True)  # a commit with an empty tree
        _chmod_tree(tree, writable=False)
        yield tree
    finally:
        _restore_writable(parent)
        shutil.rmtree(parent, ignore_errors=True)


def reap_exports() -> list[Path]:
    """The jurors' exports (``export``) of processes that are gone (a run killed while its
    jurors sat), removed: each a read-only copy of a candidate that a user's `rm -rf`
    cannot take (a walk-away hunt found fourteen in /tmp, and nothing reaped them). Left
    alone: one whose process lives, one a process still works in (a juror of the killed
    run, reading), one with no owner mark (being made, or by an older leapgit). Returns
    the folders removed."""
    gone: list[Path] = []
    for parent in Path(tempfile.gettempdir()).glob(f"{EXPORT_PREFIX}*"):
        try:
            pid, _ = (parent / OWNER).read_text(encoding="utf-8").split()
            made_at = (parent / OWNER).stat().st_mtime
        except (OSError, ValueError):
            continue
        if not pid.isdigit() or alive(int(pid)) or _worked_in(parent, made_at):
            continue
        _restore_writable(parent)
        shutil.rmtree(parent, ignore_errors=True)
        gone.append(parent)
    return gone


def digest(tree: Path) -> str:
    """T8: every path, kind, mode, link target and byte under ``tree``, hashed; what cannot
    be read counts as changed (it differs from the export, which was all readable)."""
    h = hashlib.sha256()
    for folder, dirs, files in os.walk(tree, onerror=lambda e: h.update(f"!{e}".encode())):
        dirs.sort()
        for name in sorted(dirs + files):
            path = os.path.join(folder, name)
            h.update(os.fsencode(os.path.relpath(path, tree)) + b"\0")
            try:
                info = os.lstat(path)
                h.update(f"{info.st_mode:o}\0".encode())
                if stat.S_ISLNK(info.st_mode):
                    h.update(os.fsencode(os.readlink(path)))
                elif stat.S_ISREG(info.st_mode):
                    with open(path, "rb") as fh:
                        for chunk in iter(lambda: fh.read(1 << 20), b""):
                            h.update(chunk)
            except OSError as exc:
                h.update(f"!{exc.errno}".encode())
            h.update(b"\0")
    return h.hexdigest()
