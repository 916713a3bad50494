"""Ref names: only the exact names of the protected refs reach them (issue 18 F2), and no
ref makes plain git show bytes no rule judged (F3).

A protected ref is the spine, the ledger, or a branch under the ball prefix. On a server
whose filesystem folds case (macOS, Windows, ext4 casefold) the loose ref
``refs/heads/MAIN`` is the file ``refs/heads/main``, and a name that only Unicode
normalisation tells apart may be one file too: a push to it would replace the spine or
the ledger unchecked, after which the hook reads the pusher's config and signer policy.
So every ref whose name, folded (NFKC, then case folding, then NFKC again: Unicode's
caseless match), equals a protected name or starts with the folded ball prefix is refused
unless it is that exact name. Deletions too: deleting the variant deletes the original.

F3: git on the server and in every clone shows the object of a ``refs/replace/*`` ref in
place of the one it replaces (`git show main:...`, `git archive`, `git log leap/ledger`),
prints ``refs/notes/*`` beside commits, and resolves a short name such as ``main`` or
``leap/ledger`` to ``refs/<name>`` and ``refs/tags/<name>`` before ``refs/heads/<name>``.
So replace and notes refs are refused, and so is a tag or top-level ref whose short name
(folded) is the spine's, the ledger's, or anything under ``leap/`` or the ball prefix.
Deleting one is accepted: that removes the mask.
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
        found = _folded_onto(ctx, upd) or _masking(ctx, upd)
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


MASKING = {
    "refs/replace/": ("a replace ref: git would show its object in place of the one it "
                      "replaces, bytes no rule judged", "replace objects are not accepted "
                      "here; bring the change through the ball, ledger and spine rules"),
    "refs/notes/": ("a notes ref: git prints notes beside commits (`git log`), and no rule "
                    "judges them", "keep notes local; the ledger holds the records"),
}
# where git's short-name lookup finds nothing before refs/heads/ (refs/<name>, then
# refs/tags/<name>, come first; refs/remotes/ comes after)
UNSHADOWING = ("refs/heads/", "refs/remotes/")


def _masking(ctx: PushContext, upd: RefUpdate) -> Refusal | None:
    if upd.new is None or upd.ref in (ctx.spine_ref, ctx.config.ledger_ref):
        return None  # a deletion removes the mask
    for prefix, (why, hint) in MASKING.items():
        if upd.ref.startswith(prefix):
            return Refusal("L8", upd.ref, upd.new, None, why, hint, "masking-ref")
    if upd.ref.startswith(UNSHADOWING):
        return None
    short = upd.ref.removeprefix("refs/tags/") if upd.ref.startswith("refs/tags/") \
        else upd.ref.removeprefix("refs/")
    shadowed = _shadowed(ctx, short)
    if shadowed is None:
        return None
    return Refusal("L8", upd.ref, upd.new, None, f"its short name {short!r} shadows "
                   f"{shadowed}: git resolves `{short}` to this ref first, on the server and "
                   "in every clone", "name tags and refs so that no short name of the spine, "
                   "the ledger or leap/ resolves to them", "masking-ref")


def _shadowed(ctx: PushContext, short: str) -> str | None:
    folded = fold(short)
    ledger = ctx.config.ledger_ref
    for name, ref in ((ctx.config.spine, ctx.spine_ref),
                      (ledger.removeprefix("refs/heads/") if ledger.startswith("refs/heads/")
                       else ledger.removeprefix("refs/"), ledger)):
        if folded == fold(name):
            return ref
    for prefix in ("leap/", f"{ctx.config.ball_branch_prefix}/"):
        if folded.startswith(fold(prefix)):
            return f"the refs under refs/heads/{prefix}"
    return None
