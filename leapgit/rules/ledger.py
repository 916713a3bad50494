"""Ledger-branch rules: fast-forward only, add-only (L8: written truth), every added record
schema-valid and at the path its content claims, no fifth round (L6), a pass record carries
its whole provenance chain with one candidate hash (L7.5), a receipt never passes (L7), one
integrator lease at a time (L9)."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from leapgit.errors import LeapError
from leapgit.ledger import layout
from leapgit.records import schema, yamlio
from leapgit.records.types import (
    ABSENT,
    STUCK,
    BallRecord,
    Checkpoint,
    Receipt,
    SliceRecord,
    ThrowRecord,
)
from leapgit.rules.balls import finding_red_problems, hidden_rounds, recorded_base, recorded_rounds
from leapgit.rules.context import PushContext, RefUpdate
from leapgit.rules.refusal import Refusal

if TYPE_CHECKING:
    from dulwich.objects import Commit

    from leapgit.ledger.view import LedgerView
    from leapgit.records.scoring import RedRecord

SYNC = "fetch the remote ledger and replay your records on it with `leap sync`"
FIX_RECORD = "write a correction as a new record, never edit or delete one"
_BLOB_MODE = 0o100644


def check_ledger_update(ctx: PushContext, upd: RefUpdate) -> list[Refusal]:
    if upd.new is None:
        return [Refusal("L8", upd.ref, upd.old, None, "the ledger branch cannot be deleted",
                        "keep it: the ledger is written truth")]
    missing = ctx.missing_tip(upd)
    if missing is not None:
        return [missing]
    if upd.old is not None and ctx.objects.has(upd.old) and \
            not ctx.objects.is_ancestor(upd.old, upd.new):
        return [Refusal("L8", upd.ref, upd.new, None,
                        f"not a fast-forward of {upd.old[:12]}: the ledger is never rewritten",
                        SYNC)]
    out: list[Refusal] = []
    for commit in ctx.objects.new_commits(upd.new, [upd.old] if upd.old else []):
        out.extend(check_ledger_commit(ctx, upd.ref, commit))
    return out


def check_ledger_commit(ctx: PushContext, ref: str, commit: Commit) -> list[Refusal]:
    from dulwich.diff_tree import tree_changes

    sha = commit.id.decode()
    if len(commit.parents) > 1:
        return [Refusal("L8", ref, sha, None, "a merge commit on the ledger; it stays linear",
                        SYNC)]
    parent = commit.parents[0].decode() if commit.parents else None
    old_tree = ctx.objects.commit(parent).tree if parent else None
    out: list[Refusal] = []
    added: list[tuple[str, dict[str, object]]] = []
    changes = list(tree_changes(ctx.objects.store, old_tree, commit.tree))
    if len(changes) > layout.MAX_RECORDS:  # counted before any record is parsed
        return [Refusal("L8", ref, sha, None, f"the commit changes {len(changes)} ledger "
                        f"files, more than the {layout.MAX_RECORDS} records one commit may "
                        "add", "write records with leapgit, a few a commit")]
    for change in changes:
        if change.type == "add" and change.new is not None:
            new = change.new
            path = (new.path or b"").decode("utf-8", "surrogateescape")
            found = _check_added(ctx, ref, sha, path, new.mode or 0, new.sha or b"")
            if isinstance(found, Refusal):
                out.append(found)
            else:
                added.append((path, found))
            continue
        entry = change.old if change.old is not None else change.new
        path = ((entry.path if entry else None) or b"?").decode("utf-8", "surrogateescape")
        what = "deletes" if change.type == "delete" else "edits"
        out.append(Refusal("L8", ref, sha, path, f"the commit {what} an existing record",
                           FIX_RECORD))
    if added and not out:
        view = ctx.ledger_view(sha)
        for path, raw in added:
            unheld = None if raw["kind"] in _SAY_THEIR_SLICE else \
                _of_no_cut(ref, sha, path, view)
            out.extend([unheld] if unheld is not None else
                       _check_meaning(ctx, ref, sha, path, raw, view))
    return out


# the records whose own rule names a slice the ledger does not hold: an abandon
# (``_check_abandon``, L3) and a run lease (``rules.runs``, L3)
_SAY_THEIR_SLICE = ("abandon", "run")


def _of_no_cut(ref: str, sha: str, path: str, view: LedgerView) -> Refusal | None:
    """L1: a record of a slice belongs to a slice the ledger holds, and a ball's to a ball
    its cut named (its first spec; an abandon and a run lease say their own). A red of
    a slice no cut made landed, and every clone's `leap status` then stopped on "unknown
    slice" (a blind review of `--take-remote`, which left a refused cut out and pushed the
    records written on it after)."""
    parts = path.split("/")
    if len(parts) < 3 or parts[0] != "slices" or parts[2] == "slice.yaml":
        return None
    slice_id = parts[1]
    if not view.exists(layout.slice_path(slice_id)):
        return Refusal("L1", ref, sha, path, f"a record of slice {slice_id}, which the ledger "
                       "does not hold", "cut the slice first (`leap slice cut FILE`)")
    if len(parts) >= 5 and parts[2] == "balls" and parts[4] != "ball.yaml" and \
            not view.exists(layout.ball_path(slice_id, parts[3])):
        return Refusal("L1", ref, sha, path, f"a record of ball {parts[3]}, which the cut of "
                       f"slice {slice_id} does not name", "records go to the balls a cut names")
    return None


def _check_added(ctx: PushContext, ref: str, sha: str, path: str, mode: int,
                 blob: bytes) -> Refusal | dict[str, object]:
    if mode != _BLOB_MODE:
        return Refusal("L8", ref, sha, path, f"mode {mode:o} is not a plain file",
                       "records are plain YAML files")
    try:
        raw = yamlio.loads_shared(ctx.objects.capped(blob, path, yamlio.MAX_BYTES), path)
        fifth = _fifth_round(ctx, ref, sha, path, raw)
        if fifth is not None:
            return fifth
        schema.validate_record(raw, path)
        claimed = layout.path_for(raw, path)
    except LeapError as exc:
        return Refusal("L8", ref, sha, path, f"not a valid record: {'; '.join(exc.lines())}",
                       "write records with leapgit, which validates them")
    if claimed != path:
        return Refusal("L8", ref, sha, path, f"the record says it belongs at {claimed}",
                       "write records with leapgit, at the path their content names")
    return raw


def _fifth_round(ctx: PushContext, ref: str, sha: str, path: str, raw: object) -> Refusal | None:
    # L6: round four cannot create round five (named before the schema's own maximum).
    if not (isinstance(raw, dict) and raw.get("kind") == "receipt"):
        return None
    round_no, limit = raw.get("round"), ctx.config.round_cap
    if isinstance(round_no, int) and round_no > limit:
        return Refusal("L6", ref, sha, path, f"round {round_no} exceeds the round limit "
                       f"{limit}: no fifth round", "checkpoint and resume in a new episode")
    return None


def _check_meaning(ctx: PushContext, ref: str, sha: str, path: str, raw: dict[str, object],
                   view: LedgerView) -> list[Refusal]:
    """``view``: the ledger as this commit leaves it, so records added in the same commit
    count against each other."""
    kind = raw["kind"]
    if kind == "receipt":
        return _check_receipt(ctx, ref, sha, path, Receipt.from_dict(raw), view)
    if kind == "throw":
        thrown = ThrowRecord.from_dict(raw)
        return _thrown_abandoned(ref, sha, path, thrown.slice, view) + \
            _check_throw(ctx, ref, sha, path, thrown, view)
    if kind == "abandon":
        return _check_abandon(ref, sha, path, str(raw["slice"]), view)
    if kind == "slice":
        from leapgit.rules.cuts import check_cut

        return check_cut(ctx, ref, sha, path, SliceRecord.from_dict(raw), view)
    if kind == "checkpoint":
        return _check_checkpoint(ctx, ref, sha, path, Checkpoint.from_dict(raw), view)
    if kind == "score":
        from leapgit.records.scoring import ScoreRecord
        from leapgit.rules import passes

        rec = ScoreRecord.from_dict(raw)
        score = f"`leap score {rec.slice} {rec.ball}`"  # the command as it runs
        if rec.outcome == 1:
            red = passes.red_problems(view, rec)  # T7.1: a red the ledger holds
            return [Refusal("L7", ref, sha, path, why, f"score with {score}, which grades "
                            "a recorded claim") for why in passes.round_problems(view, rec)] + [
                Refusal("T7.1" if why in red else "L7.5", ref, sha, path, why, "score with "
                        f"{score}, which writes the whole chain")
                for why in passes.pass_problems(view, rec)]
        return [Refusal("L7", ref, sha, path, why, f"score with {score}, which grades the "
                        "last recorded round") for why in passes.grade_problems(view, rec)]
    if kind == "merge":
        from leapgit.records.scoring import MergeRecord
        from leapgit.rules import passes

        merge = MergeRecord.from_dict(raw)
        return [Refusal("L8", ref, sha, path, why, "merge the whole slice with `leap merge "
                        f"{merge.slice}`, once every ball holds a full pass") for why in
                passes.merge_problems(view, merge)]
    if kind == "live_proof":
        return _check_live(ctx, ref, sha, path, raw, view)
    if kind == "red":
        from leapgit.records.scoring import RedRecord

        red_rec = RedRecord.from_dict(raw)
        if red_rec.finding:
            return _check_finding_red(ctx, ref, sha, path, red_rec, view)
        return _check_red(ctx, ref, sha, path, red_rec, view) + \
            _red_first(ctx, ref, sha, path, red_rec, view)
    if kind == "reopen":
        from leapgit.records.scoring import ReopenRecord
        from leapgit.rules.reopens import check_reopen

        return check_reopen(ctx, ref, sha, path, ReopenRecord.from_dict(raw), view)
    if kind == "ball":
        from leapgit.rules.respec import check_respec

        parents = ctx.objects.commit(sha).parents
        before = ctx.ledger_view(parents[0].decode()) if parents else view
        return check_respec(ctx, ref, sha, path, BallRecord.from_dict(raw), view, before)
    if kind == "lease":
        from leapgit.ledger.leases import lease_problems

        return _lease_pusher(ctx, ref, sha, path, raw) + [
            Refusal("L9", ref, sha, where, what, "one integrator at a time: release the open "
                    "lease before taking the next") for where, what in
            lease_problems(view, str(raw["spine"]), _lease_number(raw)) if where == path]
    if kind == "claim":
        return _check_claim(ctx, ref, sha, path, raw, view)
    if kind == "run":
        from leapgit.records.runs import RunLeaseRecord
        from leapgit.rules.runs import RULE, run_problems

        return [Refusal(RULE, ref, sha, path, why, "one run drives a slice at a time: "
                        "`leap run SLICE` takes the next run lease, and gives it back when it "
                        "ends")
                for why in run_problems(view, RunLeaseRecord.from_dict(raw))]
    return []


def _lease_number(raw: dict[str, object]) -> int | None:
    number = raw.get("lease")
    return number if isinstance(number, int) else None


def _check_claim(ctx: PushContext, ref: str, sha: str, path: str, raw: dict[str, object],
                 view: LedgerView) -> list[Refusal]:
    """L9: one live claim an episode, taken and given back only in the pusher's own name."""
    from leapgit.records.claims import ClaimRecord
    from leapgit.rules.claims import claim_problems

    rec = ClaimRecord.from_dict(raw)
    if not ctx.authority:
        return _lease_pusher(ctx, ref, sha, path, raw)  # leases: by the server's own clock
    return _lease_pusher(ctx, ref, sha, path, raw) + [
        Refusal("L9", ref, sha, path, why, "fetch the remote ledger and pick another ball "
                "(`leap worker --remote REMOTE` does)") for why in
        claim_problems(view, rec, ctx.config.claim_seconds, ctx.now,
                       ctx.config.round_cap)]


def _builder_only(ctx: PushContext, ref: str, sha: str, path: str, slice_id: str,
                  ball_id: str, episode: int, worker: str | None,
                  view: LedgerView) -> list[Refusal]:
    """L9: on a published episode, only the live claim's holder records its rounds."""
    from leapgit.rules.claims import builder_problems

    if not ctx.authority:
        # a lease is live by the judge's clock, the server's own: a client that judges a
        # commit the remote took long ago (its pre-push, when the remote moved) would
        # refuse what the server accepted while the claim was live
        return []
    pusher = ctx.pusher.name if ctx.pusher is not None else None
    return [Refusal("L9", ref, sha, path, why, "claim the ball first (`leap worker "
                    "--remote REMOTE` claims a published ball before it builds)")
            for why in builder_problems(view, slice_id, ball_id, episode, worker, pusher,
                                        ctx.now)]


def _check_live(ctx: PushContext, ref: str, sha: str, path: str, raw: dict[str, object],
                view: LedgerView) -> list[Refusal]:
    """T9: a live proof proves a landed merge: the merge it names is recorded, and it ran on
    that merge's spine tip."""
    from leapgit.ledger import layout, query
    from leapgit.records.live import LiveProofRecord
    from leapgit.records.scoring import MergeRecord

    rec = LiveProofRecord.from_dict(raw)
    merged = view.record(layout.merge_path(rec.slice, rec.merge), MergeRecord)
    if merged is None:
        return [Refusal("T9", ref, sha, path, f"a live proof of merge {rec.merge} of slice "
                        f"{rec.slice}, which is not recorded", f"`leap run {rec.slice}` proves "
                        "the slice live once its merge is recorded")]
    out = []
    if rec.attempt == 1 and merged.tip != rec.tip:
        out.append(Refusal("T9", ref, sha, path, f"the live proof ran on {rec.tip[:12]}, not "
                           f"on {merged.tip[:12]}, the spine tip merge {rec.merge} left",
                           f"prove the landed tip, as `leap run {rec.slice}` does"))
    if rec.attempt > 1:  # again, after a failure, on a later tip that holds the merge
        before = view.record(layout.live_path(rec.slice, rec.merge, rec.attempt - 1),
                             LiveProofRecord)
        if before is None or before.outcome != -1:
            out.append(Refusal("T9", ref, sha, path, f"attempt {rec.attempt} of merge "
                               f"{rec.merge}'s live proof without a failed attempt "
                               f"{rec.attempt - 1}", "prove again only after a failure"))
        else:  # on a tip the server's spine holds, later than the failed attempt's
            spine = ctx.objects.ref(f"refs/heads/{ctx.config.spine}")
            held = spine is not None and ctx.objects.has(rec.tip) and \
                ctx.objects.has(before.tip) and ctx.objects.is_ancestor(rec.tip, spine)
            if not held or rec.tip == before.tip or \
                    not ctx.objects.is_ancestor(before.tip, rec.tip):
                out.append(Refusal("T9", ref, sha, path, f"attempt {rec.attempt} ran on "
                                   f"{rec.tip[:12]}, which is no later tip of the spine this "
                                   f"server holds than attempt {rec.attempt - 1}'s "
                                   f"{before.tip[:12]}", "land a fix on the spine first"))
    declared = query.load_slice(view, rec.slice).live_proof
    if rec.command != declared:
        out.append(Refusal("T9", ref, sha, path, f"the live proof ran `{rec.command}`, not the "
                           f"slice's declared live_proof ({declared!r})", "prove the landed "
                           f"tip with the slice's own live_proof, as `leap run {rec.slice}` "
                           "does"))
    if rec.outcome != (1 if rec.exit_code == 0 else -1):  # L9: no success without proof
        out.append(Refusal("T9", ref, sha, path, f"the live proof says {rec.outcome} with exit "
                           f"code {rec.exit_code}: it held only if it exited 0", "record what "
                           "the command did"))
    return out


def _lease_pusher(ctx: PushContext, ref: str, sha: str, path: str,
                  raw: dict[str, object]) -> list[Refusal]:
    # L9: when the transport names the pusher, a lease is taken or released only in the
    # pusher's own name (a release of another's lease is refused by ``lease_problems``).
    hint = "take and release leases only in your own name, as the transport names you"
    if ctx.pusher_problem:
        return [Refusal("L9", ref, sha, path, f"a signed push git did not accept "
                        f"({ctx.pusher_problem})", hint)]
    holder = raw.get("holder")
    if ctx.pusher is None or holder == ctx.pusher.name:
        return []
    if path.endswith("/take.yaml"):  # a newcomer's `leap run` took it as `integrator`
        name = shlex.quote(ctx.pusher.name)
        hint = (f"take the spine's lease in the name the transport gives you: `leap run "
                f"SLICE --holder {name}` (or `leap merge SLICE --holder {name}`)")
    return [Refusal("L9", ref, sha, path, f"pushed by {ctx.pusher.name!r} (from "
                    f"{ctx.pusher.source}), but the record names holder {holder!r}", hint)]


def _check_receipt(ctx: PushContext, ref: str, sha: str, path: str, rec: Receipt,
                   view: LedgerView) -> list[Refusal]:
    from leapgit.ledger import query
    from leapgit.rules import passes

    out = [Refusal("L7.5", ref, sha, path, why, "record the full provenance chain with the "
                   "pass") for why in passes.provenance_problems(rec)]
    out += _builder_only(ctx, ref, sha, path, rec.slice, rec.ball, rec.episode,
                         rec.worker or "", view)
    if rec.outcome == 1 and not rec.claim:
        out.append(Refusal("L7", ref, sha, path, "a receipt that is no claim says 1: a round "
                           "never passes a ball; only a score record does",
                           "record the round as a claim and run "
                           f"`leap score {rec.slice} {rec.ball}`"))
    resume = f"`leap throw {rec.slice} --ball {rec.ball} --resume` starts a new episode"
    if query.throw(view, rec.slice, rec.ball, rec.episode) is None:
        out.append(Refusal("L6", ref, sha, path, f"episode {rec.episode} of "
                           f"{rec.slice}/{rec.ball} was never thrown", "throw the ball first"))
    if rec.round > 1 and not view.exists(
            layout.receipt_path(rec.slice, rec.ball, rec.episode, rec.round - 1)):
        out.append(Refusal("L6", ref, sha, path, f"round {rec.round} without round "
                           f"{rec.round - 1}", "record rounds in order"))
    ended = query.checkpoint(view, rec.slice, rec.ball, rec.episode)
    if ended is not None and ended.rounds_used < rec.round:
        out.append(Refusal("L6", ref, sha, path, f"episode {rec.episode} of "
                           f"{rec.slice}/{rec.ball} already ended with a checkpoint", resume))
    prior = [r for r in query.receipts(view, rec.slice, rec.ball, rec.episode)
             if r.round < rec.round]
    if any(r.outcome == -1 for r in prior):
        out.append(Refusal("L6", ref, sha, path, f"episode {rec.episode} of "
                           f"{rec.slice}/{rec.ball} ended with a refuse (-1)", resume))
    from leapgit.ledger import history
    from leapgit.rules.episodes import ends_episode

    graded = history.graded_last(view, rec.slice, rec.ball, rec.episode, rec.round - 1)
    if graded is not None and ends_episode(graded):  # T7.6: findings go back to the builder
        out.append(Refusal("L6", ref, sha, path, f"score {graded.score} refused round "
                           f"{rec.round - 1} of episode {rec.episode} of {rec.slice}/{rec.ball}"
                           " (-1): the builder's next round cannot undo the grade",
                           f"respec the ball (`leap ball respec {rec.slice} {rec.ball} "
                           "FILE`) and throw it again"))
    return out


def _check_throw(ctx: PushContext, ref: str, sha: str, path: str, rec: ThrowRecord,
                 view: LedgerView) -> list[Refusal]:
    """A new episode only once the previous one ended: at a checkpoint or a held last round
    (0), or a refuse (-1), its receipt's or its score's; never while it is in flight (L3),
    never after a pass (L8). The ball's standing is derived as `leap throw` derives it."""
    from leapgit.ledger import query
    from leapgit.rules.episodes import Episode, check_resumed_from
    from leapgit.rules.readiness import own_state, scored

    slice_id, ball_id, number = rec.slice, rec.ball, rec.episode
    backwards = check_resumed_from(rec)
    if backwards is not None:
        return [Refusal("L6", ref, sha, path, backwards,
                        f"name episode {number - 1} (or none) in resumed_from")]
    if number == 1:
        return []
    name = f"episode {number - 1} of {slice_id}/{ball_id}"
    previous = query.throw(view, slice_id, ball_id, number - 1)
    if previous is None:
        return [Refusal("L6", ref, sha, path, f"{name} was never thrown",
                        "number episodes without gaps")]
    episode = Episode(previous, tuple(query.receipts(view, slice_id, ball_id, number - 1)),
                      query.checkpoint(view, slice_id, ball_id, number - 1))
    from leapgit.ledger import history
    from leapgit.rules.passes import standing
    from leapgit.rules.stack import restacks

    if restacks(view, previous, rec):
        return []  # L5, L8: its stack went stale; it starts afresh on the passes that stand
    # the pass as it stood before this throw (a later throw supersedes it, rules.passes)
    passed = standing(history.scores(view, slice_id, ball_id),
                      history.reopens(view, slice_id, ball_id)) \
        if history.has(view, slice_id, ball_id, "scores") else None
    state = "pass" if passed is not None and passed.episode == number - 1 else \
        own_state(episode, *scored(view, slice_id, ball_id, episode, ctx.config.round_cap))
    if state == "pass":
        return [Refusal("L8", ref, sha, path, f"{name} already passed (1)",
                        "a passed ball is merged, not thrown again")]
    if state not in ("hold", "refuse"):
        return [Refusal("L3", ref, sha, path, f"{name} is still in flight; a new episode "
                        "starts only after a checkpoint (0) or a refuse (-1)",
                        f"close its rounds, then `leap throw {slice_id} --ball {ball_id} "
                        "--resume`")]
    return []


def _check_checkpoint(ctx: PushContext, ref: str, sha: str, path: str, rec: Checkpoint,
                      view: LedgerView) -> list[Refusal]:
    """L6: a checkpoint is the durable end of an episode whose last round reached the round
    limit at 0, written with that round's receipt; it cannot close an episode early."""
    from leapgit.ledger import query

    slice_id, ball_id, number, used = rec.slice, rec.ball, rec.episode, rec.rounds_used
    builder = _builder_only(ctx, ref, sha, path, slice_id, ball_id, number, None, view)
    if builder:
        return builder
    receipts = query.receipts(view, slice_id, ball_id, number)
    last = receipts[-1] if receipts else None
    limit = ctx.config.round_cap
    if last is not None and last.round == used and last.outcome == 0 and used >= limit:
        return []

    # issue 14 item 9: a builder that failed the same way twice ends its episode early, at 0
    if rec.reason == STUCK and last is not None and last.round == used and used >= 2 \
            and len(receipts) >= 2 and receipts[-2].round == used - 1 \
            and last.outcome == 0 and receipts[-2].outcome == 0:
        return []
    return [Refusal("L6", ref, sha, path, f"a checkpoint after round {used} of "
                    f"{len(receipts)} recorded in episode {number} of {slice_id}/{ball_id}; "
                    f"an episode checkpoints only at round {limit}, with a 0",
                    f"record the rounds; the last (`leap round {slice_id} {ball_id} --outcome "
                    "0 --evidence TEXT`) writes the checkpoint at the limit")]


def _check_red(ctx: PushContext, ref: str, sha: str, path: str, rec: RedRecord,
               view: LedgerView) -> list[Refusal]:
    """T7.1, T9: red comes before the build, and a later red only adds to the frozen set:
    it descends from the previous red and keeps every test that red froze, byte for byte.
    Otherwise a red recorded after the rounds could freeze a weakened test."""
    from leapgit.ledger.history import reds

    hint = "record red before the build; a weaker test is a respec, never a new red"
    if rec.carries is not None:  # L5: a restack's red, carried onto the fresh stack base
        from leapgit.ledger import query
        from leapgit.rules.stack import carry_problems

        ball = query.load_ball(view, rec.slice, rec.ball)
        base = query.load_slice(view, rec.slice).base
        return [Refusal("T7.1", ref, sha, path, why, "`leap red SLICE BALL --carry` carries "
                        "the red onto the fresh stack base")
                for why in carry_problems(ctx.objects, view, rec, base, ball)]
    rounds = recorded_rounds(view, rec.slice, rec.ball).receipts
    out = []
    if rounds:
        out.append(Refusal("T7.1", ref, sha, path, f"{rec.slice}/{rec.ball} already has "
                           f"{len(rounds)} round(s) in its current episode: red comes "
                           "first, before the build", hint))
    if rec.replaces is not None:
        return out + _check_replacing(ref, sha, path, rec, view)
    earlier = [r for r in reds(view, rec.slice, rec.ball) if r.red < rec.red]
    if not earlier:
        return out
    prev = earlier[-1]
    if ctx.objects.has(prev.commit) and ctx.objects.has(rec.commit) and \
            not ctx.objects.is_ancestor(prev.commit, rec.commit):
        out.append(Refusal("T7.1", ref, sha, path, f"red {rec.red} at {rec.commit[:12]} does "
                           f"not descend from red {prev.red} at {prev.commit[:12]}", hint))
    now = rec.frozen()
    for r in earlier:
        out.extend(Refusal("T7.1", ref, sha, path, f"red {rec.red} changes {test.path}, "
                           f"frozen by red {r.red} as {test.blob[:12]}: the frozen set only "
                           "grows", hint)
                   for test in r.tests if now.get(test.path, ABSENT) != test.blob)
    return out


def _check_finding_red(ctx: PushContext, ref: str, sha: str, path: str, rec: RedRecord,
                       view: LedgerView) -> list[Refusal]:
    """T7.6: a finding's red answers a score that refused on the tribunal's findings: that
    score is the ball's latest, of the episode the red names; the red is built on the
    scored candidate, its one parent, and only adds new test files (the contract's frozen
    tests stay as they were); one red a score."""
    from leapgit.ledger import history
    from leapgit.rules.episodes import answers_findings

    name, hint = f"{rec.slice}/{rec.ball}", f"`leap run {rec.slice}` asks the test author for it"
    scores = history.scores(view, rec.slice, rec.ball) \
        if history.has(view, rec.slice, rec.ball, "scores") else []
    score = next((s for s in scores if s.score == rec.answers), None)
    if score is None or not answers_findings(score) or score.episode != rec.episode:
        return [Refusal("T7.6", ref, sha, path, f"red {rec.red} of {name} answers score "
                        f"{rec.answers}, which is no refusal on the tribunal's findings in "
                        f"episode {rec.episode}", hint)]
    out = []
    if scores[-1].score != score.score:
        out.append(Refusal("T7.6", ref, sha, path, f"red {rec.red} of {name} answers score "
                           f"{score.score}, not the latest ({scores[-1].score})", hint))
    if rec.base != score.commit:
        out.append(Refusal("T7.6", ref, sha, path, f"red {rec.red} is built on "
                           f"{rec.base[:12]}, not on the scored candidate {score.commit[:12]}",
                           hint))
    twin = [r for r in history.finding_reds(view, rec.slice, rec.ball, rec.episode or 0)
            if r.answers == rec.answers and r.red != rec.red]
    if twin:
        out.append(Refusal("T7.6", ref, sha, path, f"score {score.score} is answered by red "
                           f"{twin[0].red} already", "one finding red a score"))
    if rec.replaces is not None:
        out.append(Refusal("T7.6", ref, sha, path, f"red {rec.red} answers score "
                           f"{rec.answers} and replaces red {rec.replaces}: a finding's red "
                           "only adds", hint))
    from leapgit.ledger import query
    from leapgit.slices.diff import out_of_scope

    ball = query.load_ball_version(view, rec.slice, rec.ball, score.spec_version)
    out.extend(Refusal("L4", ref, sha, path, f"red {rec.red} adds {p}, outside the scope of "
                       f"{name}", hint) for p in out_of_scope([t.path for t in rec.tests], ball))
    # judged here when the commit came first, else when the branch brings it (not_rounds)
    out.extend(Refusal("T7.6", ref, sha, path, why, hint)
               for why in finding_red_problems(ctx.objects, rec) or [])
    return out


def _check_replacing(ref: str, sha: str, path: str, rec: RedRecord, view: LedgerView
                     ) -> list[Refusal]:
    """T7.1: a red replaces the reds before it only while nothing was built on them: the
    one just before it, and no round recorded in any episode of the ball."""
    from leapgit.ledger import query

    name = f"{rec.slice}/{rec.ball}"
    if rec.replaces != rec.red - 1:
        return [Refusal("T7.1", ref, sha, path, f"red {rec.red} of {name} replaces red "
                        f"{rec.replaces}: a red replaces the one just before it",
                        "name the red just before it in `replaces`")]
    built = [e for e in query.episodes(view, rec.slice, rec.ball)
             if query.receipts(view, rec.slice, rec.ball, e)]
    if built:
        return [Refusal("T7.1", ref, sha, path, f"red {rec.red} of {name} replaces red "
                        f"{rec.replaces}, but episode {built[0]} already built rounds on "
                        "it: a red is replaced only before the first round",
                        "a weaker test is a respec, never a new red")]
    return []


def _check_abandon(ref: str, sha: str, path: str, slice_id: str, view: LedgerView
                   ) -> list[Refusal]:
    """An abandon record ends a cut slice that never merged (L8: a merged slice is written
    truth on the spine)."""
    if not view.exists(layout.slice_path(slice_id)):
        return [Refusal("L8", ref, sha, path, f"abandons slice {slice_id}, which was never cut",
                        "only a slice the ledger holds can be abandoned")]
    if view.exists(layout.merge_path(slice_id)):
        return [Refusal("L8", ref, sha, path, f"abandons slice {slice_id}, which is merged",
                        "change its files in a new slice")]
    return []


def _thrown_abandoned(ref: str, sha: str, path: str, slice_id: str, view: LedgerView
                      ) -> list[Refusal]:
    """L3: the balls of an abandoned slice are thrown no more."""
    if not view.exists(layout.abandon_path(slice_id)):
        return []
    return [Refusal("L3", ref, sha, path, f"a throw of slice {slice_id}, which is abandoned "
                    f"({layout.abandon_path(slice_id)})", "cut a new slice for the work")]


def _red_first(ctx: PushContext, ref: str, sha: str, path: str, rec: RedRecord,
               view: LedgerView) -> list[Refusal]:
    """T7.1, L6: red comes before the build, also when no receipt records the build yet:
    the commits base..red are the red test, and none of them is a round (a red naming the
    builder's fifth commit would make its rounds stop counting). A red whose commit the
    server does not hold yet is judged again with the ball branch that brings it
    (``balls.check_red_first``)."""
    if not ctx.objects.has(rec.commit):
        return []
    base = recorded_base(view, rec.slice, rec.ball).commit
    ahead = ctx.objects.new_commits(rec.commit, [base])
    return [Refusal("T7.1", ref, sha, path, f"the round commit {commit[:12]} ({what}) comes "
                    f"before red {rec.red} at {rec.commit[:12]}: red comes first, before the "
                    "build", "record red before the build; the rounds count from the base")
            for commit, what in hidden_rounds(ahead, recorded_rounds(view, rec.slice,
                                                                     rec.ball), rec.ball,
                                              rec.slice)]
