"""The ledger at any commit of a history that only ever added, as an index of what the
commits up to it added, so the audit's views (``audit.context.AuditView``) answer a path
or a folder without parsing a tree: each commit's top folders grow with the ledger, and at
10,000 balls every view's walk parsed a folder of 1,000 slices (``bench_audit``).

The index is built from git's own diffs (`git log --raw -t -z`, ``audit.ledger``) and is
trusted only when it provably holds what the trees hold:

- the history is one line from its root, each commit's parent the one before it;
- every change git shows is an added file or folder, under a folder already there, a name
  not already taken;
- no commit changed a folder without git showing a change in it (a mode or an order of
  entries git's diff does not tell apart; ``hidden``);
- every folder the index holds hashes, as a git tree, to the id git gave it last, and the
  top folder to the tip's tree: an entry named across folders (``y/z``), a duplicate name
  or a mode git prints another way cannot pass.

Otherwise ``additive`` is False and the views walk their trees, as every other reader does.
"""

from __future__ import annotations

import hashlib
from typing import NamedTuple

from leapgit.ledger.view import TREE_MODE

_TREE = "040000"  # a folder's mode as git prints it


class Change(NamedTuple):
    """One line of `git log --raw`: what git's diff of a commit against its parent shows."""

    status: str  # A, M, D, T
    path: str
    blob: str  # the new object id (a blob's, a folder's tree's)
    mode: str  # the new mode as git prints it (040000 for a folder)
    old_mode: str

    @property
    def folder(self) -> bool:
        return _TREE in (self.mode, self.old_mode)


def hidden(changes: list[Change], tree: str, parent_tree: str | None) -> list[str]:
    """The folders (``""``: the top) a commit changed while git's diff shows no change in
    them: a folder whose tree id changed (its M line) with no line under it, or a commit
    whose tree differs from its parent's with no line at all."""
    if parent_tree is not None and tree != parent_tree and not changes:
        return [""]
    paths = [c.path for c in changes]
    return [c.path for c in changes if c.folder and c.status == "M"
            and not any(p.startswith(c.path + "/") for p in paths)]


class LedgerIndex:
    def __init__(self) -> None:
        self.additive = True
        self.position: dict[str, int] = {}  # commit -> its place, the oldest 0
        self._files: dict[str, tuple[int, bytes, int]] = {}  # path -> mode, id, place
        self._folders: dict[str, int] = {"": 0}  # folder -> the place it came
        self._names: dict[str, list[tuple[str, int]]] = {}  # folder -> (name, place)
        # folder -> name -> (mode, id) as a git tree holds them; and the id git gave it last
        self._trees: dict[str, dict[bytes, tuple[bytes, bytes]]] = {"": {}}
        self._ids: dict[str, str] = {}

    def place(self, commit: str | None) -> int | None:
        """Where ``commit`` stands in an additive history; None: walk its trees."""
        return self.position.get(commit) if self.additive and commit else None

    def entry(self, path: str, place: int) -> tuple[int, bytes] | None:
        """(mode, id) of ``path`` at ``place``, as a walk of the trees finds it; a folder's
        id is not kept (``names`` lists it)."""
        found = self._files.get(path)
        if found is not None:
            return (found[0], found[1]) if found[2] <= place else None
        since = self._folders.get(path) if path else None
        return (TREE_MODE, b"") if since is not None and since <= place else None

    def names(self, folder: str, place: int) -> list[str]:
        """The names directly under ``folder`` ("" for the top) at ``place``, sorted."""
        return [name for name, since in self._names.get(folder, ()) if since <= place]

    def add(self, commit: str, place: int, changes: list[Change]) -> None:
        """The next commit of the line (its changes as git showed them)."""
        self.position[commit] = place
        for c in changes:
            if c.folder and c.status == "M":
                self._ids[c.path] = c.blob
            elif c.status != "A" or not self._take(c, place):
                self.additive = False
                return

    def _take(self, c: Change, place: int) -> bool:
        folder, _, name = c.path.rpartition("/")
        tree = self._trees.get(folder)
        try:
            key = name.encode("utf-8")
        except UnicodeEncodeError:  # a name git printed that is not UTF-8
            return False
        if tree is None or not name or key in tree or c.path in self._files:
            return False
        tree[key] = (c.mode.lstrip("0").encode(), bytes.fromhex(c.blob))
        if c.folder:
            self._folders[c.path] = place
            self._trees[c.path] = {}
            self._ids[c.path] = c.blob
        else:
            self._files[c.path] = (int(c.mode, 8), c.blob.encode(), place)
        self._names.setdefault(folder, []).append((name, place))
        return True

    def seal(self, tip_tree: str) -> None:
        """After the last commit: every folder, with the folders in it as git left them
        last, hashes to the id git gave it last (the top folder: the tip's tree)."""
        self._ids[""] = tip_tree
        if self.additive and any(self._tree_id(folder) != self._ids.get(folder)
                                 for folder in self._trees):
            self.additive = False
        for names in self._names.values():
            names.sort()

    def _tree_id(self, folder: str) -> str:
        """The id of the git tree of ``folder``'s entries, in git's order (a folder sorts as
        its name and a slash), hashed as git hashed the tip (SHA-1 or SHA-256)."""
        items = []
        for name, (mode, raw) in self._trees[folder].items():
            if mode == b"40000":  # a folder: its id as git gave it last
                raw = bytes.fromhex(self._ids.get(f"{folder}/{name.decode()}".lstrip("/"),
                                                  "00"))
            items.append((name + b"/" if mode == b"40000" else name, mode, name, raw))
        body = b"".join(b"%s %s\0%s" % (mode, name, raw) for _, mode, name, raw in sorted(items))
        digest = hashlib.sha256 if len(self._ids[""]) == 64 else hashlib.sha1
        return digest(b"tree %d\0" % len(body) + body).hexdigest()
