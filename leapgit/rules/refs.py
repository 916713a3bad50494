"""Ref names: only the exact names of the protected refs reach them (issue 18 F2).

A protected ref is the spine, the ledger, or a branch under the ball prefix. On a server
whose filesystem folds case (macOS, Windows, ext4 casefold) the loose ref
``refs/heads/MAIN`` is the file ``refs/heads/main``, and a name that only Unicode
normalisation tells apart may be one file too: a push to it would replace the spine or
the ledger unchecked, after which the hook reads the pusher's config and signer policy.
So every ref whose name, folded (NFKC, then case folding, then NFKC again: Unicode's
caseless match), equals a protected name or starts with the folded ball prefix is refused
unless it is that exact name. Deletions too: deleting the variant deletes the original.
"""

from __future__ import annotations

import unicodedata

from leapgit.rules.context import PushContext, RefUpdate
from leapgit.rules.refusal import Refusal

FOLD_HINT = "push to the protected ref by its exact name; name other branches so that " \
    "no protected ref folds onto them"


def fold(name: str) -> str:
    """A ref name as a case-folding, normalising filesystem may store it."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


def check_ref_names(ctx: PushContext) -> list[Refusal]:
    out = []
    for upd in ctx.updates:
        found = _folded_onto(ctx, upd)
        if found is not None:
            out.append(found)
    return out


def _folded_onto(ctx: PushContext, upd: RefUpdate) -> Refusal | None:
    name, folded = upd.ref, fold(upd.ref)
    for protected in (ctx.spine_ref, ctx.config.ledger_ref):
        if folded == fold(protected) and name != protected:
            # L8: the spine and the ledger are written only through their own rules
            return _refusal("L8", upd, protected)
    prefix = f"refs/heads/{ctx.config.ball_branch_prefix}/"
    if folded.startswith(fold(prefix)) and not name.startswith(prefix):
        return _refusal("L4", upd, prefix)  # L4: a ball branch is named by the prefix
    return None


def _refusal(rule: str, upd: RefUpdate, protected: str) -> Refusal:
    return Refusal(rule, upd.ref, upd.new or upd.old, None, f"the name folds onto the "
                   f"protected {protected} (case folding, Unicode normalisation): on a "
                   "server whose filesystem folds case it is that ref", FOLD_HINT,
                   "folded-name")
