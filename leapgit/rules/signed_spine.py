"""Signature rules on the spine: each new first-parent commit signed by an integrator key
(S1-S3), the key that took the open lease (S5); no commit of a merge's candidate signed by
one of the ball's graders (S4); new policy bytes signed by an admin (S6).

S6 in detail: a spine commit that changes ``.leap/allowed_signers`` or ``.leap/config.yaml``
(the config holds ``signing.require``) is accepted when it, or the commit among the pushed
ones that first wrote those exact bytes (the ball's round), is signed by a key holding
``admin`` in the policy before the push. Only when the spine held no policy at all (its
first arrival) do the admins of the new policy itself sign for it; a policy in force with
no admin valid now is refused ("no admin in force"), never taken over. New policy bytes
must parse, or every later push would fail.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from leapgit.errors import LeapError
from leapgit.ledger import layout, query
from leapgit.records.trailers import parse
from leapgit.rules.context import RefUpdate
from leapgit.rules.refusal import Refusal
from leapgit.rules.signed_ledger import builds_and_grades
from leapgit.rules.signing_history import adding_commit, blob_at, policy_at
from leapgit.rules.stack import stack_problems
from leapgit.signing import POLICY_PATH, roles
from leapgit.signing.policy import Policy, Standing
from leapgit.signing.verify import SignatureProblem, signature_of, signer_fingerprint, standing

if TYPE_CHECKING:
    from dulwich.objects import Commit

    from leapgit.rules.signatures import Judge

POLICY_FILES = (POLICY_PATH, ".leap/config.yaml")
ADMIN = frozenset({roles.ADMIN})


def check_spine_signatures(judge: Judge, upd: RefUpdate) -> list[Refusal]:
    assert upd.new is not None
    ctx = judge.ctx
    if upd.old is None or not ctx.objects.has(upd.old):
        return []  # the spine's first push: nothing to hold it to (spine rules note it)
    new = {c.id.decode(): c for c in ctx.objects.new_commits(upd.new, [upd.old])}
    line: list[Commit] = []
    sha: str | None = upd.new
    while sha and sha in new:
        line.append(new[sha])
        sha = new[sha].parents[0].decode() if new[sha].parents else None
    taker = _lease_key(judge)
    out: list[Refusal] = []
    for commit in reversed(line):
        who = judge.signed(upd.ref, commit, "a spine merge", frozenset({roles.INTEGRATOR}))
        if isinstance(who, Refusal):
            out.append(who)
        else:
            out.extend(_integrator(judge, upd.ref, commit, who, taker))
        out.extend(_merged_rounds(judge, upd, commit))
        out.extend(policy_change(judge, upd.ref, commit, list(new.values())))
    return out


def merge_ball(commit: Commit) -> tuple[str, str] | None:
    """(slice, ball) an integration merge names in its trailers, or None."""
    named = parse(commit.message)
    slice_id, ball_id = named.slice, named.ball
    return (slice_id, ball_id) if slice_id and ball_id else None


def _merged_rounds(judge: Judge, upd: RefUpdate, commit: Commit) -> list[Refusal]:
    """S1-S4 on the rounds a merge brings in through its second parent that the server has
    not judged on a ball branch: a builder's signed rounds, never a grader's. S4 again on
    every commit of the candidate, those judged on the ball branch too: a round and its
    builder's own pass pushed at once (git runs pre-receive for two refs side by side, each
    reading the other ref as it was) both land; the spine, one ref moved by compare and
    swap, is where the ledger the merge needs is read whole."""
    from leapgit.rules.signatures import check_round

    if len(commit.parents) < 2:
        return []
    ctx = judge.ctx
    ball = merge_ball(commit)
    judged = [commit.parents[0].decode()]  # the spine line and what it merged: judged
    if ball is not None:
        branch = f"refs/heads/{ctx.config.ball_branch(*ball)}"
        pushed = ctx.update_of(branch)
        tip = pushed.new if pushed is not None and pushed.new else ctx.objects.ref(branch)
        if tip is not None and ctx.objects.has(tip):
            # its rounds were checked when pushed, or are in this push: a pushed ball tip
            # counts because this run judges every round from its stored tip on (F1: an
            # ``<old>`` other than the stored tip is refused, ``PushContext.missing_tip``)
            judged.append(tip)
    out: list[Refusal] = []
    stacked = stack_commits(judge, ball)
    for parent in commit.parents[1:]:
        unjudged = {c.id for c in ctx.objects.new_commits(parent.decode(), judged)}
        for rnd in ctx.objects.new_commits(parent.decode(), judged[:1]):
            if rnd.id in stacked:
                continue  # L5: the throw's stack base, no round of the ball (review r2)
            if rnd.id in unjudged:
                out.extend(check_round(judge, upd.ref, rnd, ball))
            elif ball is not None:
                out.extend(_built_by_a_grader(judge, upd.ref, rnd, commit, ball))
    return out


def stack_commits(judge: Judge, ball: tuple[str, str] | None) -> set[bytes]:
    """The commits of the ball's recorded stack bases that hold their stack (``leap
    throw`` builds each, signed by no one: the slice's base with the dependencies' passed
    candidates merged in, L5, ``rules.stack``): none is a round of the ball. The
    dependencies' own commits below them are not among them: they are judged as theirs."""
    if ball is None:
        return set()
    objects, view = judge.ctx.objects, judge.ctx.ledger_view()
    out: set[bytes] = set()
    try:
        slice_base = query.load_slice(view, ball[0]).base
        for episode in query.episodes(view, *ball):
            thrown = query.throw(view, *ball, episode)
            if thrown is None or not thrown.stack:
                continue
            rec = query.load_ball_version(view, *ball, thrown.spec_version)
            if stack_problems(objects, view, slice_base, rec, thrown.base, thrown.stack):
                continue  # a forged stack is no base: its commits count (and L5 refuses it)
            below = [slice_base, *(e.commit for e in thrown.stack)]
            out.update(c.id for c in objects.new_commits(thrown.base, below))
    except LeapError:
        return out  # what cannot be read proves no base: the commits count as rounds
    return out


def _built_by_a_grader(judge: Judge, ref: str, rnd: Commit, merge: Commit,
                       ball: tuple[str, str]) -> list[Refusal]:
    """S4 on a round judged when its branch was pushed, against the graders in the ledger
    as this push leaves it (its key was verified then: read here without crypto)."""
    fp = signer_fingerprint(rnd)
    if fp is None:
        return []  # S1 refused it when pushed, if signatures were required then
    who = Standing(fp, frozenset(), tuple(sorted(judge.names_of(fp))))
    found = builds_and_grades(judge, ref, rnd.id.decode(), who, None, "round", *ball)
    return [r._replace(message=f"{r.message}; merged by {merge.id.decode()[:12]}")
            for r in found]


def _lease_key(judge: Judge) -> tuple[int, str | None] | None:
    from leapgit.ledger.leases import active_lease  # its module loads the ledger's writer

    ctx = judge.ctx
    lease = active_lease(ctx.ledger_view(), ctx.config.spine)
    tip = ctx.ledger_tip()
    if lease is None or tip is None:
        return None  # the spine rules refuse a merge without a lease (L9)
    taken = adding_commit(ctx.objects.store, tip,
                          layout.lease_path(ctx.config.spine, lease.number, "take"))
    return lease.number, signer_fingerprint(taken) if taken is not None else None


def _integrator(judge: Judge, ref: str, commit: Commit, who: Standing,
                taker: tuple[int, str | None] | None) -> list[Refusal]:
    lack = judge.lacks(ref, commit, who, frozenset({roles.INTEGRATOR}), "a spine merge")
    if lack is not None:
        return [lack]
    if taker is None or taker[1] == who.fingerprint:
        return []
    number, key = taker
    return [Refusal("S5", ref, commit.id.decode(), None, f"a spine merge signed by "
                    f"{who.who()}, but lease {number} was taken by key {key or 'unsigned'}: "
                    "it lacks the role of the lease holder (one integrator key, L9)",
                    "the integrator who took the lease merges, with the same key",
                    "two-integrators")]


def policy_change(judge: Judge, ref: str, commit: Commit, pushed: list[Commit],
                  ) -> list[Refusal]:
    """S6: new policy bytes on the spine were signed by an admin."""
    store = judge.ctx.objects.store
    parent = store[commit.parents[0]].tree if commit.parents else None  # type: ignore[attr-defined]
    out: list[Refusal] = []
    for path in POLICY_FILES:
        blob = blob_at(store, commit.tree, path)
        if blob == (blob_at(store, parent, path) if parent else None):
            continue
        broken = unparsable_policy(judge, ref, commit.id.decode(), commit.tree, path)
        if broken is not None:
            out.append(broken)
            continue
        admins = _admin_policy(judge, commit)
        if admins is None:
            out.append(Refusal("S6", ref, commit.id.decode(), path, "no admin in force: the "
                               "spine's policy names no admin key valid now, so no one may "
                               "change it (a new policy does not approve itself)",
                               "restore an admin out of band (on the server); a policy "
                               "approves itself only on its first arrival", "no-admin"))
            continue
        signers = [commit, *(c for c in _authors(judge, pushed, path, blob)
                             if c.id != commit.id)]
        verdicts = [_as_admin(judge, admins, c) for c in signers]
        if any(v is None for v in verdicts):
            continue
        why = "; ".join(str(v) for v in verdicts)
        unsigned = not any(c.gpgsig for c in signers)  # unsigned mode's audit: not "bad"
        out.append(Refusal("S6", ref, commit.id.decode(), path, f"a policy change not "
                           f"signed by an admin key: {why}", "an admin signs the commit that "
                           "changes the policy (a key the policy names admin:<name>)",
                           "unsigned" if unsigned else "policy-change"))
    return out


def unparsable_policy(judge: Judge, ref: str, sha: str, tree: bytes, path: str,
                      ) -> Refusal | None:
    """S6: new policy bytes that do not parse would stop every later push: refused, with
    the line that fails."""
    if path != POLICY_PATH:
        return None
    try:
        policy_at(judge.ctx.objects.store, tree, path)
    except LeapError as exc:
        return Refusal("S6", ref, sha, path, f"the new policy does not parse: "
                       f"{exc.problems[0].message}", "fix the policy line: principals "
                       "[options] keytype base64-key", "bad-policy")
    return None


def _admin_policy(judge: Judge, commit: Commit) -> Policy | None:
    """The policy whose admins approve a change: the one in force; the arriving one only
    when the spine held no policy at all (its first arrival, self-signed); None when a
    policy is in force but names no admin valid now (no takeover through a new policy)."""
    if judge.policy.holders(roles.ADMIN, judge.when(commit)):
        return judge.policy
    ctx = judge.ctx
    held = judge.policy_held
    if held is None:
        tip = ctx.objects.ref(ctx.spine_ref)
        held = tip is not None and blob_at(ctx.objects.store, ctx.objects.commit(tip).tree,
                                           POLICY_PATH) is not None
    if held:
        return None
    return policy_at(ctx.objects.store, commit.tree) or Policy()


def _authors(judge: Judge, pushed: list[Commit], path: str, blob: bytes | None,
             ) -> list[Commit]:
    """Pushed non-merge commits that wrote exactly these bytes of ``path``."""
    store = judge.ctx.objects.store
    out = []
    for commit in pushed:
        if len(commit.parents) != 1 or blob_at(store, commit.tree, path) != blob:
            continue
        before = store[commit.parents[0]].tree  # type: ignore[attr-defined]
        if blob_at(store, before, path) != blob:
            out.append(commit)
    return out


def _as_admin(judge: Judge, admins: Policy, commit: Commit) -> str | None:
    """None when an admin signed ``commit``; else what its signature lacks."""
    sha = commit.id.decode()[:12]
    try:
        who = standing(admins, signature_of(commit), *judge.times())
    except SignatureProblem as exc:
        key = f" (key {exc.fingerprint})" if exc.fingerprint else ""
        return f"{sha}: {exc.reason}{key}, lacks role admin"
    if roles.ADMIN in who.roles:
        return None
    held = ", ".join(sorted(who.roles)) or "none"
    return f"{sha} signed by {who.who()}, which lacks role admin (holds: {held})"
