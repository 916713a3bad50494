"""What the change is, read from git objects only (never the work tree, T8): the touched
paths, every file's blob at head, the bytes of the blobs we need, and who wrote it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from leapgit import git
from leapgit.errors import UsageError

_TRAILER_IDENTITY = re.compile(r"(?im)^(?:co-authored-by|signed-off-by)\s*:\s*(.+)$")
_NAME_EMAIL = re.compile(r"^(.*?)\s*<([^>]*)>\s*$")


@dataclass(frozen=True)
class TreeEntry:
    path: str
    mode: str
    blob: str


@dataclass(frozen=True)
class Change:
    base: str
    head: str
    tree: str
    touched: tuple[str, ...]  # every path added, modified or deleted (renames split)
    entries: dict[str, TreeEntry]  # the whole head tree, path -> entry


def path_text(raw: bytes) -> str:
    """A git path as text; bytes that are not UTF-8 survive as surrogate escapes."""
    return raw.decode("utf-8", "surrogateescape")


def not_utf8(paths: list[str]) -> list[str]:
    """Paths holding bytes that are not UTF-8, shown as their escaped bytes."""
    bad = []
    for path in paths:
        try:
            path.encode("utf-8")
        except UnicodeEncodeError:
            bad.append(repr(path.encode("utf-8", "surrogateescape"))[2:-1])
    return bad


def resolve(rev: str, root: Path, what: str) -> str:
    sha = git.rev_parse(rev, root)
    if sha is None:
        raise UsageError(f"{rev!r} is not a commit in this repository", field=what)
    return sha


def read_change(root: Path, base: str, head: str) -> Change:
    tree = git.out(["rev-parse", f"{head}^{{tree}}"], root)
    raw = git.run(["diff", "--name-only", "-z", "--no-renames", base, head], root).stdout
    touched = tuple(sorted(path_text(p) for p in raw.split(b"\0") if p))
    return Change(base, head, tree, touched, head_tree(root, head))


def head_tree(root: Path, head: str) -> dict[str, TreeEntry]:
    raw = git.run(["ls-tree", "-r", "-z", "--full-tree", head], root).stdout
    entries: dict[str, TreeEntry] = {}
    for item in raw.split(b"\0"):
        if not item:
            continue
        meta, _, path = item.partition(b"\t")
        mode, _kind, blob = meta.decode().split(" ")
        entries[path_text(path)] = TreeEntry(path_text(path), mode, blob)
    return entries


def read_blobs(root: Path, blobs: list[str]) -> dict[str, bytes]:
    """Every blob's bytes through one ``git cat-file --batch``."""
    if not blobs:
        return {}
    unique = list(dict.fromkeys(blobs))
    out = git.run(["cat-file", "--batch"], root, input="".join(f"{b}\n" for b in unique).encode())
    data, pos, found = out.stdout, 0, {}
    for blob in unique:
        end = data.index(b"\n", pos)
        header = data[pos:end].decode().split()
        size = int(header[2])
        found[blob] = data[end + 1:end + 1 + size]
        pos = end + 1 + size + 1
    return found


def authors(root: Path, base: str, head: str) -> list[tuple[str, str]]:
    """(label, value) for every author, committer and co-author name and email in the change."""
    fmt = "%an%x00%ae%x00%cn%x00%ce%x00%B%x1e"
    proc = git.run(["log", f"--format={fmt}", f"{base}..{head}"], root)
    raw = proc.stdout.decode("utf-8", "replace")
    found: list[tuple[str, str]] = []
    for chunk in raw.split("\x1e"):
        parts = chunk.strip("\n").split("\x00")
        if len(parts) < 5:
            continue
        found += [("commit author name", parts[0]), ("commit author email", parts[1]),
                  ("committer name", parts[2]), ("committer email", parts[3])]
        for value in _TRAILER_IDENTITY.findall(parts[4]):
            match = _NAME_EMAIL.match(value.strip())
            name, email = (match.group(1), match.group(2)) if match else (value.strip(), "")
            found += [("co-author name", name), ("co-author email", email)]
    return [(label, value.strip()) for label, value in found if value.strip()]
