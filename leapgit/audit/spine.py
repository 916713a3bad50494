"""The spine against the ledger (L8, L9), judged by the rules the server ran: every slice
pass record by ``rules.passes.merge_problems`` (passed balls, that exact candidate, that
score, a complete slice) with the ledger as its push left it, and every merge it names by
``rules.spine.check_integration`` (one passed ball, its candidate's history, scope and
bytes) with the ledger as it stood where the merge landed. Besides, what only the audit
sees both sides of: each merge commit is the one the record names (parents, trailers), is
still on the spine, and had a passed aggregate review of its tree; every commit on the
spine's first-parent line since the oldest slice base is one of those merges; at most one
integrator lease is open. The commits come from the graph git listed once."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from leapgit.audit.model import AuditReport, Violation
from leapgit.errors import LeapError
from leapgit.ledger import layout
from leapgit.ledger.leases import lease_problems
from leapgit.records.scoring import Merged, MergeRecord
from leapgit.rules import aggregate, passes
from leapgit.rules.context import RefUpdate
from leapgit.rules.spine import check_integration

if TYPE_CHECKING:
    from leapgit.audit.context import AuditContext
    from leapgit.rules.refusal import Refusal


def unreadable(exc: LeapError) -> str:
    """A record the checks could not read, as a violation's message."""
    return f"unreadable record: {exc.lines()[0]}"


def check_merges(ctx: AuditContext, merges: list[MergeRecord], report: AuditReport) -> None:
    """Each slice pass record by the rule the server judged it by when it was pushed
    (``rules.passes.merge_problems``, with the ledger as that push left it), and each merge
    it names by the server's integration rule (``rules.spine.check_integration``, with the
    ledger as it stood before the record: where the merges landed)."""
    ctx.graph.load([m.commit for r in merges for m in r.merges] + [r.tip for r in merges])
    ctx.store.prefetch_diffs(_diffed(ctx, merges))
    # every commit of the graph (each merge, its candidate's history and base are among
    # them) and the trees the rule looks paths up in, in one stream: a miss costs a pack
    # lookup each
    ctx.store.prefetch(itertools.chain(ctx.graph.nodes, _folders(ctx.store.diffs)))
    on_spine = ctx.graph.reachable(report.spine_tip)
    for rec in merges:
        where = layout.merge_path(rec.slice, rec.number)
        report.count("merge-record")
        added = ctx.history.adder(where)
        before = ctx.history.parent.get(added) if added else report.ledger_tip
        try:
            problems = passes.merge_problems(ctx.view_at(added or report.ledger_tip), rec)
        except LeapError as exc:  # a record no writer of leapgit's would write
            problems = [unreadable(exc)]
        for why in problems:
            report.add(Violation("merge-record", rec.slice, why, path=where))
        for m in rec.merges:
            try:
                _check_merge(ctx, rec, m, before, report)
            except LeapError as exc:
                report.add(Violation("merge-record", f"{rec.slice}/{m.ball}",
                                     unreadable(exc), m.commit, where))
        if ctx.graph.node(rec.tip) is not None and rec.tip not in on_spine:
            spine_tip = report.spine_tip
            report.add(Violation("merge-record", rec.slice, f"merged as {rec.tip[:12]}, "
                                 f"which is not on the spine {rec.spine!r} (now "
                                 f"{(spine_tip or 'missing')[:12]}): rewound or rewritten",
                                 rec.tip, where))
        summary = aggregate.summary(ctx.view_at(report.ledger_tip), rec.aggregate_run,
                                    rec.slice)
        tip = ctx.graph.node(rec.tip)
        if summary is None or summary.outcome != "pass" or \
                (tip is not None and summary.tree != tip.tree):
            report.add(Violation("merge-record", rec.slice, f"the aggregate review "
                                 f"{rec.aggregate_run} is missing, did not pass, or graded "
                                 "another tree", rec.tip, where))


def _diffed(ctx: AuditContext, merges: list[MergeRecord]) -> Iterator[tuple[str, str]]:
    """The tree pairs the integration rule diffs, as far as the graph tells them up front:
    each commit against its first parent (a merge's first parent, each commit of a
    candidate's history), and each slice base against the candidates merged on it."""
    nodes = ctx.graph.nodes
    for node in nodes.values():
        parent = nodes.get(node.parents[0]) if node.parents else None
        if parent is not None:
            yield parent.tree, node.tree
    for rec in merges:
        base = nodes.get(rec.base)
        if base is not None:
            yield from ((base.tree, m.candidate) for m in rec.merges)


def _folders(diffs: Mapping[tuple[bytes, bytes], frozenset[str]]) -> Iterator[str]:
    """Each tree of a diffed pair, and its folders on the way to every path it changed
    (``<tree>:<folder>``, names `git cat-file` reads)."""
    for (old, new), paths in diffs.items():
        folders = {path.rsplit("/", 1)[0] for path in paths if "/" in path and "\n" not in path}
        for tree in (old.decode(), new.decode()):
            yield tree
            for folder in folders:
                parts = folder.split("/")
                yield from (f"{tree}:{'/'.join(parts[:i])}" for i in range(1, len(parts) + 1))


def _check_merge(ctx: AuditContext, rec: MergeRecord, m: Merged, ledger: str | None,
                 report: AuditReport) -> None:
    subject, where = f"{rec.slice}/{m.ball}", layout.merge_path(rec.slice, rec.number)
    node = ctx.graph.node(m.commit)
    if node is None:
        report.add(Violation("merge-record", subject, "the merge commit is not in this "
                             "repository", m.commit, where))
        return
    if len(node.parents) != 2 or node.parents[1] != m.candidate_commit or \
            node.trailers.get("Leap-Candidate") != m.candidate or \
            node.trailers.get("Leap-Ball") != m.ball:
        report.add(Violation("merge-record", subject, "the merge commit does not merge the "
                             "passed candidate with its trailers", m.commit, where))
        return
    first = node.parents[0]
    push = ctx.push(RefUpdate(ctx.spine_ref, first, m.commit),
                    {ctx.config.ledger_ref: ledger, ctx.spine_ref: first})
    for refusal in check_integration(push, ctx.spine_ref, push.objects.commit(m.commit)):
        report.add(Violation("merge-record", subject, _said(refusal), m.commit,
                             refusal.path or where))


def _said(refusal: Refusal) -> str:
    """A rule's refusal as a violation message: its own rule id when it is not the check's
    (L8), and the path it names."""
    rule = "" if refusal.rule == "L8" else f"[{refusal.rule}] "
    return rule + (f"{refusal.path}: " if refusal.path else "") + refusal.message


def check_spine(ctx: AuditContext, bases: list[str], merges: list[MergeRecord],
                report: AuditReport) -> None:
    tip = report.spine_tip
    if tip is not None and bases:
        line = ctx.graph.first_parents(tip)
        index = {sha: i for i, sha in enumerate(line)}
        on_line = [index[b] for b in bases if b in index]
        oldest = max(on_line) if on_line else len(line)
        traced = {m.commit for r in merges for m in r.merges}
        for sha in line[:oldest]:
            report.count("spine-traced")
            if sha in traced:
                continue
            node = ctx.graph.node(sha)
            named = node.ball if node is not None else None
            why = (f"an integration merge of {named} that no slice pass record names"
                   if named else "not an integration merge of a passed ball")
            report.add(Violation("spine-traced", ctx.spine_ref, why, sha))
    report.count("one-integrator")
    for path, what in lease_problems(ctx.view_at(report.ledger_tip), ctx.config.spine):
        report.add(Violation("one-integrator", ctx.config.spine, what, path=path))
