"""Check a whole push: every ref update against the rules of its kind. The one entry point
shared by ``pre-receive`` (the authority), ``pre-push`` (early, on the client) and the CLI."""

from __future__ import annotations

from leapgit.hookimpl.rules.context import PushContext
from leapgit.hookimpl.rules.refusal import Refusal


def check_push(ctx: PushContext) -> list[Refusal]:
    from leapgit.hookimpl.rules.balls import ball_of_ref, check_ball_update
    from leapgit.hookimpl.rules.ledger import check_ledger_update
    from leapgit.hookimpl.rules.signatures import check_signatures
    from leapgit.hookimpl.rules.spine import check_spine_update

    out: list[Refusal] = []
    # The ledger first: spine and ball checks read the ledger as this push leaves it.
    for upd in sorted(ctx.updates, key=lambda u: u.ref != ctx.config.ledger_ref):
        if upd.ref == ctx.config.ledger_ref:
            out.extend(check_ledger_update(ctx, upd))
        elif upd.ref == ctx.spine_ref:
            out.extend(check_spine_update(ctx, upd))
        elif ball_of_ref(ctx.config, upd.ref) is not None:
            out.extend(check_ball_update(ctx, upd))
    out.extend(check_signatures(ctx))  # S1-S6, only when the spine's config requires them
    return out


def report_lines(hook: str, refusals: list[Refusal], notes: list[str]) -> list[str]:
    lines = [f"leap {hook}: note: {n}" for n in notes]
    if not refusals:
        return lines
    count = len(refusals)
    lines.append(f"leap {hook}: push refused, {count} violation{'s' * (count != 1)} "
                 "(no ref was updated):")
    lines.extend(f"leap {hook}:   {r.line()}" for r in refusals)
    return lines
