"""The ledger's own history, audited from plain git (`git log --raw`, `git reflog`): one
pass over every commit, linear in the ledger's size. Records are added, never edited or
deleted (L8); each commit adds exactly the records its ``Leap-Record`` trailers name (a
commit that does not was written behind leapgit's back); the ref never left its history;
no receipt names a fifth round (L6)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from leapgit import git
from leapgit.audit.model import AuditReport, Violation
from leapgit.records import trailers

_RECEIPT = re.compile(r"/episodes/\d+/receipts/(\d+)\.yaml$")


Change = tuple[str, str, str, str]  # (status, path, new blob id, new mode)
_TREE = "040000"


def _commits(root: Path, ref: str
             ) -> list[tuple[str, list[str], str, list[Change], list[Change]]]:
    """(commit, parents, message, [file change], [folder change]) oldest first; a change is
    (status, path, new blob id, new mode). Folders come with ``-t``: a folder that is
    added, or removed, with no file in it changes nothing else git would show."""
    # the user's config must not change what git prints: the root commit's diff, and paths
    # as they are (core.quotePath would quote a non-ASCII path)
    out = git.run(["-c", "log.showRoot=true", "-c", "core.quotePath=false", "log", "--root",
                   "--reverse", "--no-renames", "--raw", "-t", "--no-abbrev",
                   "--format=%x01%H %P%n%B%x02", ref], root).stdout.decode("utf-8", "replace")
    found = []
    for chunk in out.split("\x01")[1:]:
        head, _, rest = chunk.partition("\n")
        body, _, raw = rest.partition("\x02")
        ids = head.split()
        files: list[Change] = []
        folders: list[Change] = []
        for line in raw.splitlines():
            if not line.startswith(":") or line.startswith(":040000 040000 "):
                continue  # a folder whose files changed: those files are listed
            meta, _, path = line.partition("\t")
            fields = meta.split()
            change = (fields[-1], path, fields[3], fields[1])
            (folders if _TREE in (fields[0][1:], fields[1]) else files).append(change)
        found.append((ids[0], ids[1:], body, files, folders))
    return found


@dataclass
class LedgerHistory:
    """The ledger's history as git diffed it, read once: what each commit added (path,
    blob id), for the signature audit (``ledger.added.known``) and the record reads, and
    the commit before each (the ledger as a record found it, ``adder``).

    When the history only ever added (one line from its root, every change an added file
    or folder, every path plain), the ledger at any of its commits is what the commits up
    to it added: ``entry`` and ``names`` answer a view's questions from that index, as a
    walk of the commit's trees would, without parsing a tree (each commit's top folders
    grow with the ledger: at 10,000 balls a view's walk parsed a folder of 1,000 slices).
    Otherwise ``additive`` is False, and views walk their trees."""

    added: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    parent: dict[str, str | None] = field(default_factory=dict)
    _adder: dict[str, str] = field(default_factory=dict)
    additive: bool = True
    position: dict[str, int] = field(default_factory=dict)  # commit -> its place, oldest 0
    _files: dict[str, tuple[int, bytes, int]] = field(default_factory=dict)  # mode, id, place
    _folders: dict[str, int] = field(default_factory=dict)  # folder -> the place it came
    _names: dict[str, list[tuple[str, int]]] = field(default_factory=dict)  # folder's names

    def adder(self, path: str) -> str | None:
        """The commit that added ``path`` (the first, should a rewrite have added it twice)."""
        if not self._adder:
            for sha, files in reversed(self.added.items()):
                self._adder.update((p, sha) for p, _ in files)
        return self._adder.get(path)

    def place(self, commit: str | None) -> int | None:
        """Where ``commit`` stands in an additive history; None: walk its trees."""
        return self.position.get(commit) if self.additive and commit else None

    def entry(self, path: str, place: int) -> tuple[int, bytes] | None:
        """(mode, id) of ``path`` in the ledger at ``place``, as its tree holds it (a folder's
        id is not kept: ``names`` lists it)."""
        found = self._files.get(path)
        if found is not None:
            return (found[0], found[1]) if found[2] <= place else None
        since = self._folders.get(path)
        return (_FOLDER_MODE, b"") if since is not None and since <= place else None

    def names(self, folder: str, place: int) -> list[str]:
        """The names directly under ``folder`` ("" for the top) at ``place``, sorted."""
        return [name for name, since in self._names.get(folder, ()) if since <= place]

    def _index(self, place: int, files: list[Change], folders: list[Change]) -> None:
        for status, path, _, _ in folders:
            if status != "A" or path in self._folders or not _plain(path):
                self.additive = False
                return
            self._folders[path] = place
            self._name(path, place)
        for status, path, blob, mode in files:
            if status != "A" or path in self._files or not _plain(path):
                self.additive = False
                return
            self._files[path] = (int(mode, 8), blob.encode(), place)
            self._name(path, place)

    def _name(self, path: str, place: int) -> None:
        folder, _, name = path.rpartition("/")
        self._names.setdefault(folder, []).append((name, place))

    def _sort(self) -> None:
        for names in self._names.values():
            names.sort()


_FOLDER_MODE = 0o040000


def _plain(path: str) -> bool:
    """A path git printed as it is: not quoted (a tab, a newline, a quote in it), and read
    as UTF-8 (a tree walk names it the same way)."""
    return not path.startswith('"') and "\ufffd" not in path and "//" not in path and \
        not path.startswith("/") and not path.endswith("/")


def audit_history(root: Path, ref: str, round_cap: int, report: AuditReport
                  ) -> LedgerHistory:
    tip = report.ledger_tip
    found = LedgerHistory()
    if tip is None:
        return found
    commits = _commits(root, ref)
    added_by = found.added
    report.commits = len(commits)
    edited: set[str] = set()
    before: str | None = None
    for place, (sha, parents, body, changes, folders) in enumerate(commits):
        found.parent[sha] = parents[0] if parents else None
        found.position[sha] = place
        if found.additive:
            if parents != ([before] if before else []):
                found.additive = False
            else:
                found._index(place, changes, folders)
        before = sha
        report.count("ledger-append-only")
        report.count("ledger-written-by-leapgit")
        if len(parents) > 1:
            report.add(Violation("ledger-append-only", "ledger", "a merge commit: the ledger "
                                 "stays linear", sha))
        added = set()
        if len(parents) <= 1:  # git shows a merge no diff; the signature audit diffs it
            # what tree_changes calls an add: a new path, or one whose type changed (T)
            added_by[sha] = [(path, blob) for status, path, blob, _ in changes
                             if status in ("A", "T")]
        for status, path, _, _ in changes:
            if status != "A":
                edited.add(path)
                what = "deletes" if status == "D" else "edits"
                report.add(Violation("ledger-append-only", path, f"the commit {what} an "
                                     "existing record: records are never edited", sha, path))
                continue
            added.add(path)
            report.records += 1
            _round(path, sha, round_cap, report)
        named = set(trailers.parse(body).all(trailers.RECORD))
        if added != named:
            extra = sorted(added - named) or sorted(named - added)
            report.add(Violation("ledger-written-by-leapgit", "ledger", "the commit's records "
                                 "do not match its Leap-Record trailers (written behind "
                                 f"leapgit's back): {', '.join(extra[:5])}", sha))
    found._sort()
    _reflog(root, ref, tip, edited, report)
    return found


def _round(path: str, sha: str, round_cap: int, report: AuditReport) -> None:
    found = _RECEIPT.search(path)
    if found is None:
        return
    report.count("no-fifth-round")
    if int(found.group(1)) > round_cap:  # L6
        report.add(Violation("no-fifth-round", path.split("/episodes/")[0],
                             f"round {found.group(1)}: no fifth round", sha, path))


def _reflog(root: Path, ref: str, tip: str, edited: set[str], report: AuditReport) -> None:
    """Every commit the ref ever pointed at that its history no longer holds (a `leap sync`
    replay rebuilds local commits on the remote's tip) must have every record it held still
    in the tip, byte for byte: otherwise the ledger was rewritten."""
    # issue 18 F7: not a line for a move that never happened (a writer killed mid-move)
    seen = list(dict.fromkeys(git.reflog_moves(root, ref, tip)))
    if not seen:
        return
    reachable = set(git.run(["rev-list", tip], root).stdout.decode().split())
    gone: list[tuple[str, list[tuple[str, str, str]]]] = []  # (commit, [(status, path, blob)])
    for sha in seen:
        report.count("ledger-history-kept")
        if sha in reachable:
            continue
        diff = git.run(["diff-tree", "-r", "--no-renames", "--diff-filter=MDT", "--raw",
                        "--no-abbrev", sha, tip], root, check=False)
        if diff.returncode != 0:
            continue  # the old commit was pruned: nothing left to compare
        lines = []
        for line in diff.stdout.decode("utf-8", "replace").splitlines():
            meta, _, path = line.partition("\t")
            fields = meta.split()
            lines.append((fields[-1], path, fields[2]))
        gone.append((sha, lines))
    excused = _lost_leases(root, tip, gone, report)
    for sha, lines in gone:
        for status, path, blob in lines:
            if path in edited or (path, blob) in excused:
                continue  # an edit inside the current history: named once, above
            what = "dropped" if status == "D" else "changed"
            report.add(Violation("ledger-history-kept", path, f"a record the ledger held at "
                                 f"{sha[:12]} was {what} by a rewrite of its history",
                                 sha, path))


def _lost_leases(root: Path, tip: str, gone: list[tuple[str, list[tuple[str, str, str]]]],
                 report: AuditReport) -> set[tuple[str, str]]:
    """Of the records commits the ledger ref left held (``gone``: path and blob), those of
    leases this clone took alone that lost their number to the remote's, which a sync
    leaves out (L9, ``leases.lost_leases``: the rule the sync asked), judged at each such
    commit; an earlier commit holding the same bytes (the lease before its release) is
    excused by the later judgment. Each is said as a note."""
    from leapgit.ledger import leases
    from leapgit.ledger.sync import lease_spine
    from leapgit.ledger.workspace import open_workspace

    if not any(lease_spine(path) for _, lines in gone for _, path, _ in lines):
        return set()
    found: set[tuple[str, str]] = set()
    with open_workspace(root).ledger() as ledger:
        there = ledger.view(tip)
        for sha, lines in gone:
            spines = {s for _, path, _ in lines if (s := lease_spine(path)) is not None}
            for spine in sorted(spines):
                lost, still = leases.lost_leases(ledger.view(sha), there, spine)
                if still is None:
                    found.update((path, blob) for _, path, blob in lines if path in lost)
    for path in sorted({path for path, _ in found}):
        report.notes.append(f"{path}: a lease taken here alone that lost its number to the "
                            "remote's, left out by a sync (L9)")
    return found
