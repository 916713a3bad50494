"""Spine rules: no deletion, no force-push (L8); every new commit on the spine's
first-parent line is an integration merge of one ball whose ledger record is a full pass
for exactly the merged candidate (L7, L8), bringing only that ball's scope bytes (L9), and
it lands only under the one open integrator lease, held by the pusher when the transport
names one (L9)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from leapgit.errors import LeapError
from leapgit.records.config import CONFIG_PATH
from leapgit.rules.balls import ID, Base, check_history, check_stack, recorded_rounds, unheld_reds
from leapgit.rules.context import PushContext, RefUpdate, config_problem
from leapgit.rules.refusal import Refusal

if TYPE_CHECKING:
    from dulwich.objects import Commit

    from leapgit.records.scoring import ScoreRecord
    from leapgit.records.types import BallRecord

MERGE_HINT = ("merge one passed ball per commit onto the spine, with `Leap-Slice:` and "
              "`Leap-Ball:` trailers, as the integrator")
# a spine commit made outside an integration: what the pusher runs to keep the change on a
# branch of its own and take it off the clone's spine (the change goes on as a ball of a
# slice, merged by the integrator)
OUTSIDE = "then land the change as a ball of a slice; "


def outside_hint(sha: str, spine: str, below: str) -> str:
    return (f"keep it on a branch of its own and take it off your spine: "
            f"{keep_aside(sha, spine, below)} (a spine that holds commits the kept branch "
            "does not is left as it is), " + OUTSIDE + MERGE_HINT)


def keep_aside(sha: str, spine: str, below: str) -> str:
    """The commands that keep a clone's spine commit ``sha`` (and what it stands on) on a
    branch of its own and take the spine back to ``below`` (the commit under the first
    refused one, so honest merges under it stay; else the remote's spine tip). The spine
    is moved only when all it holds is kept (pushed from another branch, `git push origin
    topic:main`, it holds merges the kept branch lacks), and switched to first (the reset
    moved whatever branch was checked out: a blind review). ``below`` is a commit, never
    ``@{upstream}``: a spine may track no remote, or another than the one that refused."""
    import shlex

    return (f"`{keep_branch(sha)} && git merge-base --is-ancestor {shlex.quote(spine)} {sha} "
            f"&& git switch {shlex.quote(spine)} && git reset --keep {below}`")


def keep_branch(sha: str, where: str | None = None) -> str:
    """The command that keeps ``sha`` on the branch ``kept-<sha12>``: made there, or found
    holding it already (so the commands run again; a branch of that name the user built on
    since is never moved back, which `git branch -f` did)."""
    git = f"git -C {where}" if where else "git"
    name = f"kept-{sha[:12]}"
    return f"({git} branch {name} {sha} 2>/dev/null || {git} merge-base --is-ancestor {sha} {name})"


def check_spine_update(ctx: PushContext, upd: RefUpdate) -> list[Refusal]:
    early = _before_the_line(ctx, upd)
    if early is not None:
        return early
    out = _the_line(ctx, upd)
    if any(OUTSIDE in r.hint for r in out):
        return out  # a commit made outside an integration: refused for that (L8) alone
    return [*_check_lease(ctx, upd), *out]


def check_spine_commits(ctx: PushContext, upd: RefUpdate) -> list[Refusal]:
    """The spine's new commits as ``check_spine_update`` judges them, without the lease the
    push lands under: what a clone asks of its own spine before any work
    (``worktrees.upstream``), whose merge takes the lease before it pushes."""
    early = _before_the_line(ctx, upd)
    return early if early is not None else _the_line(ctx, upd)


def _before_the_line(ctx: PushContext, upd: RefUpdate) -> list[Refusal] | None:
    """What is judged before the new commits: a deletion, a stale or unknown tip, a
    force-push; None when the new commits are to be judged."""
    if upd.new is None:
        return [Refusal("L8", upd.ref, upd.old, None, "the spine cannot be deleted",
                        "keep the spine; merge passed balls onto it")]
    missing = ctx.missing_tip(upd)
    if missing is not None:
        return [missing]
    if upd.old is None:
        ctx.note(f"{upd.ref}: created (the spine's first push is not checked)")
        return []
    if not ctx.objects.has(upd.old):
        ctx.note(f"{upd.ref}: the remote tip {upd.old[:12]} is not here; the server judges it")
        return []
    if not ctx.objects.is_ancestor(upd.old, upd.new):
        return [Refusal("L8", upd.ref, upd.new, None, f"a force-push: {upd.new[:12]} does not "
                        f"descend from the spine's tip {upd.old[:12]}",
                        "fetch the spine and merge onto its tip; never rewrite it")]
    return None


def _the_line(ctx: PushContext, upd: RefUpdate) -> list[Refusal]:
    """Each new commit of the spine's first-parent line, oldest first: an integration merge
    of one passed ball, with a config that parses."""
    judged = _judged(ctx, upd)
    if isinstance(judged, Refusal):
        return [judged]
    out = [r for _, refused in judged for r in refused]
    if not any(OUTSIDE in r.hint for r in out):
        return out
    # one set of commands for every refused commit: each kept only itself (a commit above
    # it was then reset away), and the reset goes below the first line commit refused
    hint = outside_hint(upd.new or "", ctx.config.spine, _below(upd, judged))
    return [r._replace(hint=hint) if OUTSIDE in r.hint else r for r in out]


def reset_target(ctx: PushContext, upd: RefUpdate) -> str:
    """Where a spine whose new commits the rule refuses goes back to: under the first
    commit of its first-parent line refused for anything (a merge's refusals may name only
    the ball commits it brings in), the honest merges under it staying; else the old tip.
    The one answer for the hooks' keep-aside commands and `leap merge`'s (``_publish``)."""
    judged = _judged(ctx, upd)
    assert upd.old is not None
    return upd.old if isinstance(judged, Refusal) else _below(upd, judged)


def _below(upd: RefUpdate, judged: list[tuple[Commit, list[Refusal]]]) -> str:
    assert upd.old is not None
    first = next((commit for commit, refused in judged if refused), None)
    return first.parents[0].decode() if first is not None and first.parents else upd.old


def _judged(ctx: PushContext, upd: RefUpdate) -> list[tuple[Commit, list[Refusal]]] | Refusal:
    """The spine's new first-parent line, oldest first, each commit with its refusals; or
    the refusal of a line that does not lead back to the old tip."""
    assert upd.new is not None and upd.old is not None
    new = {c.id.decode(): c for c in ctx.objects.new_commits(upd.new, [upd.old])}
    line: list[Commit] = []
    sha = upd.new
    while sha != upd.old:
        commit = new.get(sha)
        if commit is None:
            return Refusal("L8", upd.ref, sha, None, "the spine's first-parent line does not "
                           f"lead back to its tip {upd.old[:12]}",
                           outside_hint(upd.new, ctx.config.spine, upd.old))
        line.append(commit)
        sha = commit.parents[0].decode() if commit.parents else ""
    return [(commit, [*check_integration(ctx, upd.ref, commit),
                      *_config_parses(ctx, upd.ref, commit)]) for commit in reversed(line)]


def _config_parses(ctx: PushContext, ref: str, commit: Commit) -> list[Refusal]:
    """New config bytes on the spine parse: every later push is judged by them (a config
    the server cannot read makes it fall back, ``context.fallback_config``; never let one
    land)."""
    path = CONFIG_PATH.as_posix()
    parent = ctx.objects.commit(commit.parents[0].decode()).tree if commit.parents else None
    new = ctx.objects.blob_id_at(commit.tree, path)
    if new is None or (parent is not None and ctx.objects.blob_id_at(parent, path) == new):
        return []
    _config, problem = config_problem(ctx.objects, commit.tree, f"{commit.id.decode()[:12]}:"
                                      f"{path}")
    if not problem:
        return []
    return [Refusal("config", ref, commit.id.decode(), path, f"the new config does not parse: "
                    f"{problem}", "fix .leap/config.yaml (it is checked against "
                    "schemas/config.schema.json) and merge it again", "bad-config")]


def _check_lease(ctx: PushContext, upd: RefUpdate) -> list[Refusal]:
    from leapgit.ledger.leases import active_lease

    if ctx.pusher_problem:
        return [Refusal("L9", upd.ref, upd.new, None, f"a signed push git did not accept "
                        f"({ctx.pusher_problem})", "sign the push with the lease holder's key")]
    lease = active_lease(ctx.ledger_view(), ctx.config.spine)
    if lease is None:
        return [Refusal("L9", upd.ref, upd.new, None, f"no open integrator lease on spine "
                        f"{ctx.config.spine!r} in the ledger", _lease_hint(ctx, upd.new))]
    if ctx.pusher is not None and ctx.pusher.name != lease.holder:
        return [Refusal("L9", upd.ref, upd.new, None, f"pushed by {ctx.pusher.name!r} (from "
                        f"{ctx.pusher.source}), but lease {lease.number} is held by "
                        f"{lease.holder!r}: a second writer", "only the lease holder "
                        "integrates")]
    return []


def _lease_hint(ctx: PushContext, tip: str | None) -> str:
    """What lands the pushed spine under a lease: `leap merge` of the slice its tip merges
    (it takes the lease, and pushes a slice merged in that clone only)."""
    from leapgit.records.trailers import parse

    try:
        named = parse(ctx.objects.commit(tip).message).slice if tip else None
    except (KeyError, ValueError, LeapError):
        named = None
    merge = f"leap merge {named}" if named and ID.fullmatch(named) else "leap merge SLICE"
    return f"`{merge}` pushes the spine under an integrator lease of its own"


def check_integration(ctx: PushContext, ref: str, commit: Commit) -> list[Refusal]:
    """One spine commit: a merge of exactly one fully passed ball candidate."""
    from leapgit.ledger import query
    from leapgit.records.trailers import parse
    from leapgit.rules import passes
    from leapgit.rules.commits import check_message
    from leapgit.slices.diff import escapes, out_of_scope

    sha = commit.id.decode()
    if len(commit.parents) != 2:
        return [Refusal("L8", ref, sha, None, "not an integration merge (a commit on the spine "
                        "must merge one passed ball)",
                        outside_hint(sha, ctx.config.spine, commit.parents[0].decode()
                                     if commit.parents else sha))]
    divided = check_message(ref, commit, "L8")  # which ball it names, read one way only
    if divided:
        return divided
    named = parse(commit.message)
    slice_id, ball_id = named.slice, named.ball
    if not slice_id or not ball_id:
        return [Refusal("L8", ref, sha, None, "the merge names no ball (Leap-Slice, Leap-Ball "
                        "trailers)", MERGE_HINT)]  # an integrator's merge, its trailers left out
    candidate_commit = ctx.objects.commit(commit.parents[1].decode())
    candidate = candidate_commit.tree.decode()
    view = ctx.ledger_view()
    try:
        passed = passes.full_pass(view, slice_id, ball_id, candidate)
        # F5: the spec version that passed, never a later respec's
        ball = query.load_ball_version(view, slice_id, ball_id, passed.spec_version)
    except LeapError as exc:
        rule = exc.problems[0].rule if exc.problems and exc.problems[0].rule else "L7"
        return [Refusal(rule, ref, sha, None, f"{exc.problems[0].message} (candidate tree "
                        f"{candidate[:12]})", "score the ball to a full pass first; a "
                        "trailer is not a record")]
    again = _lands_once(ctx, ref, commit, candidate_commit, passed)
    if again:
        return again
    # the history is judged from the base the episode was thrown from, never the one the
    # pass names (a pass naming its own candidate as its base left every commit unjudged)
    thrown = query.throw(view, slice_id, ball_id, passed.episode)
    base = thrown.base if thrown is not None else passed.base
    history = _candidate_history(ctx, ref, commit, candidate_commit, base, ball,
                                 passed.episode)
    if history:
        return history
    first = ctx.objects.commit(commit.parents[0].decode())
    touched = ctx.objects.touched(first.tree, commit.tree)
    outside = out_of_scope(touched, ball)
    out = [Refusal("L9", ref, sha, path, f"the merge changes a file outside the scope of "
                   f"{slice_id}/{ball_id}", "merge only the candidate's scope bytes")
           for path in outside]
    out.extend(Refusal("L9" if e.in_repo else "L2", ref, sha, e.path, e.message,
                       "merge only plain scope files; re-cut a ball that needs a link")
               for e in escapes(ctx.objects.repo, commit.tree, touched, ball))
    base_tree = ctx.objects.commit(base).tree
    brought = ctx.objects.touched(base_tree, candidate_commit.tree)
    out.extend(_candidate_bytes(ctx, ref, commit, candidate_commit,
                                sorted((touched - set(outside)) | brought), touched))
    return out


def _lands_once(ctx: PushContext, ref: str, merge: Commit, candidate: Commit,
                passed: ScoreRecord) -> list[Refusal]:
    """L8: a pass lands once, and only while its slice is open to land. A ball of an
    abandoned slice lands no more (its files are free for another slice, L4); a pass a merge
    record names, or whose candidate the spine holds already, is merged: merged again over
    a later slice's merge of the same files, its old bytes would roll that slice back (a
    merge that changes no byte rolls nothing back, and is taken)."""
    from leapgit.ledger import history, layout

    sha, head = merge.id.decode(), candidate.id.decode()
    where = f"{passed.slice}/{passed.ball}"
    abandoned = layout.abandon_path(passed.slice)
    view = ctx.ledger_view()
    if view.exists(abandoned):
        return [Refusal("L4", ref, sha, None, f"slice {passed.slice} is abandoned "
                        f"({abandoned}): its balls land no more, and their files are free "
                        "for other slices", "cut a new slice for the work")]
    # the record of this very merge may arrive first (a slice merged in one clone only,
    # published with its ledger): a record names the pass merged elsewhere, or it is this one
    if any(m.ball == passed.ball and m.score == passed.score and m.commit != sha
           for rec in history.merge_records(view, passed.slice) for m in rec.merges):
        return [Refusal("L8", ref, sha, None, f"score {passed.score} of {where} is merged "
                        "already (a merge record names it): a pass lands once, merged again "
                        "it would put its old bytes back over what landed since",
                        "nothing to merge: a byte change reopens the ball, and its new "
                        "candidate is merged once re-scored")]
    first = merge.parents[0].decode()
    # a merge that moves no byte rolls nothing back (a re-scored candidate already landed,
    # merged again by `leap merge`, the way a hint leads back to a landing)
    if merge.tree != ctx.objects.commit(first).tree and ctx.objects.is_ancestor(head, first):
        return [Refusal("L8", ref, sha, None, f"the candidate {head[:12]} of {where} is on "
                        "the spine already: a pass lands once, merged again it would put "
                        "its old bytes back over what landed since",
                        "nothing to merge: a byte change reopens the ball, and its new "
                        "candidate is merged once re-scored")]
    return []


def _candidate_bytes(ctx: PushContext, ref: str, merge: Commit, candidate: Commit,
                     paths: list[str], touched: set[str]) -> list[Refusal]:
    """L8: every path the merge changed, and every path the candidate changed since its
    base, holds the candidate's file: the whole candidate arrives, and only it. A file is
    its bytes and its mode (F5: a flip to 100755 is a change no one scored)."""
    sha, tree = merge.id.decode(), candidate.tree.decode()
    out = []
    for path in paths:
        held = ctx.objects.entry_at(merge.tree, path)
        passed = ctx.objects.entry_at(candidate.tree, path)
        if held == passed:
            continue
        if held is not None and passed is not None and held[1] == passed[1]:
            what = f"the merge holds it as mode {held[0]:o}, the passed candidate {tree[:12]} " \
                f"as {passed[0]:o}"
        else:
            why = "differ from" if path in touched else "do not carry the change of"
            what = f"the merge's bytes {why} the passed candidate {tree[:12]}"
        out.append(Refusal("L8", ref, sha, path, what, "merge the candidate unchanged and "
                           "whole; a changed candidate is re-scored"))
    return out


def _candidate_history(ctx: PushContext, ref: str, merge: Commit, candidate: Commit,
                       base: str, ball: BallRecord, episode: int) -> list[Refusal]:
    """L6, T7.1, L9, L4: the candidate's own history (base..candidate) obeys every
    ball-branch rule, commit by commit, the same check its branch's push gets: a spine push
    cannot carry a fifth round, an edited red test, a merge or a file outside the scope
    (even one a later commit puts back) that no ball branch would have taken; L5: a stacked
    base is a true stack of its dependencies' passed candidates."""
    from leapgit.ledger import query
    from leapgit.rules.episodes import episode_reds

    sha, head = merge.id.decode(), candidate.id.decode()
    if not ctx.objects.has(base) or not ctx.objects.is_ancestor(base, head):
        return [Refusal("L5", ref, sha, None, f"the candidate {head[:12]} does not descend "
                        f"from its recorded base {base[:12]}", "merge the scored candidate")]
    view = ctx.ledger_view()
    thrown = query.throw(view, ball.slice, ball.ball, episode)
    if thrown is not None and thrown.base == base:
        forged = check_stack(ctx.objects, view, ref, sha, ball,
                             Base(base, f"the stack base of throw episode {episode}", thrown))
        if forged:
            return forged
    reds = episode_reds(view, ball.slice, ball.ball, episode)
    unheld = unheld_reds(ctx.objects, reds, head)
    if unheld:  # T7.1, T7.6: the pass's candidate stands on every red of its episode
        rule, why = unheld[0]
        return [Refusal(rule, ref, sha, None, f"{why} ({ball.slice}/{ball.ball}, candidate "
                        f"{head[:12]})", "merge the scored candidate, which holds them")]
    found = check_history(ctx.objects, ref, ball, base, head, reds,
                          ctx.config.round_cap,
                          recorded_rounds(view, ball.slice, ball.ball),
                          landed=merge.parents[0].decode())
    return [r._replace(message=f"{r.message} (in the history of candidate {head[:12]} of "
                       f"{ball.slice}/{ball.ball})") for r in found]
