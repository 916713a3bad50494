"""One commit of a ball branch, judged the same way by every judge (issue 13): the
post-commit hook and `leap round` (and `leap throw --run`) before they record a round, and
``pre-receive`` for every commit a ball branch brings. Client and server never disagree.

A commit holds no merge (L9: candidate bytes merge only on the spine); it changes only the
ball's scope (L4, L9: default deny; a rename or deletion touches both paths), each scope
path a plain file: a gitlink, or a symlink that leaves the repository (L2) or the ball's
scope (L4), would let the ball's bytes name someone else's; it carries its receipt in its
trailers, round 1 to the cap (L6); and it leaves every red's frozen tests as they were
(T7.1). The thrower's red test is scope-checked, but is no round."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from leapgit.errors import printable
from leapgit.records.trailers import has_divider, respelled_keys, round_trailers
from leapgit.rules.refusal import Refusal

if TYPE_CHECKING:  # the post-commit hook imports this module: only what it runs
    from dulwich.objects import Commit

    from leapgit.records.scoring import RedRecord
    from leapgit.records.types import BallRecord
    from leapgit.rules.objects import Objects

# The refusals that make a round a breach, recorded as -1 whatever the builder said.
BREACH = frozenset({"L2", "L4", "L9", "T7.1"})
OUTSIDE = "out-of-scope"  # Refusal.kind of a path outside the ball's scope


def rollback_hint(ball: BallRecord) -> str:
    return f"undo the change (the ball's rollback: {ball.rollback}) and commit only scope files"


def check_commit(objects: Objects, ref: str, ball: BallRecord, commit: Commit, round_cap: int,
                 reds: Sequence[RedRecord] = (), red_test: bool = False) -> list[Refusal]:
    """Every refusal of one ball-branch commit; ``red_test``: it is the thrower's red test
    (base..red), which carries no receipt and may write the tests it freezes."""
    merged = check_merge(ref, commit)
    if merged:
        out = merged
    else:
        parent = objects.commit(commit.parents[0].decode()).tree if commit.parents else None
        out = check_scope(objects, ref, ball, commit.id.decode(), parent, commit.tree)
        divided = check_message(ref, commit, "L6")  # the red test's trailers are read too
        out.extend(divided)
        if not red_test and not divided:
            out.extend(check_trailers(ref, commit, round_cap))
    if not red_test:
        for red in reds:
            # T7.6: a finding's tests are frozen from its own commit on (judged through the
            # parents: a round about to be made is no stored object yet)
            if red.finding and not (objects.has(red.commit) and any(
                    objects.is_ancestor(red.commit, p.decode()) for p in commit.parents)):
                continue
            out.extend(check_frozen(objects, ref, red, commit))
    return out


def check_message(ref: str, commit: Commit, rule: str) -> list[Refusal]:
    """A message whose trailers git's readers read apart is refused, wherever the server
    judges one (blind review r2): a ``---`` divider line (`git interpret-trailers`, and
    leapgit's parser with it, end the message there, `git log --format=%(trailers)` reads
    on), or a ``Leap-*`` key in another case. So one commit cannot name one ball to the
    rules and another to an auditor's `git log`. ``rule``: the rule of the ref (L6 a
    round's receipt, L8 the spine's merge or the ledger's record)."""
    sha = commit.id.decode()
    if has_divider(commit.message):
        return [Refusal(rule, ref, sha, None, "the message holds a `---` divider line: git "
                        "interpret-trailers ends the message there and git log "
                        "--format=%(trailers) reads on, so git's readers disagree on its "
                        "trailers", "reword the commit without a line that starts with `---`",
                        "two-readings")]
    encoding = foreign_encoding(commit)
    if encoding is not None:  # git re-encodes the message from it before any reader sees it
        return [Refusal(rule, ref, sha, None, f"the commit names encoding {encoding}: git "
                        "decodes the message from it for every reader (git log, "
                        "%(trailers), --grep) while the rules read its bytes, so they "
                        "disagree on its trailers", "write the message in UTF-8, with no "
                        "encoding header (git's default)", "two-readings")]
    respelled = respelled_keys(commit.message)
    if respelled:  # `leap-ball: b` after `Leap-Ball: a`: b to the rules, a to `git log --grep`
        return [Refusal(rule, ref, sha, None, f"the trailer key {', '.join(respelled)} is a "
                        "Leap-* key in another case: leapgit reads keys case-blind, a reader "
                        "matching the key as written does not, so they disagree on its "
                        "trailers", "write Leap-* trailer keys as leapgit spells them",
                        "two-readings")]
    return []


def foreign_encoding(commit: Commit) -> str | None:
    """The ``encoding`` header of a commit when it names anything but UTF-8 (git treats
    ``utf-8`` and ``utf8``, in any case, as no re-encoding), else None."""
    found = commit.encoding
    if found is None or found.decode("ascii", "replace").lower() in ("utf-8", "utf8"):
        return None
    return printable(found.decode("utf-8", "surrogateescape"))


def check_merge(ref: str, commit: Commit) -> list[Refusal]:
    """L9: candidate bytes merge only on the spine."""
    if len(commit.parents) <= 1:
        return []
    return [Refusal("L9", ref, commit.id.decode(), None, "a merge commit on a ball branch: "
                    "candidate bytes merge only on the spine", "rebuild the round as a plain "
                    "commit", "merge")]


def check_scope(objects: Objects, ref: str, ball: BallRecord, sha: str, old_tree: bytes | None,
                new_tree: bytes) -> list[Refusal]:
    """L4, L9: default deny, every touched path in the scope; L2: each a plain file, or a
    link that stays inside the ball's scope."""
    from leapgit.slices.diff import escapes, out_of_scope

    touched = objects.touched(old_tree, new_tree)
    out = [Refusal("L4", ref, sha, path, f"outside the scope of ball {ball.slice}/{ball.ball}",
                   rollback_hint(ball), OUTSIDE)
           for path in out_of_scope(touched, ball)]
    out.extend(Refusal("L4" if e.in_repo else "L2", ref, sha, e.path, e.message,
                       rollback_hint(ball) + "; a scope path is a plain file", "link")
               for e in escapes(objects.repo, new_tree, touched, ball))
    out.extend(Refusal("L4", ref, sha, path, why, rollback_hint(ball) + "; change only the "
                       "lines the scope names", OUTSIDE)
               for path, why in outside_lines(objects, ball, touched, new_tree))
    return out


def outside_lines(objects: Objects, ball: BallRecord, touched: set[str], tree: bytes
                  ) -> list[tuple[str, str]]:
    """L1, L4: a scope entry narrowed to a line range (``lines: "10-40"``) lets the ball
    change those lines of the file as the slice's base holds it (its stamp), and no other:
    the lines above the range stay the file's first lines and the lines below it its last
    (what is inserted at either edge of the range is inside it). A file the base lacks, or
    a deleted one, has no lines to keep: a deletion of a narrowed file is outside unless the
    range covers the whole file. Symbols are not judged (no parser of every language)."""
    from leapgit.records.types import ABSENT

    out = []
    for entry in ball.scope:
        if not entry.lines or entry.path not in touched or entry.blob == ABSENT:
            continue
        first, _, last = entry.lines.partition("-")
        start, end = int(first), int(last or first)
        if not objects.has(entry.blob):
            out.append((entry.path, f"narrowed to lines {entry.lines}, but the file as the "
                        f"slice's base holds it ({entry.blob[:12]}) is not here to judge them"))
            continue
        old = _lines(objects.capped(entry.blob, entry.path, _LINES_CAP))
        found = objects.blob_id_at(tree, entry.path)
        new = _lines(objects.capped(found, entry.path, _LINES_CAP)) if found else []
        above, below = old[:start - 1], old[min(end, len(old)):]
        if new[:len(above)] != above or len(new) < len(above) + len(below) or \
                (below and new[len(new) - len(below):] != below):
            out.append((entry.path, f"changes {entry.path} outside lines {entry.lines}, the "
                        f"part of it the scope of ball {ball.slice}/{ball.ball} names"))
    return out


_LINES_CAP = 64 << 20  # a narrowed file larger than this is refused, never read whole


def _lines(data: bytes) -> list[bytes]:
    """``data``'s lines as git numbers them (each ends at a newline; a last line may not)."""
    parts = data.split(b"\n")
    return [p + b"\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def check_trailers(ref: str, commit: Commit, round_cap: int) -> list[Refusal]:
    """L6: a round commit carries its receipt, and no round past the cap."""
    sha = commit.id.decode()
    trailers = round_trailers(commit.message)
    if trailers.round is None or trailers.outcome is None:
        return [Refusal("L6", ref, sha, None, "a round commit without its receipt trailers",
                        "end the message with `Leap-Round: N` and `Leap-Outcome: -1|0|1`",
                        "trailers")]
    if not 1 <= trailers.round <= round_cap:
        return [Refusal("L6", ref, sha, None, f"Leap-Round: {trailers.round} is outside "
                        f"1..{round_cap}: no fifth round", "resume in a new episode", "trailers")]
    return []


def check_frozen(objects: Objects, ref: str, red: RedRecord | None, commit: Commit
                 ) -> list[Refusal]:
    """T7.1, T9: a round after red leaves the red commit's test files as they were."""
    if red is None:
        return []
    changed = red.frozen_changes(lambda p: (lambda b: b.decode() if b else None)(
        objects.blob_id_at(commit.tree, p)))
    return [Refusal("T7.1", ref, commit.id.decode(), path, "a frozen test file of the red "
                    f"commit {red.commit[:12]} was edited (T9: never weaken the failing test)",
                    f"restore it as at {red.commit[:12]}", "frozen") for path in changed]
