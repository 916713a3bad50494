"""Every pass and every merge, re-derived from the ledger's records and the spine's commits
(one read of each: the records are parsed once, object lookups go through one
`git cat-file --batch-check`, the commit graph is git's one listing, ``audit.graph``), so
the audit stays linear in the ledger's size. The pass rule is ``rules.passes``: the audit
asks the same function as readiness and pre-receive."""

from __future__ import annotations

from typing import TYPE_CHECKING

from leapgit.audit.graph import batch_check
from leapgit.audit.model import AuditReport, BallAudit, SliceAudit, Violation
from leapgit.audit.rounds import round_problems
from leapgit.audit.spine import check_merges, check_spine, unreadable
from leapgit.errors import LeapError
from leapgit.ledger import history, layout, query
from leapgit.records.scoring import MergeRecord, RedRecord, ReopenRecord, ScoreRecord
from leapgit.records.types import SliceRecord
from leapgit.rules.context import RefUpdate
from leapgit.rules.cuts import check_cut
from leapgit.rules.landing import failed_hint, landing
from leapgit.rules.passes import pass_problems, standing
from leapgit.scoring.reopen import Watched, spine_hits

if TYPE_CHECKING:
    from leapgit.audit.context import AuditContext


def _slice_state(balls: list[BallAudit], merged: bool, landed: set[str] | None = None,
                 abandoned: bool = False) -> str:
    """Derived from every ball of slice.yaml: a slice whose merges left a ball out never
    landed whole (L8), whatever its merge records say. An abandon record ends a slice that
    never merged (L3)."""
    if abandoned and not merged:
        return "abandoned"
    states = {b.state for b in balls}
    if merged and landed is not None and any(b.ball not in landed for b in balls):
        return "open"
    if merged:  # every ball's standing pass on the spine, or a reopen to re-merge
        return "merged" if states == {"merged"} else "reopened"
    return "complete" if states <= {"passed"} else "open"


def _state(scores: list[ScoreRecord], reopens: list[ReopenRecord], merged: bool,
           built: bool, newest: int = 0) -> str:
    """``newest``: the ball's newest episode; a pass of an earlier one was superseded by a
    restack (``rules.passes.standing_pass``)."""
    if not scores:
        return "built" if built else "cut"
    last = scores[-1]
    if last.outcome == 1 and last.episode < newest:
        return "built"  # L5: thrown again on a fresh stack, its new episode not passed yet
    if last.outcome == 1:  # L8: the one rule of a standing pass
        return "reopened" if standing(scores, reopens) is None else \
            ("merged" if merged else "passed")
    return {-1: "refused", 0: "held"}[last.outcome]


class SliceAuditor:
    def __init__(self, ctx: AuditContext, report: AuditReport):
        self.ctx, self.report = ctx, report
        self.root, self.config = ctx.root, ctx.config
        self.view = ctx.view_at(report.ledger_tip)
        self.trees: list[tuple[ScoreRecord, str]] = []  # (pass, its commit)
        self.reds: list[tuple[ScoreRecord, RedRecord]] = []  # a pass, each red it must keep
        self.merges: list[MergeRecord] = []
        self.bases: list[str] = []
        self.found: list[tuple[str, list[BallAudit], bool]] = []  # slice, balls, merged
        self.landed: dict[str, set[str]] = {}  # slice -> every ball any merge record names
        self.watched: list[Watched] = []  # merged balls whose bytes the spine must keep
        # pass, its red commit, its findings' red commits (T7.6: red tests, no rounds)
        self.rounds: list[tuple[ScoreRecord, str, frozenset[str]]] = []
        self.abandoned: set[str] = set()  # slices an abandon record ended
        self.unproved: set[str] = set()  # landed slices that fail their live proof (T9, L8)

    def run(self) -> None:
        for slice_id in query.slice_ids(self.view):
            try:
                self._slice(slice_id)
            except LeapError as exc:
                self.report.add(Violation("pass-provenance", slice_id, unreadable(exc)))
        self._reopens()
        for slice_id, balls, merged in self.found:
            state = _slice_state(balls, merged, self.landed.get(slice_id),
                                 slice_id in self.abandoned)
            if slice_id in self.unproved:  # T9: landed, then failed live: not done (L8)
                state = "reopened" if state == "merged" else state
                self.report.notes.append(f"slice {slice_id}: reopened: the landed slice "
                                         f"fails its live proof; {failed_hint(slice_id)}")
            self.report.slices.append(SliceAudit(slice_id, state, tuple(balls)))
        self._candidates()
        self._red()
        self._rounds()
        self._merges()
        self._spine()

    def _slice(self, slice_id: str) -> None:
        self._cut(slice_id)
        rec = query.load_slice(self.view, slice_id)
        if query.abandoned(self.view, slice_id) is not None:
            self.abandoned.add(slice_id)
        self.bases.append(rec.base)
        records = history.merge_records(self.view, slice_id)
        self.merges.extend(records)
        landed = history.merged_scores(records)
        if records:
            self.landed[slice_id] = set(landed)
            self._whole(rec, records)
        balls = []
        for ball in rec.balls:
            scores = history.scores(self.view, slice_id, ball)
            reopens = history.reopens(self.view, slice_id, ball)
            for s in scores:
                if s.outcome == 1:
                    self._pass(s)
            last = scores[-1] if scores else None
            episodes = query.episodes(self.view, slice_id, ball)
            merged = last is not None and last.score in landed.get(ball, ())
            state = _state(scores, reopens, merged, bool(episodes), max(episodes, default=0))
            if state == "merged" and last is not None:
                self.watched.append(Watched(last, records[-1].tip))
            balls.append(BallAudit(ball, state, last.score if last else None,
                                   last.candidate if last else None))
        self.found.append((slice_id, balls, bool(records)))
        if records:
            self._landing(rec)

    def _cut(self, slice_id: str) -> None:
        """L1: the cut as the server judges it (``rules.cuts``), with the ledger as the
        commit that added the slice record left it."""
        path = layout.slice_path(slice_id)
        added = self.ctx.history.adder(path)
        if added is None:
            return
        self.report.count("slice-cut")
        view = self.ctx.view_at(added)
        rec = view.record(path, SliceRecord)
        if rec is None:
            return
        ledger = self.config.ledger_ref
        push = self.ctx.push(RefUpdate(ledger, self.ctx.history.parent.get(added), added),
                             {ledger: added})
        for r in check_cut(push, ledger, added, path, rec, view):
            self.report.add(Violation("slice-cut", slice_id, r.message + (
                f" [{r.rule}]" if r.rule != "L1" else ""), added, r.path or path))

    def _landing(self, rec: SliceRecord) -> None:
        """T9, L8: a landed slice whose last live proof failed is reopened. Read after the
        balls, so a live record the audit cannot read is named and cuts nothing short."""
        try:
            proved = landing(self.view, rec)
        except LeapError as exc:
            self.report.add(Violation("pass-provenance", rec.slice, unreadable(exc)))
            return
        if proved is not None and proved.failed:
            self.unproved.add(rec.slice)

    def _whole(self, rec: SliceRecord, records: list[MergeRecord]) -> None:
        """L8: the merges, over every slice pass record, land every ball of the slice, each
        after the balls it depends on."""
        where = layout.merge_path(rec.slice, records[-1].number)
        order = [m.ball for r in records for m in r.merges]
        first = {b: i for i, b in reversed(list(enumerate(order)))}
        left = [b for b in rec.balls if b not in first]
        if left:
            self.report.add(Violation("merge-record", rec.slice, "the slice pass records never "
                                      f"merge {', '.join(left)}: a slice passes only when "
                                      "every ball landed", path=where))
        for ball in first:
            try:
                deps = query.load_ball(self.view, rec.slice, ball).depends_on
            except LeapError:
                continue  # named by the merge-record check
            late = [d for d in deps if first.get(d, len(order)) > first[ball]]
            if late:
                self.report.add(Violation("merge-record", f"{rec.slice}/{ball}", "merged "
                                          f"before its dependencies {', '.join(late)}: "
                                          "merges land in dependency order", path=where))

    def _reopens(self) -> None:
        """L8: a spine commit outside an integration that changes a merged ball's files
        reopens it; one the ledger does not record yet is named (`leap merge` records it)."""
        self.report.count("reopen-recorded", len(self.watched))
        hits = spine_hits(self.root, self.config.spine, self.watched)
        reopened = {(h.passed.slice, h.passed.ball) for h in hits}
        for h in hits:
            p = h.passed
            self.report.add(Violation("reopen-recorded", f"{p.slice}/{p.ball}", f"{h.reason()}"
                                      f": the ball is reopened, and the ledger does not record "
                                      f"it yet (`leap merge {p.slice}` records it)", h.commit,
                                      ", ".join(h.paths)))
        for slice_id, balls, _ in self.found:
            for i, b in enumerate(balls):
                if (slice_id, b.ball) in reopened:
                    balls[i] = BallAudit(b.ball, "reopened", b.score, b.candidate)

    def _pass(self, s: ScoreRecord) -> None:
        self.report.count("pass-provenance")
        subject = f"{s.slice}/{s.ball} score {s.score}"
        path = layout.score_path(s.slice, s.ball, s.score)
        for why in pass_problems(self.view, s):
            self.report.add(Violation("pass-provenance", subject, why, path=path))
        self.trees.append((s, s.commit))
        if s.provenance is not None and s.provenance.red is not None:
            reds = history.reds(self.view, s.slice, s.ball)
            red = next((r for r in reds if r.red == s.provenance.red), None)
            if red is None:
                self.report.add(Violation("red-unchanged", subject, f"names red "
                                          f"{s.provenance.red}, which the ledger lacks",
                                          path=path))
                return
            # T7.1: every red's frozen tests hold, not only the latest's (the set only grows);
            # T7.6: so do the tests of the episode's findings' reds
            findings = history.finding_reds(self.view, s.slice, s.ball, s.episode)
            self.reds += [(s, r) for r in reds if r.red <= red.red] + [(s, r) for r in findings]
            self.rounds.append((s, red.commit, frozenset(r.commit for r in findings)))

    def _candidates(self) -> None:
        graph = self.ctx.graph
        graph.load(c for _, c in self.trees)  # a pass not merged: its branch, or no ref
        for s, commit in self.trees:
            self.report.count("pass-candidate")
            node = graph.node(commit)
            tree = node.tree if node is not None else None
            if tree is None:
                self.report.notes.append(f"{s.slice}/{s.ball}: candidate commit "
                                         f"{commit[:12]} is not in this repository")
            elif tree != s.candidate:
                self.report.add(Violation("pass-candidate", f"{s.slice}/{s.ball} score "
                                          f"{s.score}", f"commit {commit[:12]} has tree "
                                          f"{tree[:12]}, the pass says {s.candidate[:12]}",
                                          commit))

    def _red(self) -> None:
        """T7.1: each red's frozen tests at the candidate, by the one check every judge asks
        (``RedRecord.frozen_changes``), with the blobs read in one process."""
        names = [n for s, r in self.reds for n in (f"{s.commit}^{{tree}}", *(
            f"{s.commit}:{t.path}" for t in r.tests))]
        found = batch_check(self.root, names)
        for s, red in self.reds:
            self.report.count("red-unchanged", len(red.tests))
            if found.get(f"{s.commit}^{{tree}}") is None:
                continue  # the candidate is not here: noted by the candidate check
            held = {t.path: t.blob for t in red.tests}
            at = {t.path: found.get(f"{s.commit}:{t.path}") for t in red.tests}
            for path in red.frozen_changes(at.__getitem__):
                now = at[path] or "absent"
                self.report.add(Violation("red-unchanged", f"{s.slice}/{s.ball} score "
                                          f"{s.score}", f"{path} is {now[:12]} at the "
                                          f"candidate, {held[path][:12]} at red "
                                          f"{red.commit[:12]}", s.commit, path))

    def _rounds(self) -> None:
        """L6: the scored commit is the last receipt's, and its commits since the base (the
        red test aside) are no more rounds than the limit, counted against its receipts."""
        for s, red, findings in self.rounds:
            self.report.count("no-fifth-round")
            subject, path = f"{s.slice}/{s.ball} score {s.score}", \
                layout.score_path(s.slice, s.ball, s.score)
            try:
                found = round_problems(self.ctx.graph, self.view, self.config, s, red,
                                       findings)
            except LeapError as exc:  # a receipt no writer of leapgit's would write
                found = [(s.commit, f"its rounds cannot be counted: {unreadable(exc)}")]
            for commit, why in found:
                self.report.add(Violation("no-fifth-round", subject, why, commit, path))

    def _merges(self) -> None:
        check_merges(self.ctx, self.merges, self.report)

    def _spine(self) -> None:
        check_spine(self.ctx, self.bases, self.merges, self.report)
