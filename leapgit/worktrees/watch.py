"""Writes a builder makes outside its own worktree (L5, L9). A worktree is a separate
checkout, not a sandbox: a builder can write anywhere by an absolute path. ``leap throw
--run`` snapshots the other checkouts around each builder and holds the round when one
changed.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from leapgit import git
from leapgit.ledger import history, query
from leapgit.ledger.workspace import Workspace
from leapgit.records import trailers as tr
from leapgit.tribunal.worktree import in_use, throwaway
from leapgit.worktrees import place
from leapgit.worktrees.closeround import admin_dir
from leapgit.worktrees.drivelock import held


def tree_state(tree: Path) -> tuple[str, ...]:
    """What ``git status`` shows of a checkout (branch, HEAD, every changed path), with the
    size and mtime of each changed path, so a second write to a dirty file shows too."""
    raw = git.run(["status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all",
                   "--no-renames"], tree, check=False, detached=True).stdout
    out = []
    for item in raw.decode("utf-8", "surrogateescape").split("\0"):
        if not item:
            continue
        fields = {"1": 8, "u": 10, "?": 1}.get(item[:1])  # where porcelain v2 puts the path
        path = item.split(" ", fields)[fields] if fields else ""
        try:
            st = os.lstat(tree / path) if path else None
        except OSError:
            st = None
        out.append(f"{item}\0{st.st_size}:{st.st_mtime_ns}" if st else item)
    return tuple(out)


class Watch:
    """L5, L9: the trees that are not a ball's own (the user's checkout, and every ball
    worktree no round of this run is busy in) must not change while its builder runs. A
    tree a concurrent round works in is not watched for that round: who wrote there cannot
    be told apart."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._lock = threading.Lock()
        self._busy: dict[str, int] = {}  # worktree -> rounds in it now
        self._turns: dict[str, int] = {}  # worktree -> rounds started or ended in it

    def _mark(self, tree: Path, delta: int) -> None:
        key = os.path.realpath(tree)
        with self._lock:
            self._busy[key] = self._busy.get(key, 0) + delta
            self._turns[key] = self._turns.get(key, 0) + 1

    def enter(self, tree: Path) -> None:
        self._mark(tree, 1)

    def leave(self, tree: Path) -> None:
        self._mark(tree, -1)

    def snapshot(self, own: Path) -> dict[str, tuple[int, tuple[str, ...]]]:
        mine = os.path.realpath(own)
        trees = [str(w.path) for w in place.list_worktrees(self.ws)]
        leapgits = in_use()  # leapgit's own throwaway trees: its test runs write there
        found = {}
        for tree in trees:
            key = os.path.realpath(tree)
            with self._lock:
                if key == mine or self._busy.get(key, 0) or not os.path.isdir(key) \
                        or key in leapgits or throwaway(key):
                    continue
                turn = self._turns.get(key, 0)
            if self._driven_elsewhere(Path(tree)):
                continue  # a builder of another run is at work there: its own ball's tree
            found[tree] = (turn, tree_state(Path(tree)))
        return found

    def _driven_elsewhere(self, tree: Path) -> bool:
        admin = admin_dir(self.ws.paths.common_dir, tree)
        return admin is not None and held(admin / "leap")

    def changed(self, before: dict[str, tuple[int, tuple[str, ...]]]) -> list[str]:
        out = []
        for tree, (turn, state) in before.items():
            key = os.path.realpath(tree)
            with self._lock:
                if self._busy.get(key, 0) or self._turns.get(key, 0) != turn:
                    continue  # a round of this run worked there meanwhile
            if not os.path.isdir(key):
                continue  # removed meanwhile (a throwaway tree): nobody writes there now
            now = tree_state(Path(tree))
            if now != state and not integrated(Path(tree), state, now, self._landed):
                out.append(tree)
        return out

    def _landed(self) -> set[str]:
        """The spine tips the ledger records merges landing at (L9: the integrator's)."""
        with self.ws.ledger() as ledger:
            view = ledger.require()
            return {m.tip for sid in query.slice_ids(view)
                    for m in history.merge_records(view, sid)}


_HEAD = ("# branch.oid ", "# branch.ab ")  # where a checkout's commit shows in its status


def integrated(tree: Path, before: tuple[str, ...], after: tuple[str, ...],
               landed: Callable[[], set[str]]) -> bool:
    """Whether the checkout's HEAD only moved forward along integration merges to a tip
    the ledger records a landing at (``landed``: leapgit's integrator landed another slice
    meanwhile; a hunt saw such a move hold a round, L6, as a builder's write), and nothing
    else in it changed. Each commit of the move is a merge of two parents carrying the
    integration trailers (a blind review: three forged trailer lines on a plain commit
    passed), and its end a recorded landing."""
    def split(state: tuple[str, ...]) -> tuple[str | None, tuple[str, ...]]:
        oid = next((i.split()[2] for i in state if i.startswith(_HEAD[0])), None)
        return oid, tuple(i for i in state if not i.startswith(_HEAD))

    (old, rest), (new, now) = split(before), split(after)
    if rest != now or old is None or new is None or old == new or \
            not git.is_ancestor(tree, old, new):
        return False
    raw = git.run(["log", "--first-parent", "--format=%P%n%B%x00", f"{old}..{new}"], tree,
                  check=False, detached=True)
    commits = [m.strip("\n").partition("\n") for m in
               raw.stdout.decode("utf-8", "surrogateescape").split("\0") if m.strip()]
    return raw.returncode == 0 and bool(commits) and all(
        len(parents.split()) == 2 and
        {tr.SLICE, tr.BALL, tr.CANDIDATE} <= {k for k, _ in tr.parse(body).pairs}
        for parents, _, body in commits) and new in landed()
