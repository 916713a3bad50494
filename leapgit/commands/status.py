"""`leap status [SLICE]`: each slice's balls in waves, with state and rounds used, each
thrown ball's last score and what its scorings spent on jurors, and any merged ball a spine
commit outside an integration reopened (L8) before a merge records it."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from leapgit import git
from leapgit.audit.presence import presence_cache, signature_presence
from leapgit.ledger import history, query
from leapgit.ledger.workspace import Workspace, open_workspace
from leapgit.records.types import INTEGRATOR, SliceRecord
from leapgit.rules.episodes import answers_findings, held_by_builder
from leapgit.rules.landing import Landing, landing
from leapgit.rules.readiness import BallStanding, assess
from leapgit.scoring import reopen
from leapgit.scoring.reopen import SpineHit

if TYPE_CHECKING:
    from leapgit.audit.presence import Presence
    from leapgit.ledger.view import LedgerView
    from leapgit.records.abandon import AbandonRecord
    from leapgit.records.usage import Usage


class BallScore(NamedTuple):
    """A thrown ball's last score (issue 14 item 11) and what every scoring of it spent on
    jurors, refused rounds too (issue 15 item 9)."""

    score: int
    outcome: int
    reason: str
    spent: Usage

    def to_json(self) -> dict[str, Any]:
        return {"score": self.score, "outcome": self.outcome, "reason": self.reason}


# NamedTuples, as records.types: a frozen dataclass compiles its methods as it is defined
# (~0.5 ms a class, paid on every `leap status`, issue 13 item 7)
class SliceStatus(NamedTuple):
    record: SliceRecord
    balls: tuple[query.BallState, ...]
    depends: dict[str, tuple[str, ...]]
    standing: dict[str, BallStanding]
    # L8: merged balls a spine commit outside an integration changed, not yet recorded
    reopens: dict[str, SpineHit]
    abandoned: AbandonRecord | None = None  # the slice was given up (L3, L4)
    scores: Mapping[str, BallScore] = {}  # thrown balls that were scored (never mutated)
    landing: Landing | None = None  # merged: its last merge and live proof
    # T9: balls held on an escalation: (why, what a person runs), as `leap run` says them
    escalated: Mapping[str, tuple[str, str]] = {}
    # L3: refused balls not respecced since: what leads on, as `leap run` says it
    refused: Mapping[str, str] = {}
    # T7.6: balls in flight whose last claim the tribunal refused on its findings: the next
    # round answers them (their tests first, where a test author is configured)
    answering: frozenset[str] = frozenset()
    # T7.1: ready balls whose red is not recorded yet (no ball is thrown before its red)
    redless: frozenset[str] = frozenset()
    author: bool = False  # a test author is configured (red.command): `leap run` asks it
    # L3: balls whose episode resumed one the builder ended at 0 (``held_by_builder``): a
    # hold now is the spec's to repair, as `leap run` says it (``loop.steps``)
    held_before: frozenset[str] = frozenset()
    # L9: the shared remote a slice with a ball published to workers is run with, as its
    # hints name it (`leap run S --remote R`); None while no ball of it is published
    remote: str | None = None

    @property
    def spent(self) -> Usage | None:
        """Every scored ball's spend, summed; None while no ball was scored."""
        if not self.scores:
            return None  # imports nothing: `leap status` of a cut slice is benchmarked
        from leapgit.records.usage import total

        return total(s.spent for s in self.scores.values())

    def to_json(self, round_limit: int) -> dict[str, Any]:
        spent = self.spent
        return {
            "slice": self.record.slice,
            "spine": self.record.spine,
            "base": self.record.base,
            "cut_at": self.record.cut_at,
            "abandoned": None if self.abandoned is None else {
                "reason": self.abandoned.reason, "at": self.abandoned.abandoned_at},
            "spent": None if spent is None else spent.to_dict(),
            "landing": None if self.landing is None else self.landing.to_json(),
            "remote": self.remote,  # L9: the shared remote its published balls run with
            "waves": [
                [self._ball_json(b, round_limit) for b in self.balls if b.wave == i]
                for i in range(len(self.record.waves))
            ],
        }

    def _ball_json(self, b: query.BallState, round_limit: int) -> dict[str, Any]:
        scored = self.scores.get(b.ball)
        return {
            "ball": b.ball, "state": b.state, "episode": b.episode,
            "rounds_used": b.rounds_used, "round_limit": round_limit,
            "depends_on": list(self.depends.get(b.ball, ())),
            "last_outcome": b.last.outcome if b.last else None,
            "last_score": scored.to_json() if scored else None,
            "spent": scored.spent.to_dict() if scored else None,
            **self._throw_json(b.ball), **self._reopen_json(b.ball),
        }

    def _reopen_json(self, ball: str) -> dict[str, Any]:
        hit = self.reopens.get(ball)
        if hit is None:
            return {}
        return {"reopened": {"commit": hit.commit, "paths": list(hit.paths),
                             "recorded": False}}

    def _throw_json(self, ball: str) -> dict[str, Any]:
        s = self.standing.get(ball)
        if s is None:
            return {}
        verdict = "abandoned" if self.abandoned is not None and s.verdict != "passed" \
            else s.verdict  # L3: thrown no more, whatever it waited for
        out: dict[str, Any] = {"readiness": verdict, "by": s.by}
        if ball in self.redless:
            out["red"] = None  # T7.1: thrown only once its red is recorded
        ep = s.episode
        if ep is not None:
            t = ep.throw
            out["throw"] = {"episode": t.episode, "base": t.base, "branch": t.branch,
                            "worktree": t.worktree, "spec_version": t.spec_version,
                            "resumed_from": t.resumed_from, "published": t.published,
                            "stack": [e.to_dict() for e in t.stack]}  # L5: its stacked base
            out["receipts"] = [{"round": r.round, "outcome": r.outcome, "claim": r.claim,
                                "evidence": r.evidence, "commit": r.commit, "log": r.log,
                                "worker": r.worker}  # a worker's log is on its machine
                               for r in ep.receipts]
            out["checkpoint"] = None if ep.checkpoint is None else {
                "rounds_used": ep.checkpoint.rounds_used,
                "last_evidence": ep.checkpoint.last_evidence, "commit": ep.checkpoint.commit}
        return out


class OpenLease(NamedTuple):
    """L9: the spine's integrator lease, open now; what gives it back, as its clone sees it."""

    spine: str
    number: int
    holder: str
    reason: str
    here: bool | None  # taken by a merge of this clone (True), of another (False), by hand
    waiting: str | None  # the slice whose stopped merge waits here (`leap merge` ends it)
    remote: str | None  # the remote the spine tracks: a release here is shared from there
    running: bool = False  # a merge of this clone runs now (its merge lock is held)

    def lines(self) -> list[str]:
        head = (f"integrator lease {self.number} on {self.spine!r} is open: taken by "
                f"{self.holder!r}" + (f" for a {self.reason}" if self.reason else ""))
        if self.here is False:  # whatever waits here, it waits for that lease first
            return [head, "  another clone's merge holds it and gives it back when it ends; "
                          f"if that clone is gone for good, {self._release('--force')}"]
        if self.waiting is not None:
            return [head, f"  a stopped merge waits here: `leap merge {self.waiting}` again "
                          "finishes it and gives the lease back"]
        if self.running:
            return [head, "  a merge of this clone runs now and gives it back when it ends"]
        return [head, "  while no merge runs in this clone (a merge killed outright left "
                      f"it), {self._release()}"]

    def _release(self, *force: str) -> str:
        holder = "" if self.holder == INTEGRATOR else f" --holder {shlex.quote(self.holder)}"
        share = f", then `leap sync {self.remote}` gives it back there" if self.remote else ""
        return f"`leap lease release{holder}{''.join(' ' + f for f in force)}` gives it " \
               f"back{share}"


class Status(NamedTuple):
    ledger_ref: str
    ledger_commit: str | None
    round_limit: int
    slices: tuple[SliceStatus, ...]
    signatures: Presence | None = None
    # every merge a reopen is looked for after is in this clone: the answer stands until a
    # ref moves (``status_cache`` keeps it); False: a fetch alone may change it
    keepable: bool = True
    lease: OpenLease | None = None  # L9: the spine's integrator lease, while it is open

    def to_json(self) -> dict[str, Any]:
        sig = self.signatures
        return {
            "ledger_ref": self.ledger_ref, "ledger_commit": self.ledger_commit,
            "slices": [s.to_json(self.round_limit) for s in self.slices],
            "lease": None if self.lease is None else {
                "spine": self.lease.spine, "number": self.lease.number,
                "holder": self.lease.holder, "reason": self.lease.reason,
                "taken_here": self.lease.here, "stopped_merge": self.lease.waiting,
                "merge_running": self.lease.running,
                "lines": self.lease.lines()},
            "signatures": None if sig is None else {
                "commits": sig.commits, "unsigned_commits": sig.unsigned_commits,
                "unsigned_records": list(sig.unsigned_records), "shallow": sig.shallow,
                "fetch_rest": sig.fetch},
        }


def status(slice_id: str | None = None, start: Path | str = ".",
           ws: Workspace | None = None) -> Status:
    """What `leap status` says (``status_cache.show`` prints it), of the workspace ``ws``,
    else of the one at ``start``."""
    # records parsed and validated once are read back from the record cache (the hook's):
    # a warm run loads no YAML parser and no schema validator (~30 ms of start-up)
    ws = ws or open_workspace(start)
    with ws.ledger(cache_records=True) as ledger:
        view = ledger.require()
        ids = [slice_id] if slice_id else query.slice_ids(view)
        out = []
        watched: list[reopen.Watched] = []
        for sid in ids:
            rec = query.load_slice(view, sid)
            balls = tuple(query.ball_state(view, rec, b) for b in rec.balls)
            depends = {b: query.load_ball(view, sid, b).depends_on for b in rec.balls}
            standing = assess(view, rec, ws.config.round_cap)
            out.append(SliceStatus(rec, balls, depends, standing, {},
                                   abandoned=query.abandoned(view, sid),
                                   scores=ball_scores(view, sid, balls),
                                   landing=landing(view, rec),
                                   escalated=_escalated(view, sid, standing),
                                   refused=_refused(view, sid, standing),
                                   answering=_answering(view, sid, standing),
                                   redless=frozenset(
                                       b for b, st in standing.items() if st.verdict == "ready"
                                       and history.latest_red(view, sid, b) is None),
                                   author=bool(ws.config.red_command),
                                   held_before=frozenset(
                                       b for b, st in standing.items()
                                       if st.episode is not None
                                       and held_by_builder(view, st.episode.throw)),
                                   remote=_shared_remote(ws, rec, standing)))
            watched.extend(reopen.watched(view, rec))
        # one look at the spine for every merged slice (no diff unless a commit there is
        # no integration merge): read-only, `leap merge` and `leap score` record the reopen
        for hit in reopen.spine_hits(ws.paths.root, ws.config.spine, watched):
            found = next(s for s in out if s.record.slice == hit.passed.slice)
            found.reopens[hit.passed.ball] = hit
        lease = _open_lease(ws, view)  # a stopped merge's files say what ends it: not kept

        signed = signature_presence(ws.paths.common_dir, ws.config.ledger_ref,
                                    git.shallow_commits(ws.paths.common_dir),
                                    presence_cache(ws.paths.common_dir))
        if signed.shallow:
            from leapgit.audit.shallow import unshallow

            signed = signed._replace(fetch=unshallow(ws.paths.root, [ws.config.ledger_ref]))
    return Status(ws.config.ledger_ref, view.commit, ws.config.round_cap, tuple(out), signed,
                  keepable=lease is None and reopen.all_here(ws.paths.root, watched),
                  lease=lease)


def _open_lease(ws: Workspace, view: LedgerView) -> OpenLease | None:
    """L9: the spine's lease while it is open, with what gives it back (a merge killed
    outright left it: this clone's status said "complete" and named nothing, while every
    other clone's merge waited on it)."""
    from leapgit.ledger import leases

    spine = ws.config.spine
    active = leases.active_lease(view, spine)
    if active is None or active.take is None:
        return None
    from leapgit.scoring.merge import merge_running, stopped_merge, taken_here

    reason = active.take.reason or ""
    waiting = stopped_merge(ws)
    tracked = git.branch_remote(ws.paths.root, spine)
    remote = shlex.quote(tracked) if tracked in git.remotes(ws.paths.root) else None
    return OpenLease(spine, active.number, active.holder, reason, taken_here(ws, reason),
                     waiting[1] if waiting else None, remote, merge_running(ws))


def _refused(view: LedgerView, slice_id: str, standing: dict[str, BallStanding]
              ) -> dict[str, str]:
    """L3: what leads on from each refused ball not respecced since, as `leap run` says it
    (a hunt: status named nothing for a refused ball)."""
    refused = [s for s in standing.values() if s.verdict == "refused" and s.episode is not
               None and s.spec_version <= s.episode.throw.spec_version]
    if not refused:
        return {}  # imports nothing: `leap status` of a cut slice is benchmarked
    from leapgit.loop.steps import refused_hint

    return {s.ball: refused_hint(view, slice_id, s) for s in refused}


def _answering(view: LedgerView, slice_id: str, standing: dict[str, BallStanding]
               ) -> frozenset[str]:
    """T7.6: in-flight balls whose last round's claim a score refused on the tribunal's
    findings (a hunt: status said `leap run` "scores its claimed pass", scored already)."""
    out = set()
    for s in standing.values():
        ep = s.episode
        if s.verdict != "in-flight" or ep is None or not ep.receipts:
            continue
        graded = history.graded_last(view, slice_id, s.ball, ep.throw.episode,
                                     len(ep.receipts))
        if graded is not None and answers_findings(graded):
            out.add(s.ball)
    return frozenset(out)


def _escalated(view: LedgerView, slice_id: str, standing: dict[str, BallStanding]
               ) -> dict[str, tuple[str, str]]:
    held = [s for s in standing.values() if s.verdict == "hold"]
    if not held:
        return {}  # imports nothing: `leap status` of a cut slice is benchmarked
    from leapgit.loop.steps import escalation

    found = {s.ball: escalation(view, slice_id, s) for s in held}
    return {ball: said for ball, said in found.items() if said is not None}


def ball_scores(view: LedgerView, slice_id: str, balls: tuple[query.BallState, ...]
                ) -> dict[str, BallScore]:
    """The last score and the spend of each thrown ball; a ball never thrown has no score,
    and its records are never read (`leap status` is benchmarked on a cut slice)."""
    out = {}
    for b in balls:
        if b.episode == 0 or not history.has(view, slice_id, b.ball, "scores"):
            continue
        found = history.scores(view, slice_id, b.ball)
        if not found:
            continue
        last = found[-1]
        spent = history.ball_spent(view, slice_id, b.ball)  # the one sum `leap run` caps
        out[b.ball] = BallScore(last.score, last.outcome, last.reason, spent)
    return out


def _shared_remote(ws: Workspace, rec: SliceRecord, standing: Mapping[str, BallStanding]
                   ) -> str | None:
    """L9: the remote a slice whose balls were published is run with; None when none was
    (a slice built here asks no remote, and `leap status` no git process for one)."""
    published = [b for b, st in standing.items()
                 if st.episode is not None and st.episode.throw.published]
    if not published:
        return None
    from leapgit.scoring.score import shared_remote

    return shared_remote(ws, rec.slice, published[0], ws.config.spine)

