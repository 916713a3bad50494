"""Signature rules (S1-S6, ``leapgit.signing``), enforced when the spine's config says
``signing: {require: true}``: every new ledger commit, ball round and spine merge is signed
by a key the spine's policy names, valid at the commit's time and now, holding the role its
records need; the builder never grades itself; one integrator key per lease; an admin
signs every policy change. Each refusal names the rule, the commit, the key and the role."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from leapgit.rules.balls import MALFORMED, ball_of_ref
from leapgit.rules.context import PushContext, RefUpdate
from leapgit.rules.refusal import Refusal
from leapgit.rules.signed_ledger import (
    builds_and_grades,
    check_ledger_signatures,
    claimed_rounds,
    ledger_actors,
    round_key,
)
from leapgit.rules.signed_spine import check_spine_signatures, unparsable_policy
from leapgit.rules.signing_history import blob_at
from leapgit.signing import POLICY_PATH, roles
from leapgit.signing.policy import Policy, Standing
from leapgit.signing.verify import SignatureProblem, check_many, signature_of, standing

if TYPE_CHECKING:
    from dulwich.objects import Commit

    from leapgit.rules.signed_ledger import LedgerActors

SIGN_HINT = "sign with a key the spine's .leap/allowed_signers names {role}:<name>"


@dataclass
class Judge:
    """One push's signature checks: the policy before the push, the push's clock.

    The audit (``signing.replay``) runs the same checks over history, one landed commit at
    a time: there ``now`` is None (each signature is judged at its own time; no push clock
    exists), ``actors`` is the ledger's builders and graders up to that commit and
    ``policy_held`` whether a policy was in force there."""

    ctx: PushContext
    policy: Policy
    now: int | None = field(default_factory=lambda: int(time.time()))
    actors: LedgerActors | None = None
    # a policy was in force before the push (S6: only the spine's first policy approves
    # itself); None: the spine's tip tells. The audit says it from the policies in force.
    policy_held: bool | None = None
    builders: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    graders: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)

    def times(self) -> tuple[int, ...]:
        """The push's clock, checked besides each signature's own time (none in the audit)."""
        return () if self.now is None else (self.now,)

    def when(self, commit: Commit) -> int:
        """The time a commit is judged at: the push's, else the commit's own."""
        return self.now if self.now is not None else int(commit.commit_time)

    def ledger_actors(self) -> LedgerActors:
        if self.actors is None:
            self.actors = ledger_actors(self.ctx)
        return self.actors

    def names_of(self, fp: str) -> frozenset[str]:
        """The principal names the policy gives a key (``builder:alice`` -> alice): one
        person may hold several keys (S4 compares people, not only keys)."""
        return frozenset(n for k in self.policy.entries(fp) for n in k.names)

    def acted(self, actors: Mapping[str, str], fp: str) -> str | None:
        """What ``fp``, or another key of the same person, did among ``actors``."""
        if fp in actors:
            return actors[fp]
        names = self.names_of(fp)
        for other, what in actors.items():
            shared = names & self.names_of(other)
            if shared:
                return f"is {', '.join(sorted(shared))}, as key {other}, which {what}"
        return None

    def signed(self, ref: str, commit: Commit, what: str, need: frozenset[str],
               path: str | None = None) -> Standing | Refusal:
        """The key's standing, or a refusal saying what the signature lacks."""
        try:
            return standing(self.policy, signature_of(commit), *self.times())
        except SignatureProblem as exc:
            key = f" (key {exc.fingerprint})" if exc.fingerprint and \
                exc.fingerprint not in exc.reason else ""
            return Refusal(exc.rule, ref, commit.id.decode(), path,
                           f"{exc.reason}{key}; {what} needs a key with role "
                           f"{' or '.join(sorted(need))}", exc.problems[0].hint or "",
                           exc.kind)

    def lacks(self, ref: str, commit: Commit, who: Standing, need: frozenset[str],
              what: str, path: str | None = None) -> Refusal | None:
        if who.roles & need:
            return None
        role = " or ".join(sorted(need))
        held = ", ".join(sorted(who.roles)) or "none"
        return Refusal("S3", ref, commit.id.decode(), path, f"{what} signed by {who.who()}, "
                       f"which lacks role {role} (holds: {held})",
                       SIGN_HINT.format(role=sorted(need)[0]), "missing-role")


def check_signatures(ctx: PushContext) -> list[Refusal]:
    if not ctx.config.signing_required:
        return []
    _verify_up_front(ctx)
    return judge_push(Judge(ctx, ctx.signing_policy()))


def judge_push(judge: Judge) -> list[Refusal]:
    """S1-S6 on every ref update of the judge's push (pre-receive, pre-push, the audit)."""
    ctx = judge.ctx
    out: list[Refusal] = []
    for upd in ctx.updates:
        if upd.new is None or not ctx.objects.has(upd.new):
            continue
        if upd.ref == ctx.config.ledger_ref:
            out.extend(check_ledger_signatures(judge, upd))
        elif upd.ref == ctx.spine_ref:
            out.extend(check_spine_signatures(judge, upd))
        elif ball_of_ref(ctx.config, upd.ref) not in (None, MALFORMED):
            out.extend(_check_rounds(judge, upd))
    return out


def _verify_up_front(ctx: PushContext) -> None:
    """Every pushed commit's signature, checked side by side before the rules read them."""
    spine = ctx.objects.ref(ctx.spine_ref)
    commits = []
    for upd in ctx.updates:
        if upd.new is not None and ctx.objects.has(upd.new):
            stop = [x for x in (upd.old, None if upd.ref == ctx.spine_ref else spine) if x]
            commits.extend(ctx.objects.new_commits(upd.new, stop))
    check_many(commits)


def _check_rounds(judge: Judge, upd: RefUpdate) -> list[Refusal]:
    """S1-S3 on ball branches: every round a builder's signed commit, so that who built a
    ball is known when its grading is pushed (S4)."""
    assert upd.new is not None

    ctx = judge.ctx
    ball = ball_of_ref(ctx.config, upd.ref)
    assert ball is not None

    spine = ctx.objects.ref(ctx.spine_ref)
    rounds = claimed_rounds(judge, ball, upd.new)
    out: list[Refusal] = []
    for commit in ctx.objects.new_commits(upd.new, [x for x in (upd.old, spine) if x]):
        found = check_round(judge, upd.ref, commit, ball)
        if not found and commit.id.decode() in rounds:
            found = round_key(judge, upd.ref, commit, ball)
        out.extend(found)
    out.extend(_round_policy(judge, upd.ref, upd.new, spine))
    return out


def _round_policy(judge: Judge, ref: str, tip: str, spine: str | None) -> list[Refusal]:
    """S6: a ball's candidate whose policy bytes differ from the spine's parses."""
    store = judge.ctx.objects.store
    tree = judge.ctx.objects.commit(tip).tree
    before = blob_at(store, judge.ctx.objects.commit(spine).tree, POLICY_PATH) \
        if spine else None
    if blob_at(store, tree, POLICY_PATH) in (None, before):
        return []
    broken = unparsable_policy(judge, ref, tip, tree, POLICY_PATH)
    return [broken] if broken is not None else []


def check_round(judge: Judge, ref: str, commit: Commit,
                ball: tuple[str, str] | None) -> list[Refusal]:
    """One ball round: signed (S1-S2) by a builder (S3) who never graded the ball (S4)."""
    need = frozenset({roles.BUILDER})
    who = judge.signed(ref, commit, "a ball round", need)
    if isinstance(who, Refusal):
        return [who]
    lack = judge.lacks(ref, commit, who, need, "a ball round")
    if lack is not None:
        return [lack]
    if ball is None:
        return []
    return builds_and_grades(judge, ref, commit.id.decode(), who, None, "round", *ball)
