"""Ledger-branch rules: fast-forward only, add-only (L8: written truth), every added record
schema-valid and at the path its content claims, no fifth round (L6), a pass record carries
its whole provenance chain with one candidate hash (L7.5), a receipt never passes (L7), one
integrator lease at a time (L9)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from leapgit.errors import LeapError
from leapgit.hookimpl.objects import oid
from leapgit.hookimpl.rules.context import PushContext, RefUpdate
from leapgit.hookimpl.rules.refusal import Refusal
from leapgit.ledger import layout
from leapgit.records.types import Receipt

if TYPE_CHECKING:
    from dulwich.objects import Commit

    from leapgit.ledger.store import LedgerView

SYNC = "fetch the remote ledger and replay your records on it with `leap sync`"
FIX_RECORD = "write a correction as a new record, never edit or delete one"
_BLOB_MODE = 0o100644


def check_ledger_update(ctx: PushContext, upd: RefUpdate) -> list[Refusal]:
    if upd.new is None:
        return [Refusal("L8", upd.ref, upd.old, None, "the ledger branch cannot be deleted",
                        "keep it: the ledger is written truth")]
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
    for change in tree_changes(ctx.objects.store, old_tree, commit.tree):
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
        before = ctx.ledger_view(parent) if parent else None
        for path, raw in added:
            out.extend(_check_meaning(ctx, ref, sha, path, raw, view, before))
    return out


def _check_added(ctx: PushContext, ref: str, sha: str, path: str, mode: int,
                 blob: bytes) -> Refusal | dict[str, object]:
    from leapgit.records import schema, yamlio

    if mode != _BLOB_MODE:
        return Refusal("L8", ref, sha, path, f"mode {mode:o} is not a plain file",
                       "records are plain YAML files")
    try:
        raw = yamlio.loads(ctx.objects.store[oid(blob)].as_raw_string(), path)
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
    round_no, limit = raw.get("round"), min(ctx.config.round_limit, 4)
    if isinstance(round_no, int) and round_no > limit:
        return Refusal("L6", ref, sha, path, f"round {round_no} exceeds the round limit "
                       f"{limit}: no fifth round", "checkpoint and resume in a new episode")
    return None


def _check_meaning(ctx: PushContext, ref: str, sha: str, path: str, raw: dict[str, object],
                   view: LedgerView, before: LedgerView | None) -> list[Refusal]:
    kind = raw["kind"]
    if kind == "receipt":
        return _check_receipt(ctx, ref, sha, path, Receipt.from_dict(raw), view, before)
    if kind == "score" and raw.get("outcome") == 1:
        from leapgit.hookimpl.rules import passes
        from leapgit.records.scoring import ScoreRecord

        rec = ScoreRecord.from_dict(raw)
        return [Refusal("L7.5", ref, sha, path, why, "score with `leap score`, which writes "
                        "the whole chain") for why in passes.pass_problems(view, rec)]
    if kind == "lease":
        from leapgit.ledger.leases import lease_problems

        return [Refusal("L9", ref, sha, where, what, "one integrator at a time: release the "
                        "open lease before taking the next") for where, what in
                lease_problems(view, str(raw["spine"])) if where == path]
    return []


def _check_receipt(ctx: PushContext, ref: str, sha: str, path: str, rec: Receipt,
                   view: LedgerView, before: LedgerView | None) -> list[Refusal]:
    from leapgit.hookimpl.rules import passes
    from leapgit.ledger import query

    out = [Refusal("L7.5", ref, sha, path, why, "record the full provenance chain with the "
                   "pass") for why in passes.provenance_problems(rec)]
    if rec.outcome == 1 and not rec.claim:
        out.append(Refusal("L7", ref, sha, path, "a receipt that is no claim says 1: a round "
                           "never passes a ball; only a score record does",
                           "record the round as a claim and run `leap score`"))
    resume = f"`leap throw {rec.slice} --ball {rec.ball} --resume` starts a new episode"
    if query.throw(view, rec.slice, rec.ball, rec.episode) is None:
        out.append(Refusal("L6", ref, sha, path, f"episode {rec.episode} of "
                           f"{rec.slice}/{rec.ball} was never thrown", "throw the ball first"))
    if rec.round > 1 and not view.exists(
            layout.receipt_path(rec.slice, rec.ball, rec.episode, rec.round - 1)):
        out.append(Refusal("L6", ref, sha, path, f"round {rec.round} without round "
                           f"{rec.round - 1}", "record rounds in order"))
    if before is not None:
        if before.exists(layout.checkpoint_path(rec.slice, rec.ball, rec.episode)):
            out.append(Refusal("L6", ref, sha, path, f"episode {rec.episode} of "
                               f"{rec.slice}/{rec.ball} already ended with a checkpoint",
                               resume))
        prior = query.receipts(before, rec.slice, rec.ball, rec.episode)
        if prior and prior[-1].outcome == -1:
            out.append(Refusal("L6", ref, sha, path, f"episode {rec.episode} of "
                               f"{rec.slice}/{rec.ball} ended with a refuse (-1)", resume))
    return out
