"""`leap ball respec SLICE BALL FILE` (L3): a stuck ball, or one not thrown yet (T7.1: its
spec and red can be redone before any round), gets a repaired spec, recorded as a new spec
version, then can be thrown again. Its scope is stamped anew at the spine tip and may
not grow into another ball's files: the whole slice is re-checked with the cut's own L2/L4
check. Dependencies are fixed at the cut (changing them is a re-cut).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from leapgit import git
from leapgit.errors import InvalidRecord, LeapError, RuleViolation
from leapgit.gitobj import oid
from leapgit.ledger import layout, query
from leapgit.ledger.history import latest_red
from leapgit.ledger.repo import open_repo
from leapgit.ledger.store import Written
from leapgit.ledger.workspace import Workspace
from leapgit.records import schema, yamlio
from leapgit.records import trailers as tr
from leapgit.records.drafts import BallDraft, ScopeEntry, SliceDraft
from leapgit.records.types import BallRecord, StampedScope
from leapgit.rules.readiness import assess
from leapgit.slices.check import check_slice, tests_missing, tests_missing_too
from leapgit.slices.scope import TreeResolver
from leapgit.timeutil import now_iso
from leapgit.worktrees.throw import spine_tip


@dataclass(frozen=True)
class Respecced:
    record: BallRecord
    previous: int
    written: Written
    needs_red: bool = False  # never thrown and no red yet: `leap red` comes next (T7.1)
    remote: str | None = None  # its last throw was published to the workers of this remote


def _draft_of(rec: BallRecord) -> BallDraft:
    return BallDraft(
        id=rec.ball, goal=rec.goal, spec=rec.spec,
        scope=tuple(ScopeEntry(s.path, s.symbols, s.lines) for s in rec.scope),
        proof=rec.proof, rollback=rec.rollback, depends_on=rec.depends_on, metric=rec.metric,
        tests=rec.tests, live_proof=rec.live_proof,
    )


def load_repair(file: Path, ball_id: str) -> tuple[BallDraft, str | None, bool]:
    source = str(file)
    try:
        raw = yamlio.load_file(file)
    except InvalidRecord as exc:  # a spec that cannot be read is no well-formed ball (L1)
        raise InvalidRecord(problems=[
            p if p.rule else p._replace(rule="L1") for p in exc.problems]) from None
    if not isinstance(raw, dict):
        raise InvalidRecord("a repaired spec is a mapping of the ball's fields", file=source,
                            rule="L3")
    raw = dict(raw)
    reason = raw.pop("reason", None)
    if reason is not None and not isinstance(reason, str):
        raise InvalidRecord("must be text", file=source, field="reason", rule="L3")
    raw.setdefault("id", ball_id)
    if raw["id"] != ball_id:
        raise InvalidRecord(f"names ball {raw['id']!r}, not {ball_id!r}", file=source,
                            field="id", rule="L3")
    try:
        schema.validate(raw, "slice", source, rule="L1", definition="ball")
    except InvalidRecord as exc:
        raise InvalidRecord(problems=[*exc.problems, *(
            p for e in tests_missing_too(raw, exc, source, "tests") for p in e.problems)]
        ) from None
    draft = BallDraft.from_dict(raw)
    missing = tests_missing(draft, source, "tests")
    if missing is not None:
        raise missing
    return draft, reason, "depends_on" in raw


def _own_fields(exc: LeapError, index: int, source: str) -> LeapError:
    """Messages about the repaired ball name its own fields, not its place in the slice."""
    prefix = f"balls[{index}]."
    problems = [p._replace(field=p.field.removeprefix(prefix), file=source)
                if p.field and p.field.startswith(prefix) else p for p in exc.problems]
    return type(exc)(problems=problems)


def respec(ws: Workspace, slice_id: str, ball_id: str, file: Path,
           reason: str | None = None) -> Respecced:
    draft, file_reason, names_deps = load_repair(file, ball_id)
    with ws.ledger() as ledger:
        view = ledger.require()
        rec = query.load_slice(view, slice_id)
        if ball_id not in rec.balls:
            raise InvalidRecord(f"slice {slice_id!r} has no ball {ball_id!r}")
        standing = assess(view, rec, ws.config.round_cap)[ball_id]
        if not standing.repairable:  # L3: stuck, or never thrown (T7.1: no round yet)
            raise RuleViolation(
                f"{slice_id}/{ball_id} is {standing.verdict}; only a stuck ball (ended at 0: a "
                "checkpoint, or a last round its score held; or refused -1) or one not thrown "
                "yet gets a repaired spec", rule="L3")
        current = query.load_ball(view, slice_id, ball_id)
        if names_deps and draft.depends_on != current.depends_on:
            raise RuleViolation("dependencies are fixed when the slice is cut", file=str(file),
                                field="depends_on", rule="L4", hint="re-cut the slice instead")
        draft = replace(draft, depends_on=current.depends_on)
        others = [_draft_of(query.load_ball(view, slice_id, b)) for b in rec.balls
                  if b != ball_id]
        whole = SliceDraft(source=str(file), slice=slice_id, spine=rec.spine,
                           balls=(*others, draft))
        checked = _recheck(ws, whole, len(others), str(file))
        new = BallRecord(
            slice=slice_id, ball=ball_id, spec_version=current.spec_version + 1,
            goal=draft.goal, spec=draft.spec, scope=checked, proof=draft.proof,
            rollback=draft.rollback, depends_on=current.depends_on, metric=draft.metric,
            tests=draft.tests, live_proof=draft.live_proof,
            reason=reason or file_reason or "repaired spec (L3)", recorded_at=now_iso(),
        )
        path = layout.ball_path(slice_id, ball_id, new.spec_version)
        written = ledger.append(
            {path: yamlio.dumps(new.to_dict())},
            f"respec {slice_id}/{ball_id}: spec version {new.spec_version}",
            [(tr.SLICE, slice_id), (tr.BALL, ball_id),
             (tr.SPEC_VERSION, str(new.spec_version))],
        )

        episodes = query.episodes(view, slice_id, ball_id)
        needs_red = latest_red(view, slice_id, ball_id) is None and not episodes
        last = query.throw(view, slice_id, ball_id, episodes[-1]) if episodes else None
    # published to workers: built by them again, by `leap run --remote`, never by a throw
    # here (a walk-away hunt: the hint's `leap throw` made a local episode no worker saw)
    remote = (git.branch_remote(ws.paths.root, ws.config.spine) or "REMOTE") \
        if last is not None and last.published else None
    return Respecced(new, current.spec_version, written, needs_red, remote)


def _recheck(ws: Workspace, whole: SliceDraft, index: int,
             source: str) -> tuple[StampedScope, ...]:
    base = spine_tip(ws)
    with open_repo(str(ws.paths.common_dir)) as repo:
        tree = repo.object_store[oid(base)].tree
        try:
            checked = check_slice(whole, TreeResolver(repo, tree, None),  # L2, L4 again
                                  texts_of=index)  # L1: the repair's texts, not the others'
        except LeapError as exc:
            raise _own_fields(exc, index, source) from None
    return checked.scopes[whole.balls[index].id]

