"""Which change is graded: ``--base REV --head REV``, or ``--slice S --ball B`` (base from the
slice record, candidate at the tip of the ball's branch). The head is re-read after the
seats sat: a candidate that moved under them annuls the round (T8)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from leapgit import git
from leapgit.errors import UsageError
from leapgit.ledger import query
from leapgit.ledger.query import load_slice
from leapgit.ledger.view import LedgerView
from leapgit.records.types import Config
from leapgit.tribunal.changes import resolve


@dataclass(frozen=True)
class Target:
    base: str
    head: str
    series: str  # T7: rounds of one series are compared with each other
    reread: Callable[[], str | None]
    slice: str | None = None
    ball: str | None = None


def ball_base(view: LedgerView, slice_id: str, ball_id: str) -> str:
    """The commit a ball was thrown from: its latest throw's base (L5: a dependent ball's
    stack base holds its dependencies' candidates, which are not its change); the slice's
    base before a throw."""
    record = load_slice(view, slice_id)
    if ball_id not in record.balls:
        raise UsageError(f"slice {slice_id!r} has no ball {ball_id!r} "
                         f"(balls: {', '.join(record.balls)})", field="--ball")
    for episode in reversed(query.episodes(view, slice_id, ball_id)):
        thrown = query.throw(view, slice_id, ball_id, episode)
        if thrown is not None:
            return thrown.base
    return record.base


def from_ball(root: Path, view: LedgerView, config: Config, slice_id: str, ball_id: str) -> Target:
    base = ball_base(view, slice_id, ball_id)
    branch = config.ball_branch(slice_id, ball_id)
    head = git.rev_parse(f"refs/heads/{branch}", root)
    if head is None:
        raise UsageError(f"the ball's branch {branch} does not exist", field="--ball",
                         hint="throw the ball first, or grade a change with --base/--head")
    return Target(base, head, f"ball:{slice_id}/{ball_id}",
                  lambda: git.rev_parse(f"refs/heads/{branch}", root), slice_id, ball_id)


def pinned(root: Path, view: LedgerView, slice_id: str, ball_id: str, base_rev: str,
           head_rev: str) -> Target:
    """A ball's candidate pinned to one commit (``leap score``): the round grades exactly
    the scored commit from its throw's base, whatever the branch does meanwhile (T8)."""
    ball_base(view, slice_id, ball_id)  # the ball exists in the slice
    base = resolve(base_rev, root, "--base")
    head = resolve(head_rev, root, "--head")
    return Target(base, head, f"ball:{slice_id}/{ball_id}",
                  lambda: git.rev_parse(f"{head}^{{commit}}", root), slice_id, ball_id)


def from_revs(root: Path, base_rev: str, head_rev: str) -> Target:
    base = resolve(base_rev, root, "--base")
    head = resolve(head_rev, root, "--head")
    return Target(base, head, f"base:{base}", lambda: git.rev_parse(head_rev, root))


def merged(root: Path, slice_id: str, base_rev: str, head_rev: str) -> Target:
    """A slice's merged result (the aggregate review, L8): its rounds are the slice's own
    series, recorded under the slice (``slices/<s>/tribunal/<run>``), so a refusal names the
    slice it refused and T9 counts across the slice's merges, not across a spine tip."""
    base = resolve(base_rev, root, "--base")
    head = resolve(head_rev, root, "--head")
    return Target(base, head, f"merge:{slice_id}", lambda: git.rev_parse(head_rev, root),
                  slice_id, None)


def choose(root: Path, view: LedgerView, config: Config, base: str | None, head: str | None,
           slice_id: str | None, ball_id: str | None, aggregate: bool = False) -> Target:
    if aggregate and slice_id and base and head:
        return merged(root, slice_id, base, head)
    if slice_id or ball_id:
        if not (slice_id and ball_id) or bool(base) != bool(head):
            raise UsageError("give --slice and --ball together, and --base with --head",
                             field="--slice")
        if base and head:
            return pinned(root, view, slice_id, ball_id, base, head)
        return from_ball(root, view, config, slice_id, ball_id)
    if not (base and head):
        raise UsageError("name the change: --base REV --head REV, or --slice S --ball B",
                         field="--base")
    return from_revs(root, base, head)
