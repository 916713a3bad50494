"""Which ledger commits carry a signature at all (no crypto: for `leap status`).

Kept apart from ``audit.signatures``: presence needs no policy, no verification and no
history replay, and `leap status` imports it on every run (the signature modules it no
longer loads, ``signing.policy`` and ``rules.signing_history`` with ``dulwich.walk``, cost
it ~14 ms of start-up under load, issue 13 item 7)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, NamedTuple

from leapgit import __version__, git
from leapgit.audit.rawlog import commit_bodies, raw_log
from leapgit.records.cache import keep_json

if TYPE_CHECKING:
    from pathlib import Path


class Presence(NamedTuple):
    commits: int
    unsigned_records: tuple[str, ...]
    unsigned_commits: int
    shallow: bool = False  # a shallow clone: the ledger's older commits are not here
    fetch: str | None = None  # then, the git command that fetches them, when one can


FORMAT = 2  # of the kept count: another format, or another leapgit, keeps a file of its own


def presence_cache(common_dir: Path) -> Path:
    """Where `leap status` keeps the count of the ledger's last tip it saw."""
    return common_dir / "leap-cache" / f"presence-{__version__}-{FORMAT}.json"


def signature_presence(root: Path, ledger_ref: str,
                       boundary: frozenset[str] = frozenset(),
                       cache: Path | None = None) -> Presence:
    """Every commit the ledger ref reaches, counted once; the records each unsigned one
    added to its first parent's tree. ``boundary``: a shallow clone's commits whose parents
    are not here (``git.shallow_commits``): counted, their additions unknown. ``cache``: a
    file that keeps the count of a tip (`leap status`), so the next count reads only the
    commits added since; without it, or after a rewrite, every commit is read. Read in two
    git processes, whatever the history's length (``audit.rawlog``: git's diff of each
    commit, not one in Python: 36.6 s to 1.9 s over 10,000 balls' ledger)."""
    tip = _tip(root, ledger_ref)
    if not tip:
        return Presence(0, (), 0)
    kept = _load(cache) if cache is not None and not boundary else None
    if kept is not None and kept.tip == tip:
        return kept.presence
    with git.as_is():  # as the log reads them: no graft's parents
        since = kept.tip if kept is not None and git.is_ancestor(root, kept.tip, tip) else None
    if kept is not None and since is not None:  # only what was added
        walked = _walk(root, tip, boundary, kept.tip)
        counted = Presence(kept.presence.commits + walked.commits,
                           tuple(sorted(kept.presence.unsigned_records + walked.paths)),
                           kept.presence.unsigned_commits + walked.unsigned)
    else:  # none kept, or the ledger was rewritten: what was kept counts for nothing
        walked = _walk(root, tip, boundary, None)
        counted = Presence(walked.commits, tuple(sorted(walked.paths)), walked.unsigned,
                           walked.cut)
    if cache is not None and not boundary:
        _keep(cache, tip, counted)
    return counted


def _tip(root: Path, ledger_ref: str) -> str:
    """The commit ``ledger_ref`` names, that very ref (no other name git would guess for
    it); "" when there is none."""
    listed = git.run(["for-each-ref", "--format=%(objectname) %(refname)", ledger_ref], root,
                     check=False).stdout.decode("utf-8", "surrogateescape").splitlines()
    named = [line.partition(" ")[0] for line in listed if line.partition(" ")[2] == ledger_ref]
    if not named:
        return ""
    found = git.run(["rev-parse", "--verify", "--quiet", f"{named[0]}^{{commit}}"], root,
                    check=False)
    return found.stdout.decode().strip() if found.returncode == 0 else ""


class _Walked(NamedTuple):
    commits: int
    unsigned: int
    paths: tuple[str, ...]
    cut: bool


def _walk(root: Path, tip: str, boundary: frozenset[str], since: str | None) -> _Walked:
    """The commits ``tip`` reaches and ``since`` does not: how many, how many unsigned, the
    files those added (a file whose type changed counts as added), whether one of them is a
    shallow clone's boundary whose parents are not here (its additions are unknown)."""
    log = raw_log(root, [tip, *([f"^{since}"] if since else [])], merges=True,
                  what="`git log` of the ledger", surrogates=True)
    bodies = commit_bodies(root, [c.sha for c in log])
    unsigned, cut = 0, False
    paths: list[str] = []
    for c in log:
        header = bodies[c.sha].partition(b"\n\n")[0].split(b"\n")
        keys = [line.partition(b" ")[0] for line in header if not line.startswith(b" ")]
        # as the object says, not as a shallow clone's log does; a root hides nothing
        at_cut = c.sha in boundary and keys[1:2] == [b"parent"]
        cut = cut or at_cut
        if _signature(header):
            continue
        unsigned += 1
        if not at_cut:
            paths.extend(ch.path for ch in c.changes if ch.status in ("A", "T")
                         and not ch.folder)
    return _Walked(len(log), unsigned, tuple(paths), cut)


class _Kept(NamedTuple):
    tip: str
    presence: Presence


def _load(cache: Path) -> _Kept | None:
    """What ``_keep`` wrote; None when there is none, or it is damaged (a full count then)."""
    try:
        data = json.loads(cache.read_bytes())
        records, tip = data["records"], data["tip"]
        if not isinstance(records, list) or not all(isinstance(p, str) for p in records) or \
                not isinstance(tip, str) or len(tip) != 40:
            return None
        found = Presence(int(data["commits"]), tuple(records), int(data["unsigned"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError, OverflowError,
            RecursionError):  # nested past the parser's depth
        return None
    if not 0 <= found.unsigned_commits <= found.commits or found.commits < 1:
        return None
    return _Kept(tip, found)


def _keep(cache: Path, tip: str, found: Presence) -> None:
    """Written whole, by rename: a reader finds the old count or the new, never half."""
    keep_json(cache, {"tip": tip, "commits": found.commits,
                      "unsigned": found.unsigned_commits,
                      "records": list(found.unsigned_records)})


def _signature(header: list[bytes]) -> bytes:
    """The ``gpgsig`` headers' value, as dulwich's ``Commit.gpgsig`` reads it (each such
    header with its continuation lines, joined); empty: no signature (git says N too)."""
    found: list[bytes] = []
    inside = False
    for line in header:
        if line.startswith(b" "):  # a continuation of the header before it
            if inside:
                found[-1] += b"\n" + line[1:]
            continue
        inside = line.startswith(b"gpgsig ")
        if inside:
            found.append(line[len(b"gpgsig "):])
    return b"\n".join(found)
