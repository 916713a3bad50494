"""Signature rules on the ledger: S1-S3 per commit and record, S4 (the builder and the
thrower never grade the ball), S5 (a lease is released by the key that took it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from leapgit.errors import LeapError
from leapgit.hookimpl.rules.context import RefUpdate
from leapgit.hookimpl.rules.refusal import Refusal
from leapgit.ledger import layout
from leapgit.signing import roles
from leapgit.signing.history import added_records, added_under, adding_commit, ledger_line
from leapgit.signing.verify import signer_fingerprint

if TYPE_CHECKING:
    from dulwich.objects import Commit

    from leapgit.hookimpl.rules.signatures import Judge
    from leapgit.signing.policy import Standing


def _load(data: bytes, path: str) -> dict[str, Any] | None:
    from leapgit.records import yamlio

    try:
        raw = yamlio.loads(data, path)
    except LeapError:
        return None  # the ledger rules refuse it (L8)
    return raw if isinstance(raw, dict) else None


def check_ledger_signatures(judge: Judge, upd: RefUpdate) -> list[Refusal]:
    assert upd.new is not None
    out: list[Refusal] = []
    for commit in judge.ctx.objects.new_commits(upd.new, [upd.old] if upd.old else []):
        out.extend(_check_commit(judge, upd.ref, commit))
    return out


def _check_commit(judge: Judge, ref: str, commit: Commit) -> list[Refusal]:
    store = judge.ctx.objects.store
    records = [(p, r) for p, r in added_records(store, commit, _load) if isinstance(r, dict)]
    first = records[0] if records else ("", {})
    need = roles.roles_for(first[1]) if records else frozenset({roles.ADMIN})
    what = f"a {roles.record_key(first[1])} record" if records else "a ledger commit"
    who = judge.signed(ref, commit, what, need, first[0] or None)
    if isinstance(who, Refusal):
        return [who]
    out: list[Refusal] = []
    for path, raw in records:
        key = roles.record_key(raw)
        lack = judge.lacks(ref, commit, who, roles.roles_for(raw), f"a {key} record", path)
        if lack is not None:
            out.append(lack)
            continue
        graded = roles.graded_ball(raw)
        if graded is not None:
            out.extend(_self_grading(judge, ref, commit, who, path, key, *graded))
        if raw.get("kind") == "lease" and raw.get("action") == "release":
            out.extend(_release_by_taker(judge, ref, commit, who, path, raw))
    return out


def _self_grading(judge: Judge, ref: str, commit: Commit, who: Standing, path: str,
                  key: str, slice_id: str, ball_id: str) -> list[Refusal]:
    """S4 (L7, L9, T4; L3): a key that built or threw the ball never grades it."""
    built = builder_keys(judge, slice_id, ball_id, commit.id.decode())
    acted = built.get(who.fingerprint)
    if acted is None:
        return []
    return [Refusal("S4", ref, commit.id.decode(), path, f"a {key} record for "
                    f"{slice_id}/{ball_id} signed by {who.who()}, which {acted}: it lacks the "
                    "role of an independent scorer (the builder never grades itself)",
                    "a scorer whose key never built or threw this ball grades it")]


def builder_keys(judge: Judge, slice_id: str, ball_id: str, ledger_tip: str) -> dict[str, str]:
    """fingerprint -> what it did: signed a round on the ball branch, or a throw, claim
    receipt or checkpoint of the ball in the ledger. Keys are read from the signatures
    without crypto: the server verified each one when it was pushed (S1)."""
    cache_key = (slice_id, ball_id)
    if cache_key in judge._builders:
        return judge._builders[cache_key]
    ctx = judge.ctx
    found: dict[str, str] = {}
    branch = f"refs/heads/{ctx.config.ball_branch(slice_id, ball_id)}"
    pushed = ctx.update_of(branch)
    tip = pushed.new if pushed is not None and pushed.new else ctx.objects.ref(branch)
    if tip is not None:
        spine = ctx.objects.ref(ctx.spine_ref)
        for commit in ctx.objects.new_commits(tip, [spine] if spine else []):
            fp = signer_fingerprint(commit)
            if fp:
                found.setdefault(fp, f"signed round commit {commit.id.decode()[:12]} of it")
    _ledger_builders(judge, slice_id, ball_id, ledger_tip, found)
    judge._builders[cache_key] = found
    return found


def _ledger_builders(judge: Judge, slice_id: str, ball_id: str, tip: str,
                     found: dict[str, str]) -> None:
    store = judge.ctx.objects.store
    episodes = layout.ball_dir(slice_id, ball_id) + "/episodes"
    for commit in ledger_line(store, tip):
        fp = signer_fingerprint(commit)
        if not fp:
            continue
        for path, raw in added_under(store, commit, episodes, _load):
            if isinstance(raw, dict) and roles.record_key(raw) in roles.BUILDING:
                found.setdefault(fp, f"signed the {roles.record_key(raw)} record {path}")


def _release_by_taker(judge: Judge, ref: str, commit: Commit, who: Standing, path: str,
                      raw: dict[str, Any]) -> list[Refusal]:
    """S5: the key that took the lease releases it."""
    take = layout.lease_path(str(raw["spine"]), int(raw["lease"]), "take")
    taken = adding_commit(judge.ctx.objects.store, commit.id.decode(), take)
    taker = signer_fingerprint(taken) if taken is not None else None
    if taker is None or taker == who.fingerprint:
        return []
    return [Refusal("S5", ref, commit.id.decode(), path, f"lease released by {who.who()}, but "
                    f"taken by key {taker}: it lacks the role of this lease's integrator",
                    "the integrator who took the lease releases it, with the same key")]
