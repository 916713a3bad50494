"""`leap merge SLICE` (L8, L9): the single write spine. Only a complete slice merges (every
ball passed, for exactly the candidate its branch holds); the integrator takes the lease
(a second is refused), predicts every merge in the object store and stops on a conflict,
builds one merge commit per ball in dependency order (trailers: slice, ball, candidate
tree, tribunal run, pass record), runs the balls' tests and the aggregate blind review on
the merged result, pushes the ledger (the lease and the passes) and then the spine to the
spine's remote, whose pre-receive judges the spine against the ledger it stores, never one
that exists only in the push (issue 18 F1), moves the local spine, writes the slice pass
record and releases the lease. Until the push, nothing lands: on any stop before it the
spine is untouched and the lease is given back (here and on the remote). A stop inside the
push (a Ctrl-C, a dropped connection) asks the remote what it holds: at the planned tip
the slice has landed, and the merge says so and keeps its planned record for `leap merge`
again. After the push the slice has landed and is recorded even when the checkout cannot
follow (a warning)."""

from __future__ import annotations

import os
import shlex
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock, Timeout

from leapgit import git
from leapgit.errors import Hold, LeapError, RuleViolation, UsageError
from leapgit.git import is_ancestor
from leapgit.ledger import history, layout, leases, query
from leapgit.ledger import sync as syncing
from leapgit.ledger.store import Ledger, LedgerView, Written
from leapgit.ledger.sync import fetch, lock_in_the_way
from leapgit.ledger.workspace import Workspace
from leapgit.records import trailers as tr
from leapgit.records import yamlio
from leapgit.records.scoring import Merged, MergeRecord, ReopenRecord, ScoreRecord, Step
from leapgit.records.tribunal_run import FindingRecord
from leapgit.records.types import INTEGRATOR, SliceRecord
from leapgit.rules import aggregate
from leapgit.rules.episodes import way_to_pass
from leapgit.rules.passes import current_pass
from leapgit.rules.spine import keep_aside, keep_branch
from leapgit.rules.stack import current_stale, restacking, stale_reason
from leapgit.scoring import reopen, spine
from leapgit.scoring.aggregate import Aggregate, AggregateRefused, review_merged
from leapgit.scoring.score import declared_builder, shared_remote
from leapgit.scoring.source import blobs
from leapgit.timeutil import now_iso
from leapgit.worktrees.stack import spine_tip
from leapgit.worktrees.upstream import (
    require_spine_pushable,
    spine_refusals,
    spine_reset_target,
)

Echo = Callable[[str], None]
TEMP_REF = "refs/leap/merging/{slice}"


@dataclass(frozen=True)
class Planned:
    ball: str
    passed: ScoreRecord
    commit: str  # the candidate commit (the ball branch tip)


@dataclass(frozen=True)
class MergeResult:
    record: MergeRecord
    reopened: tuple[ReopenRecord, ...]
    remote: str | None
    ledger_commit: str
    already: bool = False  # the slice was merged already: nothing landed, nothing to land
    # merged here only, the spine's remote lacking it: pushed now under a lease of its own
    published: Published | None = None


@dataclass(frozen=True)
class Published:
    lease: int
    old: str | None  # the remote's spine before (None: it had none)
    new: str
    released: bool  # given back on the remote too (else here only: `leap sync` carries it)


def order(rec: SliceRecord) -> list[str]:
    """Dependency order: wave by wave (L5 waves are topological levels)."""
    return [b for wave in rec.waves for b in wave] or list(rec.balls)


@dataclass(frozen=True)
class _Lost:
    """A passed ball whose branch and commit this clone lacks: what brings it back is asked
    of the remote (``_fetch_or_give_up``) only when the hold is said."""

    branch: str
    merged: bool  # the slice merged before: it cannot be abandoned


class Incomplete(Exception):
    """``plan``'s hold, before the ways that ask a remote are said."""

    def __init__(self, slice_id: str, missing: list[str], ways: dict[str | _Lost, None],
                 reopened: tuple[ReopenRecord, ...]) -> None:
        super().__init__(slice_id)
        self.slice, self.missing, self.ways, self.reopened = slice_id, missing, ways, reopened

    def hold(self, ws: Workspace, ask: bool) -> Hold:
        """L8: the hold to say; ``ask``: the remote is asked about each lost ball (a hold
        a later plan may take back is said without asking)."""
        ways = dict.fromkeys(
            way if isinstance(way, str) else
            _fetch_or_give_up(ws, self.slice, way.branch, way.merged) if ask else
            f"restore {way.branch}, then `leap merge {self.slice}`" for way in self.ways)
        reason = "; ".join(f"{r.ball} reopened: {r.reason}" for r in self.reopened)
        return Hold(f"slice {self.slice} is not complete, nothing lands: not passed: "
                    f"{', '.join(self.missing)}" + (f"; {reason}" if reason else ""),
                    rule="L8", hint="first " + "; ".join(ways))


def plan(ws: Workspace, ledger: Ledger, slice_id: str
         ) -> tuple[list[Planned], tuple[ReopenRecord, ...]]:
    """Every ball with its pass that is not on the spine yet, in dependency order: all of
    them the first time; after a reopen (L8), the balls re-passed since. ``Incomplete``
    naming what is missing: the slice passes only when every ball has passed."""
    rec = query.load_slice(ledger.require(), slice_id)
    reopened = tuple(reopen.scan(ledger, ws.paths.root, ws.config, rec))
    view = ledger.require()
    records = history.merge_records(view, slice_id)
    landed = history.merged_scores(records)
    planned, missing = [], []
    ways: dict[str | _Lost, None] = {}  # what brings each ball not passed on, in order, once
    for ball in order(rec):
        passed = current_pass(view, slice_id, ball)
        if passed is not None and passed.score in landed.get(ball, ()):
            continue  # this pass is on the spine already
        branch = ws.config.ball_branch(slice_id, ball)
        tip = git.rev_parse(f"refs/heads/{branch}", ws.paths.root)
        if passed is not None and tip is None:  # the branch only pointed at it (L7.1)
            tip = git.rev_parse(passed.commit, ws.paths.root)
        if passed is None:
            missing.append(f"{ball} (no pass)")
            ways[_shared(ws, view, slice_id, ball, way_to_pass(view, slice_id, ball))] = None
            continue
        if tip is None:  # neither its branch nor the commit its pass names is here
            missing.append(f"{ball} (its branch and passed commit {passed.commit[:12]} are "
                           "not in this clone)")
            ways[_Lost(branch, bool(records))] = None
            continue
        if git.out(["rev-parse", f"{tip}^{{tree}}"], ws.paths.root) != passed.candidate:
            missing.append(f"{ball} (branch moved off its passed candidate)")
            ways[f"`leap score {slice_id} {ball}`"] = None
            continue
        stale = current_stale(view, slice_id, ball)
        if stale is not None:  # L5, L8: its stack's dependency no longer stands
            missing.append(f"{ball} (held: {stale_reason(ball, stale)})")
            if restacking(view, slice_id, ball) is not None:  # it passed again: a restack
                ways[f"`leap red {slice_id} {ball} --carry`, then `leap throw {slice_id} "
                     f"--ball {ball} --run` and `leap score {slice_id} {ball}` (a restack "
                     f"on {stale.ball}'s new pass; `leap run {slice_id}` does all three)"] = None
                continue
            # its own pass stands: scoring it again changes nothing; its dependency's does
            ways[f"`leap score {slice_id} {stale.ball}` once {stale.ball}'s branch holds the "
                 f"candidate {ball} stands on again"] = None
            continue
        planned.append(Planned(ball, passed, tip))
    if missing:
        raise Incomplete(slice_id, missing, ways, reopened)
    return planned, reopened


def _fetch_or_give_up(ws: Workspace, slice_id: str, branch: str, merged: bool) -> str:
    """What brings back a passed ball whose branch and commit this clone lacks: its branch
    from the spine's remote when that holds it; else the work is nowhere leapgit can see,
    and the slice is given up and cut again (a passed ball takes no respec)."""
    remote = spine.spine_remote(ws.paths.root, ws.config.spine)
    asked = None if remote is None else git.run(  # 0: it holds it, 2: it does not
        ["ls-remote", "--exit-code", remote, f"refs/heads/{branch}"], ws.paths.root,
        check=False).returncode
    if asked == 0:
        return (f"`git fetch {shlex.quote(str(remote))} refs/heads/{branch}:refs/heads/"
                f"{branch}`, then `leap merge {slice_id}`")
    if asked not in (None, 2):  # it did not answer: no word of a loss on that
        # what it then says is its fetch, or the loss: the command moves on, to another hint
        return (f"`leap merge {slice_id}` again once {remote} answers (it did not now): it "
                f"asks again whether {remote} holds {branch}, and names its fetch, or what is "
                "left to do without one")
    where = "the spine tracks no remote to ask" if remote is None else \
        f"the spine's remote {remote} has no copy"
    again = "cut the work again as a slice of its own (`leap slice cut FILE`)" if merged else \
        (f"give the slice up (`leap slice abandon {slice_id} --reason TEXT`) and cut the work "
         "again (`leap slice cut FILE`)")
    return (f"restore {branch} from where it was built ({where}), then `leap merge "
            f"{slice_id}`; with no copy anywhere, its work is lost to this clone: {again}")


def _shared(ws: Workspace, view: LedgerView, slice_id: str, ball: str, way: str) -> str:
    """``way`` (`leap run S` or `leap score S B`) with the shared remote, in a slice with a
    ball published to workers (L3: a run of it goes with their remote; a hunt: a plain
    `leap run S`, as printed, waited for their rounds for good and built the slice's other
    balls a second time in this clone); `leap score` of a ball only where it was published."""
    def published(b: str) -> bool:
        episodes = query.episodes(view, slice_id, b)
        thrown = query.throw(view, slice_id, b, episodes[-1]) if episodes else None
        return thrown is not None and thrown.published

    scored = way.startswith("`leap score")
    shared = [b for b in ([ball] if scored else query.load_slice(view, slice_id).balls)
              if published(b)]
    if not shared:
        return way
    remote = shlex.quote(shared_remote(ws, slice_id, shared[0], ws.config.spine))
    return way[:-1] + f" --remote {remote}`"


def build(ws: Workspace, slice_id: str, tip: str, planned: list[Planned]) -> list[Merged]:
    """Predict each merge and make its commit, objects only: the spine ref is untouched."""
    merges: list[Merged] = []
    for p in planned:
        predicted = spine.predict(ws.paths.root, tip, p.commit)
        stray = [] if predicted.conflicts else \
            _not_candidate(ws.paths.root, predicted.tree, p.passed)
        if predicted.conflicts or stray:
            # a commit on the spine the server refuses (a hotfix made while a run went on)
            # changed the ball's files: the commands that keep it aside (a hunt: this said
            # "drop a spine commit" and named none)
            require_spine_pushable(ws, f"`leap merge {slice_id}`")
        if predicted.conflicts:
            raise RuleViolation(
                f"merging {slice_id}/{p.ball} onto the spine conflicts on "
                f"{', '.join(predicted.conflicts)}; nothing lands", rule="L9",
                hint="a scope collision is a decomposition error: re-cut the slice")
        if stray:
            raise RuleViolation(
                f"merging {slice_id}/{p.ball} would not land its candidate's bytes of "
                f"{', '.join(stray)}: the spine changed them since; nothing lands", rule="L8",
                hint="drop a spine commit made outside an integration (the server refuses "
                "it), or re-build the ball on the current spine and score it again")
        message = spine.merge_message(slice_id, p.ball, p.passed.candidate,
                                      p.passed.run_id or "", p.passed.score)
        tip = spine.merge_commit(ws.paths.root, tip, p.commit, predicted.tree, message)
        merges.append(Merged(p.ball, tip, p.passed.candidate, p.commit, p.passed.run_id or "",
                             p.passed.score))
    return merges


def _not_candidate(root: Path, tree: str, passed: ScoreRecord) -> list[str]:
    """The ball's touched files whose bytes in the merged ``tree`` are not the passed
    candidate's (the server's integration check, for every file of the ball)."""
    want = {t.path: t.blob for t in passed.touched}
    held = blobs(root, tree, sorted(want))
    return [path for path in sorted(want) if held[path] != want[path]]


def write_merge(ledger: Ledger, record: MergeRecord) -> Written:
    """The one ledger write of a slice pass record (signing, when added, goes here)."""
    trailers = [(tr.SLICE, record.slice), (tr.MERGE, str(record.number)),
                (tr.SPINE, record.spine), (tr.OUTCOME, "1"), (tr.TIP, record.tip),
                (tr.RUN, record.aggregate_run)]
    again = f" (re-merge {record.number})" if record.number > 1 else ""
    return ledger.append({layout.merge_path(record.slice, record.number):
                          yamlio.dumps(record.to_dict())},
                         f"merge {record.slice} onto {record.spine}{again}: "
                         f"{len(record.merges)} ball(s)", trailers)


def next_merge(view: LedgerView, slice_id: str) -> int:
    found = history.merge_records(view, slice_id)
    return found[-1].number + 1 if found else 1


class MergeBusy(Hold):
    """Another merge of this clone runs now (its merge lock is held): wait for it to end."""


def merge(ws: Workspace, slice_id: str, holder: str = INTEGRATOR, builder: str | None = None,
          echo: Echo = print, taken_over: tuple[str, str] | None = None) -> MergeResult:
    """L9: while it holds the spine's lease, a merge also holds this clone's merge lock,
    which the operating system gives back when the process dies (``kill -9``): a lease this
    clone took (``_taken_for`` names the clone), with no merge running here, was left by a
    killed merge and is given back before the next takes one. ``taken_over``: the (host,
    git dir) of the clone whose run of this slice this run took over (`leap run
    --take-over`): a lease that clone took for this slice's merge is given back as well."""
    lock = _merge_lock(ws)
    try:  # a moment's wait: a look of ``merge_running`` holds it that long, no merge runs
        lock.acquire(timeout=0.5)
    except Timeout:
        raise MergeBusy("another merge runs in this clone now", rule="L9",
                        hint=f"wait for it to end, then `leap merge {slice_id}` again") from None
    try:
        return _merge(ws, slice_id, holder, builder, echo, taken_over)
    finally:
        lock.release()


_CLONE = " in clone "


def _merge_lock(ws: Workspace) -> FileLock:
    """This clone's merge lock: held by a merge from before it takes the spine's lease until
    after it gives it back; the operating system frees it when that process dies."""
    folder = ws.paths.common_dir / "leap" / "merging"
    folder.mkdir(parents=True, exist_ok=True)
    return FileLock(str(folder / "spine.lock"), thread_local=False)


def merge_running(ws: Workspace) -> bool:
    """Whether a merge of this clone runs now (its merge lock is held): a lease this clone
    took is then that merge's, never one a killed merge left (a blind review: `leap lease
    release` gave a live merge's lease back, and another clone's merge took it)."""
    path = ws.paths.common_dir / "leap" / "merging" / "spine.lock"
    if not path.exists():
        return False  # no merge ever ran here; a read-only command creates nothing
    lock = FileLock(str(path), thread_local=False)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return True
    except OSError:  # a clone this user cannot write: no merge of this user runs in it
        return False
    lock.release()
    return False


def _taken_for(ws: Workspace, slice_id: str) -> str:
    """The reason of a lease this clone takes: the slice, the host and this clone's git dir
    (another clone on the same host holds a merge lock of its own)."""
    where = os.path.realpath(ws.paths.common_dir)
    return f"merge {slice_id} on {socket.gethostname()}{_CLONE}{where}"


def stopped_merge(ws: Workspace) -> tuple[Path, str] | None:
    """A stopped merge of this clone that waits to be finished by `leap merge` again (its
    intent, ``leap-merging/<slice>.yaml``, or one set aside while its push may land,
    ``kept/<slice>/<tip>.yaml``): the file and its slice. A folder left empty is none (a
    blind review: ``kept/`` was taken for a slice called "kept")."""
    folder = ws.paths.common_dir / "leap-merging"
    waiting = sorted([*folder.glob("*.yaml"), *folder.glob("kept/*/*.yaml")])
    if not waiting:
        return None
    first = waiting[0]
    return first, first.stem if first.parent == folder else first.parent.name


def taken_here(ws: Workspace, reason: str | None) -> bool | None:
    """Whether a lease whose take says ``reason`` was taken by a merge of this clone (True)
    or of another (False); None when the reason names no merge's clone (taken by hand)."""
    if not reason or not reason.startswith("merge ") or _CLONE not in reason:
        return None
    return reason.partition(" on ")[2] == _taken_for(ws, "").partition(" on ")[2]


def _left_by_a_killed_merge(ws: Workspace, ledger: Ledger, name: str, holder: str,
                            gone: str | None = None) -> None:
    """The open lease, when this clone took it (for any slice) and no merge of this clone
    runs (the caller holds its merge lock): a killed merge left it; it is given back. So
    is the lease ``gone`` names (its reason: the merge of a run this run took over)."""
    active = leases.active_lease(ledger.require(), name)
    if active is None or active.take is None or active.holder != holder:
        return
    reason = active.take.reason or ""
    if gone is not None and reason == gone:
        leases.release_lease(ledger, name, holder, "the run whose merge took it was taken "
                             "over (--take-over): that merge is gone (L9)")
        return
    if not taken_here(ws, reason):
        return
    leases.release_lease(ledger, name, holder, "its merge was killed: no merge holds this "
                         "clone's merge lock (L9)")


def _interrupted_taking(ws: Workspace, slice_id: str, holder: str, remote: str,
                        echo: Echo) -> None:
    """Ctrl-C while the lease was being taken: the remote may have taken it already (its
    compare-and-swap answered before this clone wrote it down). Looked for there and given
    back, so no other clone waits on a merge that never ran (L9). What cannot be done now
    (the remote out of reach, a second Ctrl-C) is said, with what does it later."""
    name = ws.config.spine
    later = (f"a lease {remote} took for this merge is given back by this clone's next "
             f"`leap merge {slice_id}`")
    try:
        try:
            syncing.sync(remote, start=ws.paths.root)
            with ws.ledger() as ledger:
                active = leases.active_lease(ledger.require(), name)
        except (LeapError, OSError) as exc:
            why = exc.lines()[0] if isinstance(exc, LeapError) else str(exc)
            echo(f"interrupted while taking the lease, and {remote} could not be read "
                 f"({why}): {later}")
            return
        if active is None or active.take is None or active.holder != holder or \
                active.take.reason != _taken_for(ws, slice_id):
            return  # the remote never took it: nothing to give back
        shared = _release(ws, name, holder, f"merge of {slice_id} interrupted as its lease "
                          "was taken: nothing landed", remote)
    except KeyboardInterrupt:  # pressed again: said, and the interrupt goes on
        echo(f"interrupted again while giving the lease back: {later}")
        raise
    echo(f"interrupted as lease {active.number} was taken on {remote}: " +
         ("given back" if shared else _not_shared(remote)))


def _not_shared(remote: str | None) -> str:
    """What a lease given back here, but not on the remote, still needs."""
    return f"the lease is given back here; `leap sync {remote}` gives it back on {remote}"


def _merge(ws: Workspace, slice_id: str, holder: str, builder: str | None,
           echo: Echo, taken_over: tuple[str, str] | None = None) -> MergeResult:
    root, name = ws.paths.root, ws.config.spine
    gone = None if taken_over is None else \
        f"merge {slice_id} on {taken_over[0]}{_CLONE}{taken_over[1]}"
    _, builder_text = declared_builder(ws, builder)
    old = spine_tip(root, name)
    with ws.ledger() as ledger:  # an unknown slice is bad input: said before anything is written
        query.load_slice(ledger.require(), slice_id)
    resumed = _resume(ws, slice_id, holder, old, echo)
    if resumed is not None:
        return resumed
    if _others_landed(ws, slice_id, holder, old, echo):  # the spine here moved with them
        old = git.rev_parse(f"refs/heads/{name}", root) or old
    spine.require_clean(root, name)
    remote = spine.spine_remote(root, name)  # bad input is said before the lease is taken
    found = None  # planned here first: a slice merged already needs no remote
    try:
        found = _plan(ws, slice_id, ask=not remote)
    except Hold:
        if not remote:
            raise  # else the remote may hold the passes this clone has not seen yet
    if remote and (found is None or found[0]):  # again on what the remote holds

        syncing.sync(remote, start=root)
        found = _plan(ws, slice_id, ask=True)
    assert found is not None
    planned, reopened, rec, landed, tip = found
    if not planned:  # every pass is on the spine: nothing to do, and that is no error
        if remote is None:  # where a remote shares the ledger, its spine must say
            _require_tracked_if_unpublished(ws, slice_id, landed[-1].tip)
        published = _publish(ws, slice_id, holder, remote, landed[-1], rec.base, echo) \
            if remote else None
        return MergeResult(landed[-1], reopened, remote if published else None, tip,
                           already=True, published=published)
    if remote is None:  # L9: a merge that would land only here, its ledger shared
        spine.require_shared_spine(ws, f"`leap merge {slice_id}` again")
    if remote:
        try:
            lease = leases.take_lease_on(
                remote, root, name, holder, _taken_for(ws, slice_id),
                f"`leap merge {slice_id}`",
                lambda ledger: _left_by_a_killed_merge(ws, ledger, name, holder, gone))
        except KeyboardInterrupt:
            _interrupted_taking(ws, slice_id, holder, remote, echo)
            raise
    else:
        with ws.ledger() as ledger:
            _left_by_a_killed_merge(ws, ledger, name, holder)
            try:
                lease = leases.take_lease(ledger, name, holder, _taken_for(ws, slice_id))
            except leases.LeaseHeld as exc:  # no other clone shares this ledger: none waits
                raise RuleViolation(problems=[exc.problems[0]._replace(
                    hint="its holder gives back a lease whose merge died with `leap lease "
                         f"release --holder {shlex.quote(exc.lease.holder)}`")]) from None
    temp = TEMP_REF.format(slice=slice_id)
    again = f"`leap merge {slice_id}`"  # what a stop below names, as it runs
    pushing: MergeRecord | None = None
    try:
        if remote:
            followed = _follow(ws, slice_id, remote, old, echo)
            if followed != old:  # it may be a merge of this slice a stopped run left
                kept = _kept_landed(ws, slice_id, holder, followed, echo)
                if kept is not None:
                    return kept
            old = followed
        merges = build(ws, slice_id, old, planned)
        git.run(["update-ref", temp, merges[-1].commit], root)
        spine.require_fast_forward(root, name, old, merges[-1].commit, again)
        # L8: a re-merge re-scores the whole slice on the merged result (every ball's
        # tests; the review from the base the slice first landed on), not only what changed
        since = landed[0].base if landed else old
        try:
            agg = _review(ws, slice_id, since, temp, builder_text, order(rec), echo)
        except AggregateRefused as refused:  # L8, T7.6: its findings go back to builders
            blamed = _blame(ws, slice_id, refused.run_id)
            raise AggregateRefused(slice_id, refused.run_id, refused.reason,
                                   tuple(blamed.balls), blamed.unowned,
                                   ws.config.ledger_ref) from None
        spine.require_fast_forward(root, name, old, merges[-1].commit, again)  # after review
        record = _record(ws, slice_id, lease.number, holder, old, merges, agg, remote)
        _intent(ws, slice_id).write_bytes(yamlio.dumps(record.to_dict()))
        if remote:
            _lease_up(ws, remote)
            pushing = record  # from here a stop may come after the remote took the spine
            _push(ws, remote, merges[-1].commit, slice_id)
    except BaseException as exc:
        _stopped(ws, slice_id, holder, remote, pushing, exc, echo)
        if isinstance(exc, spine.PushRefused):  # a merge a stopped run left landed first?
            kept = _kept_landed(ws, slice_id, holder, old, echo)
            if kept is not None:
                return kept
        raise
    finally:
        git.run(["update-ref", "-d", temp], root, check=False)
    # Pushed (or no remote): the slice has landed. Record it whatever the checkout does.
    _move(ws, old, record.tip, echo)
    return _finish(ws, record, reopened)


def _publish(ws: Workspace, slice_id: str, holder: str, remote: str, landed: MergeRecord,
             cut_on: str, echo: Echo) -> Published | None:
    """L9: a slice the ledger has merged whose spine's remote lacks it (merged in a clone
    before its project's server ran leapgit's `pre-receive`): a `git push` of the spine is
    refused for want of an open lease, and the merges are there to push, not to make again.
    The slice's own last merge (``landed.tip``, not whatever else the spine here holds) goes
    up under a lease taken for it, given back whatever happens; the server judges it as
    every integration, and by this clone first, from the remote's spine (from ``cut_on``, the
    slice's base, to a remote with none: a spine's first push is not judged there). None
    when the remote holds it (as last fetched, else as read now), or cannot be read (said:
    the slice is merged, whether there too is not known)."""
    root, name, tip = ws.paths.root, ws.config.spine, landed.tip
    _give_back_left(ws, holder, remote, echo)
    known = git.rev_parse(f"refs/remotes/{remote}/{name}", root)
    if known is not None and is_ancestor(root, tip, known):
        return None  # no need to ask: the remote held it when last read
    try:
        there = _remote_spine(ws, slice_id, remote)
    except LeapError as exc:
        if known is not None:  # as last fetched, the remote lacked it: a hold, said so
            raise
        echo(f"warning: whether {remote}'s spine holds slice {slice_id} is not known: "
             f"{exc.lines()[0]}")
        return None
    if there is not None and is_ancestor(root, tip, there):
        return None
    if git.rev_parse(f"{tip}^{{commit}}", root) is None:
        echo(f"warning: slice {slice_id}'s merge {tip[:12]} is on no spine this clone can "
             f"see, and its commits are not here: `leap merge {slice_id}` in the clone that "
             "made it pushes it")
        return None
    if there is not None and not is_ancestor(root, there, tip):
        raise RuleViolation(
            f"slice {slice_id} was merged in this clone only ({tip[:12]}), and {remote}'s "
            f"spine has moved on along another line since ({there[:12]}): its merges "
            "cannot be pushed as they are", rule="L9",
            hint=_land_anew(ws, tip, there, "follow the remote's spine"))

    since = there or cut_on
    refused = spine_refusals(ws, since, tip)  # as the server judges, before a lease
    if refused:
        first = refused[0]
        below = spine_reset_target(ws, since, tip)  # the hooks' own: honest merges stay
        raise RuleViolation(
            f"slice {slice_id} was merged in this clone only ({tip[:12]}) on commits the "
            f"spine rule refuses ({(first.commit or tip)[:12]}: {first.message}): its merges "
            "cannot be pushed as they are", rule=first.rule,
            hint=_land_anew(ws, tip, below, "take them off the spine"))
    lease = _take_for_publish(ws, slice_id, holder, remote, echo)
    pushed = False
    try:
        _lease_up(ws, remote)
        _push(ws, remote, tip, slice_id)
        pushed = True
    finally:
        shared = _release(ws, name, holder, f"slice {slice_id}, merged in this clone only "
                          f"at {tip[:12]}: " + ("pushed" if pushed else "its push stopped"),
                          remote)
    old = git.rev_parse(f"refs/heads/{name}", root)
    if old is not None and old != tip and is_ancestor(root, old, tip):
        _move(ws, old, tip, echo)  # a spine here reset below it comes back to it
    return Published(lease.number, there, tip, shared)


def _require_tracked_if_unpublished(ws: Workspace, slice_id: str, tip: str) -> None:
    """L9: a slice merged here, the spine tracking no remote, the ledger shared: when no
    remote that holds the ledger holds the slice on its spine (as last fetched), the spine
    must track one before `leap merge` can push it (``_publish``); else it is merged."""
    root, name = ws.paths.root, ws.config.spine
    with ws.ledger() as ledger:
        shared = ledger.remotes_holding()

    def holds(r: str, fetch: bool) -> bool:
        there = git.rev_parse(f"refs/remotes/{r}/{name}", root)
        if fetch and not (there and is_ancestor(root, tip, there)):
            try:  # as last fetched may be stale: asked now, only here
                there = _remote_spine(ws, slice_id, r)
            except LeapError:
                return False
        return bool(there) and is_ancestor(root, tip, there or "")

    if shared and not any(holds(r, False) for r in shared) and \
            not any(holds(r, True) for r in shared):
        spine.require_shared_spine(ws, f"`leap merge {slice_id}` again")


def _give_back_left(ws: Workspace, holder: str, remote: str, echo: Echo) -> None:
    """A lease this clone took, left open by a merge killed after its push landed (nothing
    is left to merge, so no later merge takes one and gives it back): given back here and
    on the remote (L9: it stops every other integrator)."""
    name = ws.config.spine
    with ws.ledger() as ledger:
        before = leases.active_lease(ledger.require(), name)
        _left_by_a_killed_merge(ws, ledger, name, holder)
        left = leases.active_lease(ledger.require(), name) is None
    if before is None or not left:
        return

    try:
        syncing.sync(remote, start=ws.paths.root)
    except (LeapError, OSError):
        echo(f"warning: lease {before.number} on {name}, left by a killed merge of this clone: "
             f"{_not_shared(remote)}")
        return
    echo(f"lease {before.number} on {name}, left by a killed merge of this clone, given back")


def _land_anew(ws: Workspace, tip: str, below: str, how: str) -> str:
    """The commands that keep a slice's merges (and all the spine here holds above them)
    on a branch of their own and move the spine to ``below``, then the way to land the work
    again."""
    root, name = ws.paths.root, ws.config.spine
    here = git.rev_parse(f"refs/heads/{name}", root)
    again = "land the work again as a slice of its own (`leap slice cut FILE`, then `leap " \
        "run SLICE`)"
    if here is None or not is_ancestor(root, tip, here):  # moved off them already
        return f"keep them (`{keep_branch(tip)}`), then {again}"
    return f"keep them and {how}: {keep_aside(here, name, below)}, then {again}"


def _take_for_publish(ws: Workspace, slice_id: str, holder: str, remote: str,
                      echo: Echo) -> leases.Lease:
    name = ws.config.spine
    try:
        return leases.take_lease_on(
            remote, ws.paths.root, name, holder, _taken_for(ws, slice_id),
            f"`leap merge {slice_id}`",
            lambda ledger: _left_by_a_killed_merge(ws, ledger, name, holder))
    except KeyboardInterrupt:
        _interrupted_taking(ws, slice_id, holder, remote, echo)
        raise


def _plan(ws: Workspace, slice_id: str, ask: bool
          ) -> tuple[list[Planned], tuple[ReopenRecord, ...], SliceRecord, list[MergeRecord],
                     str]:
    """``plan`` on the ledger as it is here, with the slice, its merges and the tip read. Its
    hold asks the remote about a lost ball only when it is the one said (``ask``): a plan
    before the sync with the remote is planned again after it, and that one asks."""
    try:
        with ws.ledger() as ledger:
            planned, reopened = plan(ws, ledger, slice_id)
            view = ledger.require()
            return (planned, reopened, query.load_slice(view, slice_id),
                    history.merge_records(view, slice_id), ledger.tip() or "")
    except Incomplete as incomplete:
        raise incomplete.hold(ws, ask) from None


def _review(ws: Workspace, slice_id: str, since: str, head_ref: str, builder: str,
            balls: list[str], echo: Echo) -> Aggregate:
    """The aggregate review of the merged result at ``head_ref``, unless the slice's review
    refused this very tree already (T6: the same bytes are not reviewed, and paid for,
    again): then that refusal stands."""
    tree = git.out(["rev-parse", f"{head_ref}^{{tree}}"], ws.paths.root)
    with ws.ledger() as ledger:
        view = ledger.require()
        run = aggregate.refused_tree(view, slice_id, tree)
        found = aggregate.refusing(view, slice_id, run) if run else None
    if run is not None and found is not None:
        echo(f"the merged result {tree[:12]} is the one the aggregate review refused in run "
             f"{run}: not reviewed again")
        raise AggregateRefused(slice_id, run, found.reason, ledger_ref=ws.config.ledger_ref)
    return review_merged(ws, slice_id, since, head_ref, builder, balls, echo)


def _blame(ws: Workspace, slice_id: str, run_id: str) -> aggregate.Blame:
    """L8, T7.6: the aggregate review refused the merged result; each ball its findings
    name gets a score of -1 on the claim its pass graded (``rules.aggregate``), so the pass
    no longer stands and the builder's next round answers them."""
    with ws.ledger() as ledger:
        view = ledger.require()
        summary = aggregate.refusing(view, slice_id, run_id)
        if summary is None:
            return aggregate.Blame({}, ())
        rec = query.load_slice(view, slice_id)
        balls = [query.load_ball(view, slice_id, b) for b in rec.balls]
        found = aggregate.blame(balls, summary.findings)
        if found.unowned:  # no builder may edit those files: the slice is cut again
            return aggregate.Blame({}, found.unowned)
        done: dict[str, list[FindingRecord]] = {}
        files: dict[str, bytes] = {}
        for ball, share in found.balls.items():
            passed = current_pass(view, slice_id, ball)
            if passed is None:
                continue
            named = ", ".join(dict.fromkeys(f.file for f in share if f.file)) or "the whole"
            why = (f"the aggregate review of the merged result refused it (run {run_id}): "
                   f"{len(share)} finding(s) on {named}")
            number = history.next_number(view, layout.ball_dir(slice_id, ball) + "/scores")
            score = passed._replace(
                score=number, outcome=-1, reason=why, rule=aggregate.RULE,
                run_id=run_id, steps=(Step("tribunal", "fail", why, aggregate.RULE),),
                provenance=None, usage=None, metric=None, runs=(), recorded_at=now_iso())
            files[layout.score_path(slice_id, ball, number)] = yamlio.dumps(score.to_dict())
            done[ball] = share
        if files:  # one commit: a kill never leaves some balls blamed and others not
            ledger.append(files, f"scores of {slice_id}: the aggregate review {run_id} "
                          f"refused the merged result [L8]",
                          [(tr.SLICE, slice_id), *((tr.BALL, b) for b in done),
                           (tr.RUN, run_id)])
    return aggregate.Blame(done, ())


def _stopped(ws: Workspace, slice_id: str, holder: str, remote: str | None,
             pushing: MergeRecord | None, exc: BaseException, echo: Echo) -> None:
    """A stop before the slice is recorded. Before the push, or when the remote does not
    hold the planned tip, nothing landed. A stop inside the push (a Ctrl-C, a dropped
    connection) may come after the remote took it: then it landed, and says so (L8), keeping
    the planned record for `leap merge` again. The lease is given back either way; returns
    normally so the caller re-raises ``exc`` (a failure is raised as a Hold naming it)."""
    name = ws.config.spine
    # a refusal is an answer: nothing landed, whatever the remote's spine holds by now (it
    # may have moved for another integration); only a push that got no answer may have
    refused = isinstance(exc, spine.PushRefused)
    fate, held = _remote_fate(ws, remote, pushing) if pushing is not None and remote and \
        not refused else ("none", None)
    if fate == "none":
        if pushing is not None and not refused:  # no answer: the server may finish it yet
            _set_aside(ws, pushing)
        _intent(ws, slice_id).unlink(missing_ok=True)
        if not _release(ws, name, holder, f"merge of {slice_id} stopped: nothing landed",
                        remote):
            echo(_not_shared(remote))
        return
    assert pushing is not None and remote is not None
    tip = pushing.tip[:12]
    said = (f"the merge of {slice_id} landed on {remote} at {tip}" if fate == "landed" else
            f"the push of {slice_id} to {remote} stopped and its spine is "
            f"{held[:12] if held else 'unreadable'}: it may have landed at {tip}")
    if not _release(ws, name, holder, f"{said}; its record is not yet written", remote):
        echo(_not_shared(remote))
    message = f"{said}, but its record is not yet written" if fate == "landed" else said
    hint = f"`leap merge {slice_id}` again records it" + ("" if fate == "landed" else
                                                          " if it landed")
    if isinstance(exc, Exception):
        why = exc.lines()[0] if isinstance(exc, LeapError) else str(exc)
        raise Hold(f"{message} (the push said: {why})", rule="L8", hint=hint) from exc
    echo(f"{message}; {hint}")


def _remote_fate(ws: Workspace, remote: str, record: MergeRecord) -> tuple[str, str | None]:
    """What the spine's remote holds after a stopped push: "landed" (the planned tip),
    "none" (still the base) or "unknown" (unreadable, or moved elsewhere), and its tip."""
    held = _remote_tip(ws, remote)
    if held == record.tip:
        return "landed", held
    return ("none" if held == record.base else "unknown"), held


def _move(ws: Workspace, old: str, new: str, echo: Echo) -> None:
    """Move the local spine after the push; never a stop: the slice has landed already."""
    try:
        warning = spine.move_spine(ws.paths.root, ws.config.spine, old, new)
    except LeapError as exc:
        warning = f"the local spine was not moved to {new[:12]}: {exc.lines()[0]}"
    if warning:
        echo(f"warning: {warning}")


def _follow(ws: Workspace, slice_id: str, remote: str, old: str, echo: Echo) -> str:
    """L9: the merge is built on the spine as the remote holds it, which another
    integration may have moved since this clone last looked (a candidate built on an old
    copy is refused there as no fast-forward, after a paid review). A spine here that is
    behind moves forward to it first, its checkout too; one that parted from it stops the
    merge, nothing landed. Returns the tip to build on."""
    root, name, again = ws.paths.root, ws.config.spine, f"`leap merge {slice_id}`"
    there = _remote_spine(ws, slice_id, remote)
    if there is None or there == old or is_ancestor(root, there, old):
        return old  # this clone's spine is as far as the remote's, or further
    if not is_ancestor(root, old, there):
        where = spine.checkout_of(root, name)
        keep = f"git -C {shlex.quote(str(root))} branch {name}-here-{old[:8]} {old}"
        follow = (f"git -C {shlex.quote(str(where))} reset --keep {there}" if where else
                  f"git -C {shlex.quote(str(root))} branch -f {name} {there}")
        raise RuleViolation(
            f"the spine {name!r} here ({old[:12]}) and on {remote} ({there[:12]}) have "
            "parted: nothing landed", rule="L9",
            hint=f"the remote's is the one spine: keep this clone's (`{keep}`), follow the "
                 f"remote's (`{follow}`), then {again} again")
    spine.require_fast_forward(root, name, old, there, again)
    warning = spine.move_spine(root, name, old, there)
    if warning:
        raise Hold(f"the spine {name!r} must first follow {remote}'s to {there[:12]}: "
                   f"{warning}", rule="L9", hint=f"then {again} again")
    echo(f"the spine {name!r} here followed {remote}'s from {old[:12]} to {there[:12]} "
         "(another integration landed there first)")
    return there


def _remote_spine(ws: Workspace, slice_id: str, remote: str) -> str | None:
    """The spine's tip on ``remote``, fetched now (None: the remote has no spine yet)."""
    root, name = ws.paths.root, ws.config.spine
    track = f"refs/remotes/{remote}/{name}"
    spec = f"+refs/heads/{name}:{track}"
    fetched = fetch(root, ["--quiet", "--no-tags", remote, spec])  # again after a race
    if fetched.returncode != 0:
        said = git.says(fetched.stderr.decode(errors="replace"))
        if "couldn't find remote ref" in said:
            return None  # the remote has no spine yet: this merge gives it its first
        locked = lock_in_the_way(remote, [spec], fetched, "nothing landed")
        if locked is not None:
            raise locked
        if git.unavailable(said):  # `leap run` waits for it
            raise git.RemoteUnavailable(
                f"could not read the spine {name!r} on {remote} ({said}): nothing landed",
                rule="L9", hint=f"`leap merge {slice_id}` again once {remote} answers")
        raise Hold(f"{remote} would not give its spine {name!r} ({said}): nothing landed",
                   rule="L9", hint="git's words say what to mend here (access, the "
                   "remote's name)")
    return git.rev_parse(track, root)


def _lease_up(ws: Workspace, remote: str) -> None:
    # F1: the lease and the passes go up first: pre-receive judges the spine against the
    # ledger it stores
    syncing.sync(remote, start=ws.paths.root)


def _push(ws: Workspace, remote: str, tip: str, slice_id: str) -> None:
    """The spine alone: its proof is on the remote's ledger already (``_lease_up``), and a
    ledger that moved there since cannot refuse it."""
    spine.push(ws.paths.root, remote, [f"{tip}:refs/heads/{ws.config.spine}"],
               then=f"`leap merge {slice_id}` again")


def _release(ws: Workspace, name: str, holder: str, reason: str, remote: str | None = None
             ) -> bool:
    """Give the lease back, here and (when the spine has a remote) there: a lease left open
    on the remote would refuse every later merge. False when the remote did not take the
    release (it is recorded here; `leap sync` carries it up)."""
    try:
        with ws.ledger() as ledger:
            leases.release_lease(ledger, name, holder, reason)
    except LeapError:
        pass  # already released, or never ours: the error that stopped us matters more
    if remote:
        try:
            syncing.sync(remote, start=ws.paths.root)
        except (LeapError, OSError):
            return False  # the release is recorded here; `leap sync` carries it up later
    return True


def _record(ws: Workspace, slice_id: str, lease: int, holder: str, old: str,
            merges: list[Merged], agg: Aggregate, remote: str | None) -> MergeRecord:
    return MergeRecord(slice_id, ws.config.spine, lease, holder, old, merges[-1].commit,
                       tuple(merges), agg.run_id, agg.tree, now_iso(), agg.tests, remote)


def _intent(ws: Workspace, slice_id: str) -> Path:
    """The slice pass record about to land, kept until it is written: a merge stopped after
    the push resumes from it (`leap merge` again)."""
    folder = ws.paths.common_dir / "leap-merging"
    folder.mkdir(exist_ok=True)
    return folder / f"{slice_id}.yaml"


def _resume(ws: Workspace, slice_id: str, holder: str, tip: str,
            echo: Echo = print) -> MergeResult | None:
    """A merge of ``slice_id`` that landed (the spine is at its planned tip, here or on its
    remote) and was never recorded: write its record now, giving the lease back if it is
    still ours. A push that may still land (the remote's spine is still at its base: a push
    a killed merge left in flight, or a server that finishes after the client died) is
    kept aside, never forgotten (``_kept_landed``)."""
    path = _intent(ws, slice_id)
    if not path.is_file():
        return _kept_landed(ws, slice_id, holder, tip, echo)
    record = MergeRecord.from_dict(yamlio.loads(path.read_bytes(), str(path)))
    with ws.ledger() as ledger:
        recorded = any(r.tip == record.tip
                       for r in history.merge_records(ledger.require(), slice_id))
    landed = tip == record.tip or is_ancestor(ws.paths.root, record.tip, tip)
    if not recorded and not landed and tip == record.base and record.remote:
        held = _remote_tip(ws, record.remote)
        if held is None:
            raise Hold(f"the merge of {slice_id} to {record.tip[:12]} stopped during its push "
                       f"and {record.remote} cannot be read now: whether it landed is "
                       "unknown; nothing was changed", rule="L8",
                       hint=f"`leap merge {slice_id}` again once the remote answers")
        if held == record.tip or (held != record.base
                                  and _remote_holds(ws, record.remote, record.tip, held)):
            _move(ws, record.base, record.tip, echo)  # pushed, stopped before the local move
            landed = True
        elif held == record.base and record.spine == ws.config.spine:
            _set_aside(ws, record)  # not landed yet: it still may
    if recorded or not landed or record.spine != ws.config.spine:
        path.unlink(missing_ok=True)  # recorded already, or it never landed here: stale
        return _kept_landed(ws, slice_id, holder, tip, echo)
    _require_holder(record, holder, tip)
    return _finish(ws, record, ())


def _require_holder(record: MergeRecord, holder: str, tip: str) -> None:
    if record.holder != holder:
        raise UsageError(f"the merge of {record.slice} by {record.holder!r} landed at "
                         f"{tip[:12]} and is not yet recorded", rule="L9",
                         hint=f"`leap merge {record.slice} --holder "
                              f"{shlex.quote(record.holder)}` records it")


def _kept(ws: Workspace, slice_id: str) -> Path:
    """Where a planned merge whose push may still land waits (``_set_aside``)."""
    return ws.paths.common_dir / "leap-merging" / "kept" / slice_id


def _set_aside(ws: Workspace, record: MergeRecord) -> None:
    folder = _kept(ws, record.slice)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f"{record.tip}.tmp"
    tmp.write_bytes(yamlio.dumps(record.to_dict()))
    tmp.replace(folder / f"{record.tip}.yaml")


def _others_landed(ws: Workspace, slice_id: str, holder: str, tip: str, echo: Echo) -> bool:
    """L8: another slice's merge set aside here that has landed since (a blind review: it
    was looked at only when that slice merged again, and the audit failed meanwhile): it
    is recorded before this merge takes the lease. One of another holder is theirs to
    record (`leap merge SLICE --holder H`). Whether any was recorded."""
    folder = ws.paths.common_dir / "leap-merging" / "kept"
    others = sorted(p.name for p in folder.iterdir() if p.is_dir() and p.name != slice_id) \
        if folder.is_dir() else []
    done = False
    for other in others:
        try:
            done = _kept_landed(ws, other, holder, tip, echo, release=False) is not None \
                or done
        except LeapError as exc:  # theirs to record (another holder), or later: said
            echo(f"warning: {exc.lines()[0]}")
        tip = git.rev_parse(f"refs/heads/{ws.config.spine}", ws.paths.root) or tip
    return done


def _kept_landed(ws: Workspace, slice_id: str, holder: str, tip: str,
                 echo: Echo, release: bool = True) -> MergeResult | None:
    """L8: a merge set aside because its push might still land, found landed (on the spine
    here, ``tip``, or on the remote's): recorded now, as any merge that landed unrecorded.
    One that can land no more (the spine moved on without it: its push is no fast-forward
    now), or that is recorded, is dropped."""
    folder = _kept(ws, slice_id)
    kept = sorted(folder.glob("*.yaml")) if folder.is_dir() else []
    if not kept:
        return None
    with ws.ledger() as ledger:
        recorded = {r.tip for r in history.merge_records(ledger.require(), slice_id)}
    held: dict[str, str | None] = {}  # remote -> its spine's tip, asked once
    for path in kept:
        record = MergeRecord.from_dict(yamlio.loads(path.read_bytes(), str(path)))
        if record.tip in recorded or record.spine != ws.config.spine or not record.remote:
            path.unlink(missing_ok=True)
            continue
        if record.remote not in held:
            held[record.remote] = _remote_tip(ws, record.remote)
        there = held[record.remote]
        if tip == record.tip or is_ancestor(ws.paths.root, record.tip, tip) or (
                there is not None and there != record.base and
                (there == record.tip or _remote_holds(ws, record.remote, record.tip, there))):
            _require_holder(record, holder, tip)
            echo(f"the merge of {slice_id} a stopped run left in flight landed at "
                 f"{record.tip[:12]}: recorded now")
            if tip == record.base:
                _move(ws, record.base, record.tip, echo)
            return _finish(ws, record, (), release)
        if there is not None and there != record.base:
            path.unlink(missing_ok=True)  # the spine moved on without it: it cannot land
    return None


def _remote_holds(ws: Workspace, remote: str, tip: str, held: str) -> bool:
    """Whether the remote's spine, at ``held``, has ``tip`` in its history: a merge that
    landed and was built on since (another integration after the lease went back)."""
    fetched = git.run(["fetch", "--quiet", "--no-tags", remote,
                       f"refs/heads/{ws.config.spine}"], ws.paths.root, check=False)
    return fetched.returncode == 0 and is_ancestor(ws.paths.root, tip, held)


def _remote_tip(ws: Workspace, remote: str) -> str | None:
    proc = git.run(["ls-remote", remote, f"refs/heads/{ws.config.spine}"], ws.paths.root,
                   check=False)
    words = proc.stdout.decode().split()
    return words[0] if proc.returncode == 0 and words else None


def _finish(ws: Workspace, record: MergeRecord, reopened: tuple[ReopenRecord, ...],
            release: bool = True) -> MergeResult:
    """The slice has landed: record it and give the lease back (``release``: the lease is
    this merge's; not when another slice's merge records one that landed before it). On
    any stop here (an error, Ctrl-C) the lease is given back all the same, and `leap merge`
    again resumes."""
    name, remote = ws.config.spine, record.remote
    try:
        with ws.ledger() as ledger:
            # numbered when written: a merge resumed later follows whatever landed since
            record = record._replace(number=next_merge(ledger.require(), record.slice))
            write_merge(ledger, record)
            active = leases.active_lease(ledger.require(), name)
            if release and active is not None and active.holder == record.holder:
                leases.release_lease(ledger, name, record.holder, f"merged {record.slice}")
            tip = ledger.tip() or ""
        if remote:
            syncing.sync(remote, start=ws.paths.root)
    except BaseException:
        if not release:
            raise
        _release(ws, name, record.holder, f"merge of {record.slice} landed at "
                 f"{record.tip[:12]}, its record not yet written: `leap merge "
                 f"{record.slice}` again resumes", remote)
        raise
    _intent(ws, record.slice).unlink(missing_ok=True)
    (_kept(ws, record.slice) / f"{record.tip}.yaml").unlink(missing_ok=True)
    return MergeResult(record, reopened, remote, tip)
