"""Stacked bases (L5): a ball whose dependencies passed is thrown from a base that holds
their passed candidates, so its red test and its builder see the code it depends on
(``depends_on`` is a foundation, not only an order).

The stack base is the slice's base with each dependency's passed candidate merged in, in
the slice's ball order. Scopes are disjoint (L4), so the merges are clean; a conflict is a
decomposition error (L9). It is built in the object store, never in a checkout (``git
merge-tree --write-tree``, then ``git commit-tree``), and it is deterministic: a fixed
identity, a date taken from its parents (the newest of their committer dates) and a message
made of its inputs, so `leap ball base` and the throw after it name the same commit. Its
parents are the slice's base and then each candidate commit: what pre-receive checks
(``rules.stack``). One commit whatever the number of dependencies (merges of more than one
go through unreferenced intermediate commits of the same kind).

``refs/leap/bases/<slice>/<ball>`` names it, so a person or a test author can build the
ball's red on it (`git worktree add PATH refs/leap/bases/<slice>/<ball>`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from leapgit import git
from leapgit.errors import Hold, RuleViolation, UsageError
from leapgit.ledger import query
from leapgit.ledger.view import LedgerView
from leapgit.records import trailers as tr
from leapgit.records.types import BallRecord, SliceRecord, StackEntry
from leapgit.rules.balls import recorded_base
from leapgit.rules.episodes import way_to_pass
from leapgit.rules.passes import current_pass
from leapgit.rules.stack import restacking

BASE_REF = "refs/leap/bases/{slice}/{ball}"
IDENTITY = ("leapgit", "leapgit@localhost")


class BallBase(NamedTuple):
    """The commit a ball builds on (its red, its rounds) and where it comes from."""

    commit: str
    source: str  # for messages
    stack: tuple[StackEntry, ...] = ()


def layers(view: LedgerView, rec: SliceRecord, ball: BallRecord) -> tuple[StackEntry, ...]:
    """Each dependency's pass, in the slice's ball order; a Hold naming the first that has
    none (L5: a ball is ready only when all its dependencies returned 1)."""
    out = []
    for dep in sorted(ball.depends_on, key=rec.balls.index):
        passed = current_pass(view, rec.slice, dep)
        if passed is None:
            raise Hold(f"{rec.slice}/{ball.ball} waits: its dependency {dep} has not passed "
                       "(1) yet, and its base holds its dependencies' passed candidates",
                       rule="L5", hint=f"bring {dep} to its pass first "
                                       f"({way_to_pass(view, rec.slice, dep)})")
        out.append(StackEntry(dep, passed.score, passed.candidate, passed.commit))
    return tuple(out)


def build(root: Path, slice_id: str, slice_base: str, stack: Sequence[StackEntry]) -> str:
    """The stack base commit: ``slice_base`` with each candidate of ``stack`` merged in."""
    tip, parents = slice_base, [slice_base]
    for entry in stack:
        if entry.commit in parents:
            continue  # a commit is a parent once (git drops a repeated one)
        tree = _merged_tree(root, slice_id, tip, entry)
        parents.append(entry.commit)
        tip = _commit(root, tree, parents, _message(slice_id, slice_base, stack))
    return tip


def _merged_tree(root: Path, slice_id: str, tip: str, entry: StackEntry) -> str:
    if git.rev_parse(f"{entry.commit}^{{commit}}", root) is None:
        raise UsageError(f"the candidate commit {entry.commit[:12]} of {slice_id}/{entry.ball}'s "
                         f"pass (score {entry.score}) is not in this repository, so its "
                         "dependents cannot build on it", hint="fetch the ball's branch from "
                         "the remote it was pushed to (`git fetch`), then throw again")
    proc = git.run(["merge-tree", "--write-tree", "--name-only", "--no-messages", tip,
                    entry.commit], root, check=False)
    lines = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
    if proc.returncode == 1:
        raise RuleViolation(f"stacking {entry.ball}'s candidate {entry.candidate[:12]} for "
                            f"{slice_id} conflicts on {', '.join(sorted(set(lines[1:])))}",
                            rule="L9", hint="a scope collision is a decomposition error: "
                            "re-cut the slice")
    if proc.returncode != 0 or not lines:
        err = proc.stderr.decode(errors="replace").strip()
        raise git.GitFailed(f"git merge-tree failed: {err or proc.returncode}",
                            hint="git 2.38 or newer is needed for merge-tree --write-tree")
    return lines[0].strip()


def _message(slice_id: str, slice_base: str, stack: Sequence[StackEntry]) -> bytes:
    body = "\n".join(f"{e.ball}: score {e.score}, candidate {e.candidate}" for e in stack)
    subject = f"leap: stack base of {slice_id} on {', '.join(e.ball for e in stack)}"
    return tr.format_message(subject, [(tr.SLICE, slice_id), (tr.BASE, slice_base)], body)


def _commit(root: Path, tree: str, parents: Sequence[str], message: bytes) -> str:
    dates = git.out(["show", "-s", "--format=%ct", *parents], root).split()
    date = f"{max(int(d) for d in dates)} +0000"
    name, email = IDENTITY
    env = {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": date,
           "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email,
           "GIT_COMMITTER_DATE": date}
    args = ["commit-tree", "--no-gpg-sign", tree, *(a for p in parents for a in ("-p", p))]
    return git.run(args, root, input=message, env=env).stdout.decode().strip()


def stack_base(root: Path, view: LedgerView, rec: SliceRecord, ball: BallRecord) -> BallBase:
    """A dependent ball's stack base, built now and named by its ref."""
    stack = layers(view, rec, ball)
    commit = build(root, rec.slice, rec.base, stack)
    name_base(root, rec.slice, ball.ball, commit)
    named = ", ".join(f"{e.ball} (score {e.score})" for e in stack)
    return BallBase(commit, f"the stack of {named} on the slice's base", stack)


def spine_tip(root: Path, spine: str) -> str:
    """L8: the tip of the spine branch the config names, which every ball is thrown from
    and merged onto. One that does not exist is said with the rule and the two ways on (a
    `leap init` in a detached checkout named a ``main`` the repository did not have, and
    the cut, the throw and the merge each said so without either)."""
    tip = git.rev_parse(f"refs/heads/{spine}", root)
    if tip is None:
        raise UsageError(f"spine branch {spine!r} does not exist", file=".leap/config.yaml",
                         field="spine", rule="L8",
                         hint="name a branch of this repository in `spine:` (`git branch` "
                         f"lists them), or make it: `git branch {spine} COMMIT`")
    return tip


def ball_base(root: Path, view: LedgerView, slice_id: str, ball_id: str,
              spine: str | None = None) -> BallBase:
    """The base a ball's red is built on: its current throw's base; before a throw, or once
    its stack went stale and its dependencies passed again (a restack, ``rules.stack``), the
    base `leap throw` gives it: a stack base when it has dependencies, else the tip of the
    ``spine`` branch (the slice's base when none is named or it has no tip). A red written
    on the slice's base after the spine moved (another slice landed) would stand on no
    branch `leap throw` starts, and every round would be refused (T7.1)."""
    rec = query.load_slice(view, slice_id)
    ball = query.load_ball(view, slice_id, ball_id)
    found = recorded_base(view, slice_id, ball_id)
    if ball.depends_on and (found.thrown is None or
                            restacking(view, slice_id, ball_id) is not None):
        return stack_base(root, view, rec, ball)  # a restack: the stack of the passes now
    tip = spine_tip(root, spine) if spine and found.thrown is None else None
    if tip is not None:
        name_base(root, slice_id, ball_id, tip)
        return BallBase(tip, f"the tip of {spine}, where `leap throw {slice_id} --ball "
                             f"{ball_id}` starts it")
    name_base(root, slice_id, ball_id, found.commit)
    return BallBase(found.commit, found.source,
                    found.thrown.stack if found.thrown is not None else ())


def name_base(root: Path, slice_id: str, ball_id: str, commit: str) -> str:
    """Point the ball's base ref at ``commit``; the ref's name."""
    ref = BASE_REF.format(slice=slice_id, ball=ball_id)
    git.run(["update-ref", ref, commit], root)
    return ref
