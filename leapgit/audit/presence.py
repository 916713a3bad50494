"""Which ledger commits carry a signature at all (no crypto: for `leap status`).

Kept apart from ``audit.signatures``: presence needs no policy, no verification and no
history replay, and `leap status` imports it on every run (the signature modules it no
longer loads, ``signing.policy`` and ``rules.signing_history`` with ``dulwich.walk``, cost
it ~14 ms of start-up under load, issue 13 item 7)."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, NamedTuple

from leapgit import __version__
from leapgit.gitobj import oid, refname
from leapgit.ledger.added import added_files

if TYPE_CHECKING:
    from pathlib import Path

    from dulwich.objects import Commit

    from leapgit.gitobj import GitRepo


class Presence(NamedTuple):
    commits: int
    unsigned_records: tuple[str, ...]
    unsigned_commits: int
    shallow: bool = False  # a shallow clone: the ledger's older commits are not here
    fetch: str | None = None  # then, the git command that fetches them, when one can


FORMAT = 1  # of the kept count: another format, or another leapgit, keeps a file of its own


def presence_cache(common_dir: Path) -> Path:
    """Where `leap status` keeps the count of the ledger's last tip it saw."""
    return common_dir / "leap-cache" / f"presence-{__version__}-{FORMAT}.json"


def signature_presence(repo: GitRepo, ledger_ref: str,
                       boundary: frozenset[str] = frozenset(),
                       cache: Path | None = None) -> Presence:
    """Every commit the ledger ref reaches, counted once; the records each unsigned one
    added to its first parent's tree. ``boundary``: a shallow clone's commits whose parents
    are not here (``git.shallow_commits``): counted, their additions unknown. ``cache``: a
    file that keeps the count of a tip (`leap status`), so the next count walks only the
    commits added since; without it, or after a rewrite, every commit is walked."""
    try:
        tip: bytes | None = repo.refs[refname(ledger_ref)]
    except KeyError:
        tip = None
    if tip is None:
        return Presence(0, (), 0)
    kept = _load(cache) if cache is not None and not boundary else None
    if kept is not None and kept.tip == tip:
        return kept.presence
    walked = _walk(repo, tip, boundary, kept.seen if kept is not None else frozenset())
    if kept is not None and kept.tip in walked.stopped:  # the kept tip is an ancestor
        found = Presence(kept.presence.commits + walked.commits,
                         tuple(sorted(kept.presence.unsigned_records + walked.paths)),
                         kept.presence.unsigned_commits + walked.unsigned)
        seen = kept.seen | walked.seen
    else:  # none kept, or the ledger was rewritten: what was kept counts for nothing
        walked = _walk(repo, tip, boundary, frozenset()) if kept is not None else walked
        found = Presence(walked.commits, tuple(sorted(walked.paths)), walked.unsigned,
                         walked.cut)
        seen = walked.seen
    if cache is not None and not boundary:
        _keep(cache, tip, found, seen)
    return found


class _Walked(NamedTuple):
    commits: int
    unsigned: int
    paths: tuple[str, ...]
    cut: bool
    seen: frozenset[bytes]  # the commits walked
    stopped: frozenset[bytes]  # the known commits the walk reached and did not go past


def _walk(repo: GitRepo, tip: bytes, boundary: frozenset[str], known: frozenset[bytes]
          ) -> _Walked:
    commits, unsigned, cut = 0, 0, False
    paths: list[str] = []
    todo, seen, stopped = [tip], set(), set()
    while todo:
        sha = todo.pop()
        if sha in seen:
            continue
        if sha in known:
            stopped.add(sha)
            continue
        seen.add(sha)
        commit: Commit = repo.object_store[oid(sha)]  # type: ignore[assignment]
        commits += 1
        at_cut = sha.decode() in boundary and bool(commit.parents)  # a root hides nothing
        cut = cut or at_cut
        if not commit.gpgsig:
            unsigned += 1
            if not at_cut:
                paths.extend(p for p, _ in added_files(repo.object_store, commit))
        if not at_cut:
            todo.extend(commit.parents)
    return _Walked(commits, unsigned, tuple(paths), cut, frozenset(seen), frozenset(stopped))


class _Kept(NamedTuple):
    tip: bytes
    presence: Presence
    seen: frozenset[bytes]


def _load(cache: Path) -> _Kept | None:
    """What ``_keep`` wrote; None when there is none, or it is damaged (a full walk then)."""
    try:
        data = json.loads(cache.read_bytes())
        hexes, records = data["seen"], data["records"]
        if not isinstance(hexes, str) or not isinstance(records, list) or \
                not all(isinstance(p, str) for p in records):
            return None
        seen = frozenset(hexes[i:i + 40].encode() for i in range(0, len(hexes), 40))
        found = Presence(int(data["commits"]), tuple(records), int(data["unsigned"]))
        tip = str(data["tip"]).encode()
    except (OSError, ValueError, KeyError, TypeError, AttributeError, OverflowError):
        return None
    if len(seen) != found.commits or tip not in seen or \
            not 0 <= found.unsigned_commits <= found.commits:
        return None
    return _Kept(tip, found, seen)


def _keep(cache: Path, tip: bytes, found: Presence, seen: frozenset[bytes]) -> None:
    """Written whole, by rename: a reader finds the old count or the new, never half."""
    data = {"tip": tip.decode(), "commits": found.commits, "unsigned": found.unsigned_commits,
            "records": list(found.unsigned_records),
            "seen": b"".join(sorted(seen)).decode()}
    tmp = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
        os.replace(tmp, cache)
    except OSError:  # a read-only git dir still counts, only each time afresh
        try:
            tmp.unlink()
        except OSError:  # not there, or not removable either (a read-only mount)
            pass
