"""A history as git's own diff of it says, read in one process: `git log --raw -t -z` of
some revisions (every commit's changes against its first parent, folders too, each path
as it is), and the commit objects themselves in one `git cat-file --batch`. What the audit
judges the ledger's history from (``audit.ledger``) and what `leap status` counts its
signatures from (``audit.presence``): git's C diff, never a Python diff of every commit."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from leapgit import git
from leapgit.audit.index import Change
from leapgit.errors import LeapError


class Commit(NamedTuple):
    sha: str
    parents: list[str]  # as git's log shows them (a shallow clone's boundary: none)
    tree: str
    message: str
    changes: list[Change]  # as `git log --raw -t` shows them against the first parent


def raw_log(root: Path, revs: Sequence[str], *, reverse: bool = False, merges: bool = False,
            what: str = "`git log`", surrogates: bool = False) -> list[Commit]:
    """Every commit ``revs`` reach (``^X`` excludes what X reaches), newest first (oldest
    first with ``reverse``), each with its changes against its first parent (a root
    commit's: everything it holds; a merge's: none, unless ``merges``); no message
    (``commit_bodies`` reads them). Read as the commits are (``git.as_is``: no graft),
    whatever the user's config says. ``surrogates``: a name that is not UTF-8 keeps its
    bytes (surrogateescape, as ``ledger.added`` reads them), else it reads with U+FFFD."""
    # the user's config must not change what git prints: the root commit's diff, a
    # signature check, the encoding
    with git.as_is():
        out = git.run(["-c", "log.showRoot=true", "-c", "log.showSignature=false", "-c",
                       "i18n.logOutputEncoding=UTF-8", "log", "--root",
                       *(["--reverse"] if reverse else []), "--no-renames",
                       *(["--diff-merges=first-parent"] if merges else []),
                       "--ignore-submodules=none", "-O/dev/null",
                       "--raw", "-t", "-z", "--no-abbrev", "--format=%x01%H %P %T", *revs,
                       "--"], root, check=False)
    if out.returncode != 0:
        said = out.stderr.decode("utf-8", "replace").strip().splitlines()
        raise LeapError(f"{what} failed: {said[-1] if said else f'exit {out.returncode}'}; "
                        "nothing was judged", hint="this repository's objects may be "
                        "damaged (`git fsck` names what is missing); nothing was changed")
    # NUL ends every field, and no path holds one: a commit's fields, then pairs of a
    # change's fields and its path, each pair read whole (a path may start like anything)
    fields, at, found = out.stdout.split(b"\0"), 0, []
    while at < len(fields) and fields[at].startswith(b"\x01"):
        ids = fields[at][1:].decode().split(" ")
        at += 1
        changes = []
        while at + 1 < len(fields) and fields[at].lstrip(b"\n").startswith(b":"):
            m = fields[at].lstrip(b"\n")[1:].decode().split()  # <old mode> <mode> <old id>
            changes.append(_change(m, fields[at + 1], surrogates))
            at += 2
        found.append(Commit(ids[0], [p for p in ids[1:-1] if p], ids[-1], "", changes))
    if any(fields[at:]):  # git printed what this reader does not know: never judge half
        raise LeapError(f"{what} printed what leapgit cannot read, after {len(found)} "
                        "commit(s): nothing was judged",
                        hint="a git setting or version this reader does not know changed "
                        "its log; please report it with your git version")
    return found


def _change(meta: list[str], path: bytes, surrogates: bool = False) -> Change:
    """``meta``: <old mode> <mode> <old id> <id> <status>. A name that is not UTF-8 reads
    with U+FFFD in it, as everywhere else, and is no name the index can hold (``exact``);
    with ``surrogates``, with its bytes kept."""
    if surrogates:
        return Change(meta[4], path.decode("utf-8", "surrogateescape"), meta[3], meta[1],
                      meta[0])
    try:
        return Change(meta[4], path.decode(), meta[3], meta[1], meta[0])
    except UnicodeDecodeError:
        return Change(meta[4], path.decode("utf-8", "replace"), meta[3], meta[1], meta[0],
                      exact=False)


def commit_bodies(root: Path, commits: Sequence[str]) -> dict[str, bytes]:
    """Each commit's object as git stores it (its header lines, a blank line, its message),
    in one `git cat-file --batch`."""
    if not commits:
        return {}
    data = git.run(["cat-file", "--batch"], root,
                   input="".join(f"{c}\n" for c in commits).encode()).stdout
    found, at = {}, 0
    for sha in commits:
        end = data.find(b"\n", at)
        header = data[at:end].split()  # <id> commit <size>
        if len(header) != 3 or header[:2] != [sha.encode(), b"commit"] or \
                not header[2].isdigit():  # a commit git log listed, and cat-file did not read
            raise LeapError(f"commit {sha} of the ledger's history could not be read "
                            f"({data[at:end][:80].decode('utf-8', 'replace') or 'no answer'}):"
                            " nothing was judged",
                            hint="this repository's objects may be damaged; nothing was "
                            "changed")
        size = int(header[2])
        found[sha] = data[end + 1:end + 1 + size]
        at = end + 2 + size
    return found
