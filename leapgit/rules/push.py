"""Check a whole push: every ref update against the rules of its kind. The one entry point
shared by ``pre-receive`` (the authority), ``pre-push`` (early, on the client) and the CLI."""

from __future__ import annotations

from leapgit.errors import printable
from leapgit.rules.balls import ball_of_ref, check_ball_update
from leapgit.rules.context import PushContext, RefUpdate
from leapgit.rules.ledger import check_ledger_update
from leapgit.rules.refs import check_ref_names
from leapgit.rules.refusal import Refusal
from leapgit.rules.spine import check_spine_update

# what this clone's `pre-push` says when it refused a push: git sent nothing (a caller of
# `git push` reads it as a refusal, never as a push that may have landed)
NOTHING_SENT = "the server would refuse this push; nothing was sent"


def check_push(ctx: PushContext) -> list[Refusal]:
    out = check_ref_names(ctx)  # F2: only exact names reach a protected ref
    out += _stale(ctx) + _non_commits(ctx)
    if out:
        return out  # nothing else can be judged on a ref that names no commit, or no tip
    # F1: every check reads the other refs as stored (``context``), never as pushed
    for upd in ctx.updates:
        if upd.ref == ctx.config.ledger_ref:
            out.extend(check_ledger_update(ctx, upd) or _ledger_messages(ctx, upd))
        elif upd.ref == ctx.spine_ref:
            out.extend(check_spine_update(ctx, upd))
        elif ball_of_ref(ctx.config, upd.ref) is not None:
            out.extend(check_ball_update(ctx, upd))
    if ctx.config.signing_required:  # S1-S6 (the signing rules load only then)
        from leapgit.rules.signatures import check_signatures

        out.extend(check_signatures(ctx))
    _ledger_first(ctx, out)
    return out


def _ledger_messages(ctx: PushContext, upd: RefUpdate) -> list[Refusal]:
    """L8: a ledger commit's trailers read one way to every reader (``check_message``)."""
    from leapgit.rules.commits import check_message

    if upd.new is None:
        return []
    return [r for c in ctx.objects.new_commits(upd.new, [upd.old] if upd.old else [])
            for r in check_message(upd.ref, c, "L8")]


def _protected(ctx: PushContext, ref: str) -> bool:
    return ref in (ctx.config.ledger_ref, ctx.spine_ref) or \
        ball_of_ref(ctx.config, ref) is not None


def _stale(ctx: PushContext) -> list[Refusal]:
    """F1 (L8): a protected ref moves only from the tip the server stores."""
    found = (ctx.missing_tip(u) for u in ctx.updates if _protected(ctx, u.ref))
    return [r for r in found if r is not None]


def _ledger_first(ctx: PushContext, refusals: list[Refusal]) -> None:
    """A push that carries the ledger and refs refused beside it: those were judged
    against the ledger the server stores, which the pushed one is not (yet)."""
    ledger = ctx.update_of(ctx.config.ledger_ref)
    others = sorted({r.ref for r in refusals if r.ref != ctx.config.ledger_ref})
    if ledger is None or ledger.new is None or not others:
        return
    ctx.note(f"{', '.join(others)}: judged against the ledger the server stores, never the "
             "one this push carries (git may move each ref on its own): push the ledger "
             "first (`leap sync`), then these refs")


def _non_commits(ctx: PushContext) -> list[Refusal]:
    """The ledger, the spine and ball branches name commits; a blob, a tree or an annotated
    tag there is refused, never peeled (a tag would hide what the branch holds)."""
    out = []
    for upd in ctx.updates:
        if upd.new is None:
            continue
        ball = ball_of_ref(ctx.config, upd.ref) is not None
        if not (ball or upd.ref in (ctx.config.ledger_ref, ctx.spine_ref)):
            continue
        kind = ctx.objects.type_of(upd.new)
        if kind is not None and kind != "commit":
            out.append(Refusal("L4" if ball else "L8", upd.ref, upd.new, None,
                               f"points at a {kind}, not a commit",
                               "push a commit to this branch"))
    return out


# the lines of each kind a report shows: a push of 10^4 refs, or of a commit that breaks
# a rule 10^5 times, is answered in a screenful, its count named, never megabytes
MAX_SHOWN = 50


def report_lines(hook: str, refusals: list[Refusal], notes: list[str]) -> list[str]:
    lines = [f"leap {hook}: note: {printable(n)}" for n in notes[:MAX_SHOWN]]  # F9: escaped
    if len(notes) > MAX_SHOWN:
        lines.append(f"leap {hook}: note: ... and {len(notes) - MAX_SHOWN} more notes")
    if not refusals:
        return lines
    count = len(refusals)
    lines.append(f"leap {hook}: push refused, {count} violation{'s' * (count != 1)} "
                 "(no ref was updated):")
    lines.extend(f"leap {hook}:   {r.line()}" for r in refusals[:MAX_SHOWN])
    if count > MAX_SHOWN:
        lines.append(f"leap {hook}:   ... and {count - MAX_SHOWN} more violations (the first "
                     f"{MAX_SHOWN} shown): fix these and push again")
    return lines
