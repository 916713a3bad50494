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

import re
import unicodedata

from leapgit.errors import printable
from leapgit.ledger import layout
from leapgit.rules.balls import ball_of_ref
from leapgit.rules.context import PushContext, RefUpdate
from leapgit.rules.refusal import Refusal

FOLD_HINT = "push to the protected ref by its exact name; name other branches so that " \
    "no protected ref folds onto them"


# code points HFS+ (and ext4 casefold before Linux 6.15) ignore in a name: zero-width
# characters, bidi controls, the byte-order mark, the soft hyphen (blind review r1 F4)
_IGNORED = re.compile("[\u00ad\u034f\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]")


def fold(name: str) -> str:
    """A ref name as a case-folding, normalising filesystem may store it."""
    once = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    return _IGNORED.sub("", once)


def check_ref_names(ctx: PushContext) -> list[Refusal]:
    out = []
    folds: dict[str, list[str]] = {}  # folded name -> the stored and pushed refs, built once
    for upd in ctx.updates:
        found = _symbolic(ctx, upd) or _folded_onto(ctx, upd) or \
            _folded_ball(ctx, upd, folds) or _in_the_way(ctx, upd) or _masking(ctx, upd)
        if found is not None:
            out.append(found)
    return out


def _symbolic(ctx: PushContext, upd: RefUpdate) -> Refusal | None:
    """Blind review r2: a symbolic ref on the server (`git symbolic-ref refs/heads/trunk
    refs/heads/main`): receive-pack moves (or deletes) the ref it ends at, which the rules
    would judge under the symbolic name, that is, not at all. A push through one to a
    protected ref, or to a name the checks below refuse, is refused; the target is pushed
    by its own name."""
    # the server's own symbolic refs: a clone's alias of the same name says nothing of it
    target = ctx.objects.symref_target(upd.ref) if ctx.authority else None
    if target is None:
        return None
    aliased = RefUpdate(target, upd.old, upd.new)
    protected = target in (ctx.spine_ref, ctx.config.ledger_ref) or \
        ball_of_ref(ctx.config, target) is not None
    if not protected and not (_folded_onto(ctx, aliased) or _in_the_way(ctx, aliased)
                              or _masking(ctx, aliased)):
        return None
    rule = "L4" if ball_of_ref(ctx.config, target) is not None else "L8"
    # L8: the spine and the ledger move only by their own names, under their own rules
    return Refusal(rule, upd.ref, upd.new or upd.old, None, f"a symbolic ref to {target} on "
                   f"this server: git would move {target} through it, judged by no rule",
                   f"push to {target} by its own name", "symbolic-ref")


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


def _folded_ball(ctx: PushContext, upd: RefUpdate, folds: dict[str, list[str]]
                 ) -> Refusal | None:
    """Blind review r2: ball ids that differ only by case (``S1/a``, ``s1/a``) name one
    branch on a case-folding server. A ball ref is refused when it folds onto a ref the
    server stores, another ref of this push, or a recorded ball's branch, of another exact
    name (a deletion too: it deletes that branch)."""
    prefix = f"refs/heads/{ctx.config.ball_branch_prefix}/"
    found = tuple(upd.ref.removeprefix(prefix).split("/"))
    if not upd.ref.startswith(prefix) or len(found) != 2:
        return None  # no ball branch, or one the ball rules refuse by its shape (L4)
    folded = fold(upd.ref)
    if not folds:
        for name in dict.fromkeys([*ctx.objects.ref_names(), *(u.ref for u in ctx.updates)]):
            folds.setdefault(fold(name), []).append(name)
    other = next((o for o in folds.get(folded, ()) if o != upd.ref), None)
    if other is not None:  # L4: one ball, one branch
        return _refusal("L4", upd, other)
    recorded = next((b for b in _recorded_balls(ctx, found[0])
                     if b != found and fold("/".join(b)) == fold("/".join(found))), None)
    if recorded is None:
        return None
    branch = prefix + "/".join(recorded)
    return Refusal("L4", upd.ref, upd.new or upd.old, None, f"the name folds onto "
                   f"{branch}, the branch of recorded ball {'/'.join(recorded)} (case "
                   "folding, Unicode normalisation): on a server whose filesystem folds "
                   "case they are one branch", "push the ball's branch by its recorded "
                   "name; a slice whose ball ids differ only by case is re-cut",
                   "folded-name")


def _recorded_balls(ctx: PushContext, slice_id: str) -> list[tuple[str, ...]]:
    """The recorded (slice, ball) pairs whose slice id folds onto ``slice_id``."""
    view = ctx.ledger_view()
    out: list[tuple[str, ...]] = []
    for slice_ in view.list("slices"):
        if fold(slice_) == fold(slice_id):
            out.extend((slice_, b) for b in view.list(f"{layout.slice_dir(slice_)}/balls"))
    return out


def _in_the_way(ctx: PushContext, upd: RefUpdate) -> Refusal | None:
    """Blind review r1 F6: a ref that is a folder of a protected name, or sits inside one,
    makes git refuse to create that protected ref (`'refs/heads/leap/ball' exists; cannot
    create ...`): every ball branch, or the ledger, denied. A deletion clears the way."""
    if upd.new is None:
        return None
    folded = fold(upd.ref)
    ball_dir = f"refs/heads/{ctx.config.ball_branch_prefix}"
    for protected in (ctx.spine_ref, ctx.config.ledger_ref, ball_dir):
        target = fold(protected)
        if folded == target and protected != ball_dir:
            continue  # the spine or the ledger itself: judged by its own rule
        # the ball folder itself, a folder above a protected name, or a ref inside the
        # spine's or the ledger's name (under the ball folder live the ball branches)
        if folded == target or target.startswith(folded + "/") or (
                folded.startswith(target + "/") and protected != ball_dir):
            # L8: protected refs are written only through their own rules, never blocked
            return Refusal("L8", upd.ref, upd.new, None, f"it is in the way of {protected}: "
                           "git cannot hold both a ref and a ref folder of one name",
                           "name the branch so that it is neither a folder of a protected "
                           "ref nor inside one", "ref-in-the-way")
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
    # folded: on a case-folding server `refs/TAGS/main` is `refs/tags/main` (review r1 F3)
    folded = fold(upd.ref)
    for prefix, (why, hint) in MASKING.items():
        if folded.startswith(prefix):
            return Refusal("L8", upd.ref, upd.new, None, why, hint, "masking-ref")
    if folded.startswith(UNSHADOWING):
        return None
    short = upd.ref[len("refs/tags/"):] if folded.startswith("refs/tags/") \
        else upd.ref.removeprefix("refs/")
    shadowed = _shadowed(ctx, short)
    if shadowed is None:
        return None
    # review r2: the name as printable text, never a repr (a byte that is not UTF-8 shows
    # as that byte, \\xff, not as Python's surrogate \\udcff)
    return Refusal("L8", upd.ref, upd.new, None, f"its short name `{printable(short)}` shadows "
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
