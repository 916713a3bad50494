"""Every pushed tree means one thing. A tree that names an entry twice (two blobs, or a blob
and a tree of one name), or lists its entries out of git's order, is read one way by git
(the first entry; a lookup that stops early) and another by dulwich (the last entry wins),
so a rule would judge other bytes than the ones git serves and checks out: a merge holding
an attacker's ``.leap/allowed_signers`` first and the unchanged one last passed S6 while
``git show main:.leap/allowed_signers`` named the attacker admin. Such a push is refused
before any rule reads a tree, on every ref, and without ``receive.fsckObjects`` (which
``leap hooks install --server`` sets, so that git refuses them first).

A name git never writes is refused the same way (issue 18 F8): one holding a ``/`` (an entry
``src/a.py`` beside the tree ``src``: dulwich looks paths up one component at a time and never
finds it, ``git archive`` deploys it), an empty one, ``.``, ``..``, and ``.git`` in any case or
spelling a checkout reads as ``.git`` (NTFS: trailing dots and spaces, ``git~1``; HFS+:
ignored zero-width characters)."""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from dulwich.object_store import DiskObjectStore
from dulwich.objects import ObjectFormatException, parse_tree

from leapgit.gitobj import object_type
from leapgit.rules.objects import oid
from leapgit.rules.refusal import Refusal

if TYPE_CHECKING:
    from leapgit.rules.context import RefUpdate
    from leapgit.rules.objects import Objects

WHERE = "(pushed objects)"  # a tree in the push, whichever ref reaches it (or none yet)
HINT = ("write the tree with git, which never repeats a name; on the server, set "
        "receive.fsckObjects=true (`leap hooks install --server` does)")
_TREE = 2  # dulwich's type number of a tree
_SHA_LEN = 20  # sha256 repositories are not supported (FIELD-NOTES)
# the code points HFS+ ignores in a name (git's next_hfs_char): ".g\u200cit" is ".git" there
_HFS_IGNORED = dict.fromkeys([0x200C, 0x200D, 0x200E, 0x200F, *range(0x202A, 0x202F),
                              *range(0x206A, 0x2070), 0xFEFF])


def check_pushed_trees(objects: Objects, updates: tuple[RefUpdate, ...],
                       env: Mapping[str, str]) -> list[Refusal]:
    out = []
    for sha, raw in _pushed_trees(objects, updates, env):
        problem = tree_problem(raw)
        if problem is not None:
            out.append(Refusal("fsck", WHERE, sha, None, f"a pushed tree {problem}: git "
                               "and leapgit would read different contents", HINT,
                               "bad-tree"))
    return out


def tree_problem(raw: bytes) -> str | None:
    """Why git and dulwich would read this tree apart, or None."""
    kinds: dict[bytes, str] = {}
    last: bytes | None = None
    try:
        for name, mode, _sha in parse_tree(raw, _SHA_LEN):
            kind = "tree" if stat.S_ISDIR(mode) else "blob"
            shown = name.decode("utf-8", "replace")
            bad = name_problem(name)
            if bad is not None:
                return bad
            if name in kinds:
                return f"names {shown!r} twice ({kinds[name]} and {kind})"
            # git's order (fsck's verify_ordered): byte order, a tree read as "name/"; two
            # entries that sort equal are unordered too
            key = name + b"/" if kind == "tree" else name
            if last is not None and key <= last:
                return f"lists {shown!r} out of git's order"
            kinds[name], last = kind, key
    except (ObjectFormatException, ValueError) as exc:
        return f"does not parse ({exc})"
    return None


@functools.lru_cache(maxsize=1 << 16)
def name_problem(name: bytes) -> str | None:
    """Why git would never write ``name`` as one tree entry, or None (issue 18 F8).
    Remembered: a push of 10^4 commits that each add a file to one folder brings 10^4
    versions of that folder, 5 * 10^7 entries of a few thousand names in all."""
    shown = name.decode("utf-8", "replace")
    if not name:
        return "names an entry with an empty name"
    if b"/" in name or b"\0" in name:
        return f"names {shown!r}, which holds a '/' (a tree entry is one path component)"
    if name in (b".", b".."):
        return f"names {shown!r}, which leaves its folder"
    if _reads_as_dotgit(shown):
        return f"names {shown!r}, which a checkout reads as the repository's own .git"
    return None


def _reads_as_dotgit(name: str) -> bool:
    first = name.translate(_HFS_IGNORED).split("\\", 1)[0]
    return first.rstrip(". ").lower() in (".git", "git~1")


def _pushed_trees(objects: Objects, updates: tuple[RefUpdate, ...],
                  env: Mapping[str, str]) -> Iterator[tuple[str, bytes]]:
    """Every tree object the push brought: all of git's quarantine (a tree no pushed ref
    reaches yet could be named by a later push, as an object already known); without a
    quarantine (git before 2.11, a hook run by hand), the trees of the new commits."""
    quarantine = env.get("GIT_QUARANTINE_PATH")
    if quarantine:
        store = DiskObjectStore(quarantine)
        try:
            for sha in _own_objects(store, quarantine):
                # the type from the header first: a 300 MB blob is never inflated here
                # (blind review r1 F2); an unknown type is read whole, as before
                if object_type(store, sha) not in (_TREE, None):
                    continue
                type_num, raw = store.get_raw(oid(sha))
                if type_num == _TREE:
                    yield sha.decode(), raw
        finally:
            store.close()
        return
    yield from _reachable_trees(objects, updates)


def _own_objects(store: DiskObjectStore, path: str) -> Iterator[bytes]:
    """The ids in the quarantine's own packs and loose files (never its alternates: the
    repository's objects were judged when they came)."""
    for pack in store.packs:
        yield from pack
    for fanout in os.scandir(path):
        if len(fanout.name) == 2 and fanout.is_dir():
            for entry in os.scandir(fanout.path):
                if len(entry.name) == 38:
                    yield (fanout.name + entry.name).encode()


def _reachable_trees(objects: Objects, updates: tuple[RefUpdate, ...],
                     ) -> Iterator[tuple[str, bytes]]:
    known = [r.decode() for r in objects.repo.refs.as_dict().values()]
    seen: set[bytes] = set()
    for upd in updates:
        if upd.new is None or objects.type_of(upd.new) != "commit":
            continue
        for commit in objects.new_commits(upd.new, [upd.old or "", *known]):
            todo = [commit.tree]
            while todo:
                sha = todo.pop()
                if sha in seen:
                    continue
                seen.add(sha)
                type_num, raw = objects.store.get_raw(oid(sha))
                if type_num != _TREE:
                    continue
                yield sha.decode(), raw
                todo.extend(s for _n, mode, s in _entries(raw) if stat.S_ISDIR(mode))


def _entries(raw: bytes) -> list[tuple[bytes, int, bytes]]:
    try:
        return list(parse_tree(raw, _SHA_LEN))
    except (ObjectFormatException, ValueError):
        return []  # reported by tree_problem
