"""Throw ready balls (L5): one isolated worktree per ball on its own branch and one throw
record per ball. A ball with no dependencies is thrown from the spine's tip; a ball whose
dependencies passed, from its stack base: the slice's base with each dependency's passed
candidate merged in (``worktrees.stack``), named in its throw record.

Worktrees are created first and the throw records are written after, in one ledger commit;
if anything fails on the way, the worktrees this call created are removed again, so a
throw either happened (worktree and record) or did not (neither).
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from leapgit import git
from leapgit.errors import Hold, LeapError, RuleViolation, UsageError, combine, printable
from leapgit.ledger import history, layout, query
from leapgit.ledger.history import latest_red
from leapgit.ledger.store import Ledger, LedgerView
from leapgit.ledger.workspace import Workspace
from leapgit.records import trailers as tr
from leapgit.records import yamlio
from leapgit.records.cache import RecordCache
from leapgit.records.config import load_config
from leapgit.records.types import BallRecord, Receipt, SliceRecord, StackEntry, ThrowRecord
from leapgit.rules.balls import contract_red
from leapgit.rules.episodes import Episode, score_hint, starts_afresh, unscored_claim
from leapgit.rules.readiness import BallStanding, assess
from leapgit.timeutil import now_iso
from leapgit.worktrees import place, stack
from leapgit.worktrees.carry import carries_on, carry_on
from leapgit.worktrees.prune import (
    Leftover,
    check_droppable,
    drop_refused,
    half_made,
    half_made_work,
    leftover,
    safe_tips,
)
from leapgit.worktrees.stack import stack_base


@dataclass(frozen=True)
class Thrown:
    record: ThrowRecord
    ball: BallRecord
    created: bool  # a new worktree (False: the episode resumed in the existing one)
    continues_at: int | None = None  # --run carries an in-flight episode on at this round
    put_back: str | None = None  # the branch was gone: made again at this recorded commit
    remade: bool = False  # its worktree was half-made by a killed add: made again

    def repairs(self) -> list[str]:
        """What a resume did about a ball's place it found broken (L8): a branch removed by
        hand, a worktree a kill left half-made."""
        out = []
        if self.put_back is not None:
            out.append(f"the branch {self.record.branch} was gone: put back at the last "
                       f"commit the ledger recorded on it, {self.put_back[:12]}")
        if self.remade:
            out.append(f"its worktree {self.record.worktree} was half-made (a `git worktree "
                       "add` killed midway) and held no work: made again")
        return out


@dataclass(frozen=True)
class Skipped:
    ball: str
    error: LeapError


@dataclass(frozen=True)
class ThrowResult:
    slice: str
    base: str
    thrown: tuple[Thrown, ...]
    skipped: tuple[Skipped, ...]
    ledger_commit: str  # "" when nothing was thrown (every ball carried on)


@dataclass(frozen=True)
class _Plan:
    standing: BallStanding
    episode: int
    base: str
    resumed_from: int | None
    fresh: bool  # a new branch from the base (False: continue the existing ball branch)
    stack: tuple[StackEntry, ...] = ()  # L5: the passed dependencies the base holds


def spine_tip(ws: Workspace) -> str:
    return stack.spine_tip(ws.paths.root, ws.config.spine)


def _decide(s: BallStanding, slice_id: str, base: str, resume: bool,
            scope_changed: bool = False, score: str | None = None,
            remote: str | None = None, tracked: str | None = None) -> _Plan:
    """What a throw of this ball means now, or the error that says why not. ``score``: the
    hint to run `leap score`, when the ball's last round claims a pass that waits for it.
    ``remote``: the one a throw with `--remote` publishes to, which its hints name too;
    ``tracked``: the remote the spine tracks, the workers' where none was typed."""
    ep = s.episode
    if s.verdict == "ready":
        return _Plan(s, 1, base, None, True)
    if s.verdict == "blocked":
        raise RuleViolation(f"{slice_id}/{s.ball} is {s.why()}", rule="L5",
                            hint=f"repair {s.by} (`leap ball respec {slice_id} {s.by} FILE`) "
                                 "and throw it again")
    if s.verdict == "held" and s.restack:
        assert ep is not None  # L5, L8: a fresh episode on the passes that stand now
        return _Plan(s, ep.throw.episode + 1, base, ep.throw.episode, True)
    if s.verdict in ("held", "waiting") and s.reopened is not None:
        raise Hold(f"{slice_id}/{s.ball} is {s.why()}", rule="L5",
                   hint=f"its work stands on that candidate: score {s.by} again once its "
                   f"branch holds it (`leap score {slice_id} {s.by}`)")
    if s.verdict in ("held", "waiting"):
        raise Hold(f"{slice_id}/{s.ball} is {s.why()}", rule="L5")
    assert ep is not None
    number = ep.throw.episode
    if s.own == "in-flight":
        go_on = (f"it is published to workers: `leap worker --remote "
                 f"{shlex.quote(remote or tracked or 'REMOTE')} --slice {slice_id}` on any "
                 "clone continues it") if ep.throw.published else \
            (f"continue it with `leap throw {slice_id} --ball {s.ball} --run`, or close its "
             f"round (`leap round {slice_id} {s.ball} --outcome N --evidence TEXT`)")
        raise RuleViolation(f"{slice_id}/{s.ball} is {s.why()}; re-throwing a ball in flight "
                            "is refused", rule="L3", hint=score or go_on)
    if s.own == "pass":
        raise RuleViolation(f"{slice_id}/{s.ball} already passed (1)", rule="L8")
    respecced = s.spec_version > ep.throw.spec_version
    if s.own == "hold" and starts_afresh(False, respecced, scope_changed):
        # L3, L9: on the old branch the last episode's legit edits to files the new scope
        # dropped would read as a breach; the new scope starts afresh from the current base
        # (the checkpoint record keeps what was tried).
        return _Plan(s, number + 1, base, number, True)
    if s.own == "hold" and (resume or respecced):
        # L6: a fresh episode from the checkpoint, with a new round budget; never round five.
        return _Plan(s, number + 1, ep.throw.base, number, False, ep.throw.stack)
    if s.own == "hold":
        how = "with a checkpoint" if ep.checkpoint is not None else "(its last round scored 0)"
        raise Hold(f"{slice_id}/{s.ball} ended episode {number} at 0 {how}",
                   rule="L6", hint=f"`leap throw {slice_id} --ball {s.ball} --resume"
                   f"{_to(remote)}` starts a new episode from it")
    if starts_afresh(True, respecced, scope_changed):
        # L3: the refused ball was repaired as a new spec version; it starts over from the
        # current base on a fresh branch (its refused branch is dropped).
        return _Plan(s, number + 1, base, number, True)
    raise RuleViolation(f"{slice_id}/{s.ball} was refused (-1) in episode {number}",
                        rule="L3", hint=f"repair the spec (`leap ball respec {slice_id} "
                        f"{s.ball} FILE`), then throw it")


def _tracked(ws: Workspace) -> str | None:
    """The remote the spine tracks, by a name this clone knows (a hunt: a published ball's
    hint named `--remote REMOTE` where the spine tracks origin)."""
    name = git.branch_remote(ws.paths.root, ws.config.spine)
    return name if name in git.remotes(ws.paths.root) else None


def _to(remote: str | None) -> str:
    """The `--remote R` of a command a published throw's hint names, as it was typed."""
    return f" --remote {shlex.quote(remote)}" if remote else ""


def _scope_changed(view: LedgerView, slice_id: str, s: BallStanding) -> bool:
    """Did a respec since the ball's last throw change which files it may touch?"""
    if s.episode is None or s.spec_version <= s.episode.throw.spec_version:
        return False
    thrown = query.load_ball_version(view, slice_id, s.ball, s.episode.throw.spec_version)
    return set(thrown.paths) != set(query.load_ball(view, slice_id, s.ball).paths)


def _stacked(ws: Workspace, view: LedgerView, rec: SliceRecord, plan: _Plan) -> _Plan:
    """L5: a fresh branch of a dependent ball starts from its stack base, which holds its
    dependencies' passed candidates (a resumed episode keeps its throw's base)."""
    if not plan.fresh or not plan.standing.depends_on:
        return plan

    found = stack_base(ws.paths.root, view, rec,
                       query.load_ball(view, rec.slice, plan.standing.ball))
    return replace(plan, base=found.commit, stack=found.stack)


class RedBehind(Hold):
    """T7.1: the ball's red stands on a base the throw no longer starts from (the spine
    moved since: another slice landed), and the ball was never thrown: the red is written
    again where the throw starts (`leap run` asks its test author; by hand, `leap red`)."""

    def __init__(self, slice_id: str, ball_id: str, red: int, on: str, tip: str) -> None:
        super().__init__(f"{slice_id}/{ball_id}'s red {red} stands on {on[:12]}, and the "
                         f"base its throw starts from is {tip[:12]} now (the spine moved, or "
                         "its dependencies passed again): a branch started there would not "
                         "hold its red test", rule="T7.1",
                         hint=f"write the red again where the throw starts (`leap ball base "
                              f"{slice_id} {ball_id}` names it), then `leap red {slice_id} "
                              f"{ball_id} COMMIT`")
        self.ball = ball_id


def _on_its_red(ws: Workspace, view: LedgerView, slice_id: str, plan: _Plan
                ) -> _Plan | RedBehind:
    """T7.1: a fresh branch starts at the ball's red, so it starts where its red stands. A
    red its base moved past (the spine's tip, or a stack whose dependencies passed again)
    is written again before the ball's first throw; after it (`leap red` refuses a ball
    thrown before), a ball without dependencies starts on the red's own base (the merge
    lands its candidate onto the spine as it stands then), a stacked one is restacked."""
    ball = plan.standing.ball
    if not plan.fresh:
        return plan
    red = contract_red(history.reds(view, slice_id, ball))
    if red is None or git.rev_parse(f"{red.commit}^{{commit}}", ws.paths.root) is None or \
            git.is_ancestor(ws.paths.root, plan.base, red.commit):
        return plan  # (a red commit not here is no sign the spine moved)
    if not query.episodes(view, slice_id, ball):  # never thrown: its red is written again
        return RedBehind(slice_id, ball, red.red, red.base, plan.base)
    if plan.standing.depends_on:
        return plan  # thrown before on a stack: a restack carries its red (``_red_carried``)
    return replace(plan, base=red.base)  # thrown before: the red stands (`leap red` refuses)


class RedToCarry(Hold):
    """L5, T7.1: a restack starts the ball on a fresh stack, and its red is not carried
    there yet: a branch started there would not hold its red test."""

    def __init__(self, slice_id: str, ball_id: str, red: int, on: str, base: str) -> None:
        super().__init__(f"{slice_id}/{ball_id} is restacked on {base[:12]}, and its red "
                         f"{red} stands on its old stack {on[:12]}", rule="T7.1",
                         hint=f"`leap red {slice_id} {ball_id} --carry` carries it there, then "
                              f"`leap throw {slice_id} --ball {ball_id}`")
        self.ball = ball_id


def _red_carried(ws: Workspace, view: LedgerView, slice_id: str, plan: _Plan
                 ) -> _Plan | RedToCarry:
    """T7.1 over a restack: the fresh branch starts at the red carried onto its stack."""
    if not plan.standing.restack:
        return plan
    red = contract_red(history.reds(view, slice_id, plan.standing.ball))
    if red is not None and red.base == plan.base:
        return plan
    assert red is not None  # thrown before: it has a red
    return RedToCarry(slice_id, plan.standing.ball, red.red, red.base, plan.base)


def _on_its_base(ws: Workspace, view: LedgerView, slice_id: str, plan: _Plan
                 ) -> _Plan | RedBehind | RedToCarry:
    """T7.1: where the ball's fresh branch starts holds its red (``_on_its_red``,
    ``_red_carried``), or the hold that says how it will."""
    found = _on_its_red(ws, view, slice_id, plan)
    return found if isinstance(found, RedBehind) else _red_carried(ws, view, slice_id, found)


def _no_red(slice_id: str, ball_id: str) -> RuleViolation:
    """T7.1: a ball thrown without its failing contract test can never pass (`leap score`
    holds for the missing red), so it is not thrown."""
    return RuleViolation(f"{slice_id}/{ball_id} has no red: a ball thrown without its failing "
                         "contract test can never pass", rule="T7.1",
                         hint="commit the failing test on top of the ball's base and record "
                         f"it: `leap red {slice_id} {ball_id} COMMIT`")


def _worst(errors: list[LeapError]) -> LeapError:
    """A refusal outranks a hold; bad input outranks both; one error is itself."""
    if len(errors) == 1:
        return errors[0]
    problems = [p for e in errors for p in e.problems]
    if all(isinstance(e, Hold) for e in errors):
        return Hold(problems=problems)
    if all(isinstance(e, (Hold, RuleViolation)) for e in errors):
        return RuleViolation(problems=problems)
    return combine(errors) or LeapError(problems=problems)


def throw(ws: Workspace, slice_id: str, balls: Sequence[str] = (),
          resume: bool = False, run: bool = False, publish: bool = False,
          remote: str | None = None) -> ThrowResult:
    """``run``: the builders are driven next, so a ball in flight carries on (``carry``).
    ``publish`` (issue 16): the balls go to workers on the shared remote (``remote``, which
    the hints name): each gets its branch and a throw record that says so, and no worktree
    here (``loop.publish`` pushes them)."""
    with place.placing(ws), ws.ledger() as ledger:  # decided and recorded alone (L5, L8)
        view = ledger.require()
        rec = query.load_slice(view, slice_id)
        query.require_not_abandoned(view, slice_id, "its balls are thrown no more")
        unknown = [b for b in balls if b not in rec.balls]
        if unknown:
            raise UsageError(f"slice {slice_id!r} has no ball {unknown[0]!r} "
                             f"(balls: {', '.join(rec.balls)})")
        standing = assess(view, rec, ws.config.round_cap)
        base = spine_tip(ws)  # L5: where a fresh ball without dependencies starts (_on_its_red)
        plans: list[_Plan] = []
        carried: list[Thrown] = []
        skipped: list[Skipped] = []
        tracked = _tracked(ws)
        for ball in balls or rec.balls:
            s = standing[ball]
            claim = None if s.episode is None else unscored_claim(view, s.episode)
            score = None if claim is None or s.episode is None else _score_hint(
                ws, s.episode, claim)
            # L5, L8: a ball whose stacked dependency was reopened holds; it never carries on
            if s.reopened is None and not publish and carries_on(s, run, score):
                try:  # L3, L6: the episode goes on at its next round; nothing is thrown
                    carried.append(_carried(ws, view, s))
                except LeapError as exc:
                    skipped.append(Skipped(ball, exc))
                continue
            try:
                plans.append(_stacked(ws, view, rec, _decide(
                    s, slice_id, base, resume, _scope_changed(view, slice_id, s), score,
                    remote, tracked)))
            except LeapError as exc:
                skipped.append(Skipped(ball, exc))
        unred = [p for p in plans if latest_red(view, slice_id, p.standing.ball) is None]
        plans = [p for p in plans if p not in unred]  # T7.1: red first
        skipped += [Skipped(p.standing.ball, _no_red(slice_id, p.standing.ball)) for p in unred]
        placed = [_on_its_base(ws, view, slice_id, p) for p in plans]
        skipped += [Skipped(p.ball, p) for p in placed if isinstance(p, (RedBehind, RedToCarry))]
        plans = [p for p in placed if isinstance(p, _Plan)]
        if balls and skipped:
            raise _worst([s.error for s in skipped])
        if not plans and not carried:
            raise Hold(f"nothing to throw in slice {slice_id}", rule="L5",
                       problems=[p for s in skipped for p in s.error.problems])
        thrown, commit = _place_and_record(ws, ledger, rec.slice, plans, publish, remote) \
            if plans else ([], "")
    _warm_hook_cache(ws, slice_id, thrown)
    order = {b: i for i, b in enumerate(rec.balls)}
    every = sorted(carried + thrown, key=lambda t: order[t.record.ball])
    return ThrowResult(slice_id, base, tuple(every), tuple(skipped), commit)


def _score_hint(ws: Workspace, ep: Episode, claim: Receipt) -> str:
    """`leap score` grades the claim, once the ball branch is back where the claim left it
    (a commit past it is an unrecorded round: L6)."""
    t = ep.throw
    tip = git.rev_parse(f"refs/heads/{t.branch}", ws.paths.root)
    return score_hint(ep, claim, ep.spent(ws.config.round_cap), tip,
                      str(place.worktree_of(ws, t)))


def _carried(ws: Workspace, view: LedgerView, s: BallStanding) -> Thrown:
    assert s.episode is not None
    t = carry_on(ws, s)
    ball = query.load_ball_version(view, t.slice, t.ball, t.spec_version)
    return Thrown(t, ball, False, continues_at=len(s.episode.receipts) + 1)


def _warm_hook_cache(ws: Workspace, slice_id: str, thrown: list[Thrown]) -> None:
    """Parse and validate, once, what the post-commit hook reads on every round (the ball's
    records, the ledger's root, the worktree's config), so its first round is as quick as
    the next. Only a cache: a failure here costs the hook a parse, never the throw."""
    for t in thrown:  # a config the hook cannot read stops every round there: say so now
        if not t.record.worktree:
            continue
        try:
            load_config(Path(t.record.worktree), RecordCache(ws.paths.common_dir, "config"))
        except LeapError as exc:
            _warn(f"the config of {t.record.ball}'s worktree "
                  f"({Path(t.record.worktree) / '.leap' / 'config.yaml'}, from base "
                  f"{t.record.base[:12]}) does not validate: {exc.lines()[0]}; the hook "
                  "records no round there until it validates")
        except Exception as exc:  # noqa: BLE001 -- only a cache: the throw is recorded
            _warn(f"could not read ahead {t.record.ball}'s config ({type(exc).__name__}: "
                  f"{exc}); the hook will read it itself")
    try:
        with Ledger(ws.paths.common_dir, ws.config.ledger_ref, cache_records=True) as ledger:
            view = ledger.require()
            for t in thrown:
                for path in view.walk(layout.ball_dir(slice_id, t.record.ball)):
                    view.check(path)
    except Exception as exc:  # noqa: BLE001 -- only a cache: the throw is recorded and stands
        reason = exc.lines()[0] if isinstance(exc, LeapError) else f"{type(exc).__name__}: {exc}"
        _warn(f"could not read ahead the ledger records the post-commit hook reads ({reason}); "
              "the hook will read them itself")


def _warn(line: str) -> None:
    """A warning after the throw is recorded: best effort (a closed stderr costs nothing)."""
    try:
        sys.stderr.write(f"leap throw: warning: {line}\n")
    except (OSError, ValueError, AttributeError):
        pass


def _place_and_record(
    ws: Workspace, ledger: Ledger, slice_id: str, plans: list[_Plan], publish: bool = False,
    remote: str | None = None,
) -> tuple[list[Thrown], str]:
    view = ledger.require()
    if publish:
        return _publish_and_record(ws, ledger, slice_id, plans, remote)
    _check_all(ws, view, slice_id, plans)  # all or nothing: before any worktree or branch moves
    created: list[tuple[Path, tuple[str, str] | None]] = []
    thrown: list[Thrown] = []
    at = now_iso()
    try:
        for plan in plans:
            ball = query.load_ball(view, slice_id, plan.standing.ball)
            path, made, placed, remade = _worktree_for(ws, slice_id, ball.ball, plan, view)
            if made:
                # a resumed episode's branch holds the candidate so far: never ours to drop,
                # unless this throw made it (at its start, or put back where the ledger
                # last left it): then dropped only while it is still there
                created.append((path, None if placed is None else
                                (ws.config.ball_branch(slice_id, ball.ball), placed)))
            put_back = None if plan.fresh else placed
            record = _record(ws, slice_id, ball, plan, at, str(path))
            thrown.append(Thrown(record, ball, made, put_back=put_back, remade=remade))
        commit = _record_throws(ledger, slice_id, thrown, "")
    except BaseException:
        for path, branch_at in reversed(created):  # nothing half-written: undo our own
            try:
                place.remove(ws, path, branch_at, force=True)
            except LeapError:  # what is left is a killed throw's leftover: the next
                pass  # throw makes it again, `leap worktree prune` removes it
        raise
    return thrown, commit


def _record(ws: Workspace, slice_id: str, ball: BallRecord, plan: _Plan, at: str,
            worktree: str | None) -> ThrowRecord:
    """The throw record of ``plan``; no worktree: published to workers (issue 16)."""
    return ThrowRecord(
        slice=slice_id, ball=ball.ball, episode=plan.episode, spec_version=ball.spec_version,
        base=plan.base, branch=ws.config.ball_branch(slice_id, ball.ball), thrown_at=at,
        worktree=worktree, wave=plan.standing.wave, resumed_from=plan.resumed_from,
        stack=plan.stack, published=worktree is None,
    )


def _record_throws(ledger: Ledger, slice_id: str, thrown: list[Thrown], how: str) -> str:
    """Every throw record of one throw in one ledger commit (L5); its id."""
    files = {layout.throw_path(slice_id, t.record.ball, t.record.episode):
             yamlio.dumps(t.record.to_dict()) for t in thrown}
    names = ", ".join(t.record.ball for t in thrown)
    trailers = [(tr.SLICE, slice_id)] + [(tr.BALL, t.record.ball) for t in thrown]
    return ledger.append(files, f"throw {slice_id}{how}: {names}", trailers).commit


def _publish_and_record(ws: Workspace, ledger: Ledger, slice_id: str, plans: list[_Plan],
                        remote: str | None = None) -> tuple[list[Thrown], str]:
    """Issue 16: each ball's branch at its start point and a published throw record, no
    worktree: a worker on any machine claims and builds it. A fresh branch replaces a
    refused episode's (its rounds stay recorded); a resumed one goes on from its tip."""
    view = ledger.require()
    at = now_iso()
    moved: list[tuple[str, str | None]] = []
    thrown: list[Thrown] = []
    try:
        for plan in plans:
            ball = query.load_ball(view, slice_id, plan.standing.ball)
            branch = ws.config.ball_branch(slice_id, ball.ball)
            before = git.rev_parse(f"refs/heads/{branch}", ws.paths.root)
            if plan.fresh:
                start = start_point(view, ws.paths.root, slice_id, ball.ball, plan.base)
                git.run(["update-ref", f"refs/heads/{branch}", start], ws.paths.root)
                moved.append((branch, before))
            elif before is None:
                # the throw fetched the remote's ball branches (``remote.take_home``)
                where = shlex.quote(remote) if remote else "REMOTE"
                raise UsageError(f"branch {branch} is not here to resume from, nor on "
                                 f"{where}", hint="fetch it from the clone that built it "
                                 f"(`git fetch CLONE {branch}:{branch}`, CLONE its path or "
                                 f"URL), then `leap throw {slice_id} --ball {ball.ball} "
                                 f"--resume{_to(remote)}`")
            thrown.append(Thrown(_record(ws, slice_id, ball, plan, at, None), ball, False))
        commit = _record_throws(ledger, slice_id, thrown, " to workers")
    except BaseException:
        for branch, before in reversed(moved):  # nothing half-written: branches go back
            if before is None:
                git.run(["update-ref", "-d", f"refs/heads/{branch}"], ws.paths.root,
                        check=False)
            else:
                git.run(["update-ref", f"refs/heads/{branch}", before], ws.paths.root,
                        check=False)
        raise
    return thrown, commit


def _check_all(ws: Workspace, view: LedgerView, slice_id: str, plans: list[_Plan]) -> None:
    """Every check a placement makes, for every ball of the throw, before any worktree or
    branch of any ball is removed or made (L5): a refused throw changes none."""
    place.check_root(ws)
    errors: list[LeapError] = []
    for plan in plans:
        ball = plan.standing.ball
        path, branch = place.target(ws, slice_id, ball), ws.config.ball_branch(slice_id, ball)
        try:
            place.check_placement(ws, path)
            mine = place.registered(ws, path) is not None
            if plan.fresh and plan.resumed_from is not None:
                check_droppable(ws, slice_id, ball, path)
            elif plan.fresh and (mine or place.branch_exists(ws, branch)) \
                    and _killed_throw(ws, view, slice_id, ball, plan, path, branch) is None:
                raise UsageError(f"branch {branch} or worktree {path} already exists",
                                 hint="`leap worktree prune` removes finished balls' "
                                      "worktrees and what a killed throw left")
            if not mine and path.exists() and any(path.iterdir()):
                raise UsageError(f"{path} already exists and is not a worktree of this ball",
                                 hint="move it away")
        except LeapError as exc:
            errors.append(exc)
    if errors:
        raise combine(errors) or errors[0]


def _require_no_work(path: Path, slice_id: str, ball: str) -> None:
    """L8, nothing lost: a half-made worktree holding files its commit does not (someone's)
    is not made again over them."""
    work = half_made_work(path)
    if work:
        shown = ", ".join(printable(p) for p in work[:5]) + (" ..." if len(work) > 5 else "")
        raise UsageError(f"the worktree {path} of {slice_id}/{ball} is half-made (a `git "
                         f"worktree add` killed midway) and holds files its commit does not: "
                         f"{shown}", hint="move them out of it, then `leap throw "
                         f"{slice_id} --ball {ball} --resume` makes it again")


def _worktree_for(ws: Workspace, slice_id: str, ball: str, plan: _Plan,
                  view: LedgerView) -> tuple[Path, bool, str | None, bool]:
    """The ball's worktree; whether it was made now; the commit a branch this made was
    placed at (a fresh one's start, or a resumed one's, gone, put back where the ledger
    last left it; None: the branch was there); whether a half-made worktree was remade."""
    path = place.target(ws, slice_id, ball)
    branch = ws.config.ball_branch(slice_id, ball)
    if not plan.fresh:
        remade = place.registered(ws, path) is not None and half_made(ws, path)
        if remade:  # a kill inside its `git worktree add`: made again, unless it holds work
            _require_no_work(path, slice_id, ball)
            place.remove(ws, path, None, force=True, locked=True)  # branch stays
        if place.registered(ws, path) is not None:
            return path, False, None, False  # resume in the ball's own worktree, as it is
        if place.branch_exists(ws, branch):
            place.add(ws, path, branch, plan.base, new_branch=False)
            return path, True, None, remade
        # removed by hand: made again where the ledger last left it (L8, nothing lost)
        episode = plan.standing.episode
        tip = None if episode is None else \
            place.recorded_tip_here(view, ws.paths.root, episode)
        if tip is None:
            raise UsageError(f"the branch {branch} of {slice_id}/{ball} is gone, and commits "
                             "the ledger recorded on it are not in this clone",
                             hint="fetch the branch "
                             f"from where it was built, then `leap throw {slice_id} --ball "
                             f"{ball} --resume`")
        place.add(ws, path, branch, tip, new_branch=True)
        return path, True, tip, False
    if plan.resumed_from is not None:
        drop_refused(ws, slice_id, ball, path, branch)
    killed = _killed_throw(ws, view, slice_id, ball, plan, path, branch)
    if killed is not None:  # no work there: made again (a commit meanwhile keeps it)
        place.remove(ws, path, killed.branch_at, force=killed.half_made,
                     locked=killed.half_made)
    if place.branch_exists(ws, branch) or place.registered(ws, path) is not None:
        raise UsageError(f"branch {branch} or worktree {path} already exists",
                         hint="`leap worktree prune` removes finished balls' worktrees "
                              "and what a killed throw left")
    # T7.1: a ball with a recorded red starts from it: the builder finds the failing test
    start = start_point(view, ws.paths.root, slice_id, ball, plan.base)
    place.add(ws, path, branch, start, new_branch=True)
    return path, True, start, False


def _killed_throw(ws: Workspace, view: LedgerView, slice_id: str, ball: str, plan: _Plan,
                  path: Path, branch: str) -> Leftover | None:
    """L8 (nothing lost, nothing stuck): the branch and worktree a throw made before it was
    killed, ahead of its record, of a ball in its first episode: when it holds no work (the
    judgment `leap worktree prune` makes, ``prune.leftover``), the throw makes it again;
    anything else (None) is refused as before."""
    if not plan.fresh or plan.resumed_from is not None or plan.episode != 1:
        return None
    safe = safe_tips(view, ws, slice_id, ball, query.load_slice(view, slice_id).base)
    found = leftover(ws, slice_id, ball, safe)
    ours = found.present and found.foreign is None and not found.work and \
        (found.path, found.branch) == (path, branch)
    return found if ours else None


def start_point(view: LedgerView, root: Path, slice_id: str, ball_id: str, base: str) -> str:
    """Where a fresh ball branch starts: its red commit when one descends from ``base``, so
    the builder finds the failing test in its worktree; else ``base``."""
    red = latest_red(view, slice_id, ball_id)
    if red is not None and git.is_ancestor(root, base, red.commit):
        return red.commit
    return base
