"""Roll back a refused ball (L6, L9): only this ball's scope files, only in its own worktree.

The built-in rollback (``restore-scope``) writes each scope file back to its blob at the
ball's throw base, file by file (a file absent at the base is removed). It never runs a broad
``checkout``, ``clean`` or ``reset``, never writes through a symlink, and never writes
outside the ball's worktree. A declared rollback command runs in the ball's worktree instead.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dulwich.object_store import tree_lookup_path

from leapgit.errors import RuleViolation, shell_word
from leapgit.gitobj import oid
from leapgit.ledger.repo import open_repo
from leapgit.records.types import ABSENT, BUILTIN_ROLLBACK, BallRecord, ThrowRecord
from leapgit.slices.scope import ScopeError, TreeResolver, normalise
from leapgit.worktrees.check import checkout_bytes, exec_bit_counts, holds

if TYPE_CHECKING:
    from leapgit.worktrees.rewind import Rewound

ROLLBACK_TIMEOUT = 300.0
_NAMED = 50  # the removed files a summary names one by one


@dataclass(frozen=True)
class RolledBack:
    method: str
    restored: tuple[str, ...]
    skipped: tuple[str, ...] = ()
    evidence: str | None = None  # the ref the refused commit is kept under (``evidence``)
    rewound: Rewound | None = None  # the refused commit left the ball branch (``rewind``)
    not_rewound: str | None = None  # why it could not

    def summary(self) -> str:
        """One line: a round that removed 10^5 files names 50 of them, never megabytes."""
        text = f"rolled back ({self.method}): {len(self.restored)} scope file(s) restored"
        if self.skipped:
            text += f"; not touched: {', '.join(self.skipped)}"
        if self.evidence:
            text += f"; the refused commit is kept as evidence: {self.evidence} (local)"
        if self.rewound:
            text += f"; {self.rewound.summary()}"
            removed = self.rewound.removed
            if removed and self.evidence:
                named = " ".join(shell_word(p) for p in removed[:_NAMED])
                text += (f"; `git restore --source={self.evidence} -- {named}` brings back "
                         + ("what it removed" if len(removed) <= _NAMED else
                            f"the first {_NAMED} files it removed (`git diff --name-only "
                            f"--diff-filter=A {self.rewound.start[:12]} {self.evidence}` "
                            f"lists all {len(removed)})"))
        if self.not_rewound:
            text += f"; the ball branch still holds the refused commit: {self.not_rewound}"
        return text


def _inside(worktree: Path, path: Path) -> bool:
    """Whether ``path``'s folder resolves inside the worktree, as it stands now."""
    root = Path(os.path.realpath(worktree))
    return Path(os.path.realpath(path.parent)).is_relative_to(root)


def _write(target: Path, data: bytes, mode: int) -> None:
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".leap-rollback-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o755 if mode & 0o111 else 0o644)
        os.replace(tmp, target)  # replaces a symlink itself, never writes through it
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _remove_folder(target: Path) -> bool:
    """A builder may leave a folder where a scope file was: remove it, the folder itself and
    never what a symlink inside it points at (``rmtree`` does not follow symlinks)."""
    if target.is_symlink() or not target.is_dir():
        return False
    shutil.rmtree(target)
    return True


def _descends(common_dir: Path, base: str, red: str) -> bool:
    return subprocess.run(["git", "merge-base", "--is-ancestor", base, red], cwd=common_dir,
                          capture_output=True).returncode == 0


def restore_scope(common_dir: Path, worktree: Path, ball: BallRecord,
                  thrown: ThrowRecord) -> RolledBack:
    restored: list[str] = []
    skipped: list[str] = []
    with open_repo(str(common_dir)) as repo:
        base_tree = repo.object_store[oid(thrown.base)].tree
        resolver = TreeResolver(repo, base_tree, None)
        modes = exec_bit_counts(repo)
        for entry in ball.scope:
            try:
                rel = normalise(entry.real)
                found = resolver.resolve(rel)
            except ScopeError as exc:
                skipped.append(f"{entry.path} ({exc})")
                continue
            target = worktree / found.real
            if not _inside(worktree, target):
                skipped.append(f"{entry.path} (its folder leads outside the worktree)")
                continue
            if _remove_folder(target) and found.blob == ABSENT:
                restored.append(found.real)
                continue
            if found.blob == ABSENT:
                if target.is_symlink() or target.is_file():
                    target.unlink()
                    restored.append(found.real)
                continue
            mode = _mode(repo, base_tree, found.real)
            if holds(target, found.blob, mode if modes else None):  # as git stores it
                continue
            data = repo.object_store[oid(found.blob)].as_raw_string()
            target.parent.mkdir(parents=True, exist_ok=True)
            _write(target, checkout_bytes(worktree, found.real, found.blob, data), mode)
            restored.append(found.real)
    return RolledBack(BUILTIN_ROLLBACK, tuple(restored), tuple(skipped))


def _mode(repo: object, tree: bytes, path: str) -> int:
    mode, _ = tree_lookup_path(repo.object_store.__getitem__, oid(tree),  # type: ignore[attr-defined]
                               path.encode())
    return int(mode)


def rollback(common_dir: Path, worktree: Path, ball: BallRecord, thrown: ThrowRecord,
             env: dict[str, str], red: str | None = None) -> RolledBack:
    """L6: undo only this ball's changes, through its declared rollback. When the ball has
    a red commit descending from its base, the scope goes back to that commit: the frozen
    failing test is the ball's contract, never the builder's change (T7.1)."""
    if ball.rollback.strip() == BUILTIN_ROLLBACK:
        if red is not None and _descends(common_dir, thrown.base, red):
            thrown = thrown._replace(base=red)
        return restore_scope(common_dir, worktree, ball, thrown)
    # In a session of its own: a Ctrl-C in the terminal must not kill the rollback of a -1
    # already recorded (L6); leapgit decides, and stops it (all of it) only on its timeout.
    proc = subprocess.Popen(ball.rollback, shell=True, cwd=worktree, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        _, stderr = proc.communicate(timeout=ROLLBACK_TIMEOUT)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise RuleViolation(f"the rollback of {ball.slice}/{ball.ball} timed out",
                            field="rollback", rule="L6") from None
    if proc.returncode != 0:
        tail = stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
        raise RuleViolation(
            f"the rollback command of {ball.slice}/{ball.ball} failed "
            f"(exit {proc.returncode}): {tail[0]}", field="rollback", rule="L6",
            hint=f"restore the scope files by hand in {worktree}",
        )
    return RolledBack(f"command: {ball.rollback}", ())
