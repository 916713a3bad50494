"""The spine against the ledger (L8, L9): every slice pass record names passed balls whose
merge commits exist with the right parents and trailers and a passed aggregate review; every
commit on the spine's first-parent line since the oldest slice base is one of those merges;
at most one integrator lease is open; every merged slice is still on the spine."""

from __future__ import annotations

from pathlib import Path

from leapgit import git
from leapgit.audit.model import AuditReport, Violation
from leapgit.ledger import history, layout
from leapgit.ledger.store import LedgerView
from leapgit.records.scoring import MergeRecord
from leapgit.records.tribunal_run import SummaryRecord
from leapgit.records.types import Config


def _commit_info(root: Path, shas: list[str]) -> dict[str, tuple[list[str], str, dict[str, str]]]:
    """sha -> (parents, tree, trailers) for the commits that exist, one `git log`."""
    have = list(dict.fromkeys(shas))
    if not have:
        return {}
    fmt = "%x01%H%x00%P%x00%T%x00%(trailers:only,unfold)"
    proc = git.run(["log", "--no-walk=unsorted", "--stdin", f"--format={fmt}"], root,
                   input="\n".join(have).encode() + b"\n", check=False)
    out: dict[str, tuple[list[str], str, dict[str, str]]] = {}
    for chunk in proc.stdout.decode("utf-8", "replace").split("\x01")[1:]:
        sha, parents, tree, trailers = (chunk.split("\x00") + ["", "", ""])[:4]
        pairs = dict(line.split(": ", 1) for line in trailers.splitlines() if ": " in line)
        out[sha] = (parents.split(), tree, pairs)
    return out


def _bytes_differ(root: Path, first: str, merge: str, candidate: str,
                  base: str | None) -> list[str]:
    """The paths the merge changed on the spine, and the paths the candidate changed since
    its ``base`` (the whole candidate arrives), whose bytes are not the candidate's (the
    server's integration check, re-derived: rules/spine.py check_integration)."""
    from leapgit.git import changed_files
    from leapgit.scoring.source import blobs

    brought = changed_files(root, base, candidate) if base else []
    touched = sorted(set(changed_files(root, first, merge)) | set(brought))
    merged, passed = blobs(root, merge, touched), blobs(root, candidate, touched)
    return [p for p in touched if merged[p] != passed[p]]


def _is_ancestor(root: Path, commit: str, tip: str) -> bool:
    return git.run(["merge-base", "--is-ancestor", commit, tip], root,
                   check=False).returncode == 0


def check_merges(root: Path, view: LedgerView, merges: list[MergeRecord],
                 report: AuditReport) -> None:
    info = _commit_info(root, [m.commit for r in merges for m in r.merges] +
                        [r.tip for r in merges])
    for rec in merges:
        where = layout.merge_path(rec.slice, rec.number)
        report.count("merge-record")
        for m in rec.merges:
            subject = f"{rec.slice}/{m.ball}"
            score = next((s for s in history.scores(view, rec.slice, m.ball)
                          if s.score == m.score), None)
            if score is None or score.outcome != 1 or score.candidate != m.candidate:
                report.add(Violation("merge-record", subject, f"merged as score {m.score}, "
                                     "which is no pass for that candidate", path=where))
            found = info.get(m.commit)
            if found is None:
                report.add(Violation("merge-record", subject, "the merge commit is not in "
                                     "this repository", m.commit, where))
                continue
            parents, _, trailers = found
            if len(parents) != 2 or parents[1] != m.candidate_commit or \
                    trailers.get("Leap-Candidate") != m.candidate or \
                    trailers.get("Leap-Ball") != m.ball:
                report.add(Violation("merge-record", subject, "the merge commit does not "
                                     "merge the passed candidate with its trailers",
                                     m.commit, where))
                continue
            base = score.base if score is not None else None
            for path in _bytes_differ(root, parents[0], m.commit, parents[1], base):
                report.add(Violation("merge-record", subject, f"the merge's bytes of {path} "
                                     "differ from the passed candidate's", m.commit, path))
        spine_tip = report.spine_tip
        if rec.tip in info and (spine_tip is None or
                                not _is_ancestor(root, rec.tip, spine_tip)):
            report.add(Violation("merge-record", rec.slice, f"merged as {rec.tip[:12]}, "
                                 f"which is not on the spine {rec.spine!r} (now "
                                 f"{(spine_tip or 'missing')[:12]}): rewound or rewritten",
                                 rec.tip, where))
        summary = view.record(f"tribunal/{rec.aggregate_run}/summary.yaml", SummaryRecord)
        tip = info.get(rec.tip)
        if summary is None or summary.outcome != "pass" or \
                (tip is not None and summary.tree != tip[1]):
            report.add(Violation("merge-record", rec.slice, f"the aggregate review "
                                 f"{rec.aggregate_run} is missing, did not pass, or graded "
                                 "another tree", rec.tip, where))


def check_spine(root: Path, view: LedgerView, config: Config, bases: list[str],
                merges: list[MergeRecord], report: AuditReport) -> None:
    from leapgit.ledger.leases import lease_problems

    ref = f"refs/heads/{config.spine}"
    tip = report.spine_tip
    if tip is not None and bases:
        line = git.run(["rev-list", "--first-parent", tip], root).stdout.decode().split()
        index = {sha: i for i, sha in enumerate(line)}
        on_line = [index[b] for b in bases if b in index]
        oldest = max(on_line) if on_line else len(line)
        traced = {m.commit for r in merges for m in r.merges}
        info = _commit_info(root, line[:oldest])
        for sha in line[:oldest]:
            report.count("spine-traced")
            if sha in traced:
                continue
            trailers = info.get(sha, ([], "", {}))[2]
            named = f"{trailers.get('Leap-Slice')}/{trailers.get('Leap-Ball')}" \
                if "Leap-Ball" in trailers else None
            why = (f"an integration merge of {named} that no slice pass record names"
                   if named else "not an integration merge of a passed ball")
            report.add(Violation("spine-traced", ref, why, sha))
    report.count("one-integrator")
    for path, what in lease_problems(view, config.spine):
        report.add(Violation("one-integrator", config.spine, what, path=path))
