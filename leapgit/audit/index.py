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

import bisect
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
    exact: bool = True  # False: the path was not UTF-8, and reads with U+FFFD in it

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


class _Folder:
    """A folder's entries as its git tree holds them, in git's order (a folder sorts as its
    name and a slash): each entry's bytes kept, so its id costs one join and one hash."""

    __slots__ = ("keys", "lines", "at")

    def __init__(self) -> None:
        self.keys: list[bytes] = []  # the names as git sorts them
        self.lines: list[bytes] = []  # each entry as the tree holds it, in that order
        self.at: dict[bytes, bytes] = {}  # name -> its key (where it stands: a bisect)

    def set(self, name: bytes, mode: bytes, raw: bytes, new: bool) -> bool:
        """Add (``new``) or change the entry ``name``; False: not as said (git listed a name
        twice, or changed one it never added)."""
        line = b"%s %s\0%s" % (mode, name, raw)
        key = self.at.get(name)
        if not new:
            if key is not None:
                self.lines[bisect.bisect_left(self.keys, key)] = line
            return key is not None
        if key is not None:
            return False
        key = name + b"/" if mode == b"40000" else name
        i = bisect.bisect(self.keys, key)
        self.keys.insert(i, key)
        self.lines.insert(i, line)
        self.at[name] = key
        return True

    def id(self, sha256: bool) -> str:
        body = b"".join(self.lines)
        digest = hashlib.sha256 if sha256 else hashlib.sha1
        return digest(b"tree %d\0" % len(body) + body).hexdigest()


class LedgerIndex:
    def __init__(self) -> None:
        self.additive = True
        self.position: dict[str, int] = {}  # commit -> its place, the oldest 0
        self._files: dict[str, tuple[int, bytes, int]] = {}  # path -> mode, id, place
        self._folders: dict[str, int] = {"": 0}  # folder -> the place it came
        self._names: dict[str, list[tuple[str, int]]] = {}  # folder -> (name, place)
        self._trees: dict[str, _Folder] = {"": _Folder()}

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

    def add(self, commit: str, place: int, changes: list[Change], tree: str) -> list[str]:
        """The next commit of the line: its changes as git showed them, and its tree. Each
        folder it changed must then hash to the id git gave it, the top folder to ``tree``:
        the folders that do not ("" for the top) hold a change git's diff did not show (a
        mode, an order, a name no git writes), and the index is off."""
        self.position[commit] = place
        changed = {"": tree}
        for c in changes:
            if c.status not in ("A", "M") or (c.status == "M" and not c.folder) or \
                    not self._take(c, place):
                self.additive = False
                return []
            if c.folder:
                changed[c.path] = c.blob
        sha256 = len(tree) == 64
        wrong = [folder for folder, expected in changed.items()
                 if self._trees[folder].id(sha256) != expected]
        if wrong:
            self.additive = False
        return wrong

    def _take(self, c: Change, place: int) -> bool:
        folder, _, name = c.path.rpartition("/")
        tree = self._trees.get(folder)
        if tree is None or not name or not c.exact:  # a walk cannot read such a name either
            return False
        new = c.status == "A"
        if not tree.set(name.encode(), c.mode.lstrip("0").encode(),
                        bytes.fromhex(c.blob), new):
            return False
        if not new:
            return c.path in self._trees  # M: a folder the index holds, with its new id
        if c.folder:
            self._folders[c.path] = place
            self._trees[c.path] = _Folder()
        else:
            self._files[c.path] = (int(c.mode, 8), c.blob.encode(), place)
        self._names.setdefault(folder, []).append((name, place))
        return True

    def seal(self) -> None:
        """After the last commit."""
        for names in self._names.values():
            names.sort()
