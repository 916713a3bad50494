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
from leapgit.audit.index import LedgerIndex, hidden
from leapgit.audit.model import AuditReport, Violation
from leapgit.audit.rawlog import Commit, commit_bodies, raw_log
from leapgit.ledger import leases
from leapgit.ledger.sync import lease_spine
from leapgit.ledger.workspace import open_workspace
from leapgit.records import trailers

_RECEIPT = re.compile(r"/episodes/\d+/receipts/(\d+)\.yaml$")


def _commits(root: Path, ref: str) -> list[Commit]:
    """Every commit of ``ref``, oldest first, with its changes (``rawlog.raw_log``) and its
    message read from the commit object itself (so no message can pass for a diff line or
    a next commit)."""
    found = raw_log(root, [ref], reverse=True, what=f"`git log` of {ref}")
    messages = _messages(root, [c.sha for c in found])
    return [c._replace(message=messages.get(c.sha, "")) for c in found]


def _messages(root: Path, commits: list[str]) -> dict[str, str]:
    """Each commit's message, read from its object (what follows the first blank line)."""
    return {sha: body.partition(b"\n\n")[2].decode("utf-8", "replace")
            for sha, body in commit_bodies(root, commits).items()}


@dataclass
class LedgerHistory:
    """The ledger's history as git diffed it, read once: what each commit added (path,
    blob id), for the signature audit (``ledger.added.known``) and the record reads, the
    commit before each (the ledger as a record found it, ``adder``), and the ledger at any
    of its commits as an index of what they added (``audit.index``)."""

    added: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    parent: dict[str, str | None] = field(default_factory=dict)
    index: LedgerIndex = field(default_factory=LedgerIndex)
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
    with git.as_is():  # the commits' own parents, never a graft's
        commits = _commits(root, ref)
    added_by = found.added
    report.commits = len(commits)
    edited: set[str] = set()
    index, before = found.index, None
    trees: dict[str, str] = {}  # commit -> its tree: what its first parent held, for a diff
    for place, commit in enumerate(commits):
        sha, parents, changes = commit.sha, commit.parents, commit.changes
        found.parent[sha] = parents[0] if parents else None
        trees[sha] = commit.tree
        if parents != ([before.sha] if before else []):
            index.additive = False  # not one line: a view walks its trees
        # git shows a merge no diff (named as a merge below), each other commit its diff
        # against its parent
        unseen = [] if len(parents) > 1 else \
            hidden(changes, commit.tree, trees.get(parents[0]) if parents else None)
        if index.additive:  # each folder it changed holds exactly what git's diff shows
            unseen += [f for f in index.add(sha, place, changes, commit.tree) if f not in unseen]
        for folder in unseen:
            index.additive = False
            report.add(Violation("ledger-append-only", folder or "ledger", "the commit "
                                 f"changes {folder or 'the top folder'} beyond what git's diff "
                                 "shows: a mode, an order or a name no leapgit writer writes, "
                                 "rewritten behind leapgit's back", sha, folder or None))
        before = commit
        changes = [c for c in changes if not c.folder]  # a record is a file
        report.count("ledger-append-only")
        report.count("ledger-written-by-leapgit")
        if len(parents) > 1:
            report.add(Violation("ledger-append-only", "ledger", "a merge commit: the ledger "
                                 "stays linear", sha))
        added = set()
        if len(parents) <= 1:  # git shows a merge no diff; the signature audit diffs it
            # what tree_changes calls an add: a new path, or one whose type changed (T)
            added_by[sha] = [(c.path, c.blob) for c in changes if c.status in ("A", "T")]
        for status, path, *_ in changes:
            if status != "A":
                edited.add(path)
                what = "deletes" if status == "D" else "edits"
                report.add(Violation("ledger-append-only", path, f"the commit {what} an "
                                     "existing record: records are never edited", sha, path))
                continue
            added.add(path)
            report.records += 1
            _round(path, sha, round_cap, report)
        named = set(trailers.parse(commit.message).all(trailers.RECORD))
        if added != named:
            extra = sorted(added - named) or sorted(named - added)
            report.add(Violation("ledger-written-by-leapgit", "ledger", "the commit's records "
                                 "do not match its Leap-Record trailers (written behind "
                                 f"leapgit's back): {', '.join(extra[:5])}", sha))
    if before is None or before.sha != tip:
        index.additive = False  # the log did not end at the tip the report judges
    index.seal()
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
