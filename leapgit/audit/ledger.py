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


Change = tuple[str, str, str]  # (status, path, new blob id)


def _commits(root: Path, ref: str) -> list[tuple[str, list[str], str, list[Change]]]:
    """(commit, parents, message, [(status, path, new blob id)]) oldest first."""
    # the user's config must not change what git prints: the root commit's diff, and paths
    # as they are (core.quotePath would quote a non-ASCII path)
    out = git.run(["-c", "log.showRoot=true", "-c", "core.quotePath=false", "log", "--root",
                   "--reverse", "--no-renames", "--raw", "--no-abbrev",
                   "--format=%x01%H %P%n%B%x02", ref], root).stdout.decode("utf-8", "replace")
    found = []
    for chunk in out.split("\x01")[1:]:
        head, _, rest = chunk.partition("\n")
        body, _, raw = rest.partition("\x02")
        ids = head.split()
        changes = []
        for line in raw.splitlines():
            if line.startswith(":"):
                meta, _, path = line.partition("\t")
                fields = meta.split()
                changes.append((fields[-1], path, fields[3]))
        found.append((ids[0], ids[1:], body, changes))
    return found


@dataclass
class LedgerHistory:
    """The ledger's history as git diffed it, read once: what each commit added (path,
    blob id), for the signature audit (``ledger.added.known``) and the record reads, and
    the commit before each (the ledger as a record found it, ``adder``)."""

    added: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    parent: dict[str, str | None] = field(default_factory=dict)
    _adder: dict[str, str] = field(default_factory=dict)

    def adder(self, path: str) -> str | None:
        """The commit that added ``path`` (the first, should a rewrite have added it twice)."""
        if not self._adder:
            for sha, files in reversed(self.added.items()):
                self._adder.update((p, sha) for p, _ in files)
        return self._adder.get(path)


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
    for sha, parents, body, changes in commits:
        found.parent[sha] = parents[0] if parents else None
        report.count("ledger-append-only")
        report.count("ledger-written-by-leapgit")
        if len(parents) > 1:
            report.add(Violation("ledger-append-only", "ledger", "a merge commit: the ledger "
                                 "stays linear", sha))
        added = set()
        if len(parents) <= 1:  # git shows a merge no diff; the signature audit diffs it
            # what tree_changes calls an add: a new path, or one whose type changed (T)
            added_by[sha] = [(path, blob) for status, path, blob in changes
                             if status in ("A", "T")]
        for status, path, _ in changes:
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
