"""Builders that commit by themselves (issue 14; L6, L9): aider does by default, and so do
many agents. A round is one commit carrying its receipt as trailers, and the server counts
every commit since the base as a round, so the commits a builder makes during a round are
folded into that round's one commit before it is judged: ``git reset --soft`` back to where
the round stands on the branch keeps the index and the worktree (no work is lost; the
builder's own commits stay in the worktree's reflog), and ``close_round`` commits and judges
their sum. Commits the ledger records (a builder's commit with round trailers, which the
post-commit hook recorded) are never folded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from leapgit import git
from leapgit.ledger import query
from leapgit.ledger.view import LedgerView
from leapgit.rules.episodes import Episode, episode_reds


@dataclass(frozen=True)
class Folded:
    onto: str  # the commit the round's one commit goes on
    tip: str  # the builder's last commit, now only in the reflog
    commits: int


def _git(args: list[str], cwd: Path, check: bool = True) -> str:
    # L6: a Ctrl-C must not kill the git commands that close a round
    proc = git.run(args, cwd, check=check, detached=True)
    return proc.stdout.decode().strip() if proc.returncode == 0 else ""


def _ancestor(worktree: Path, older: str, newer: str) -> bool:
    return git.run(["merge-base", "--is-ancestor", older, newer], worktree, check=False,
                   detached=True).returncode == 0


def round_start(view: LedgerView, episode: Episode, worktree: Path) -> str:
    """The commit the next round starts from: the last recorded round commit of this episode,
    else of the episode it resumed (when the branch still holds it), else the throw base."""
    t = episode.throw
    for receipt in reversed(episode.receipts):
        if receipt.commit:
            return receipt.commit
    if t.resumed_from is not None:
        for receipt in reversed(query.receipts(view, t.slice, t.ball, t.resumed_from)):
            if receipt.commit and _ancestor(worktree, receipt.commit, "HEAD"):
                return receipt.commit
    return t.base


def fold_point(view: LedgerView, episode: Episode, worktree: Path) -> str:
    """Where the round's one commit goes: ``round_start``, or the newest red commit above it
    that the branch holds (T7.1: the thrower's failing test is never part of a round; T7.6:
    nor is a finding's red, the test author's tests on the last candidate)."""
    start = round_start(view, episode, worktree)
    t = episode.throw
    for red in reversed(episode_reds(view, t.slice, t.ball, t.episode)):
        if red.commit != start and _ancestor(worktree, start, red.commit) \
                and _ancestor(worktree, red.commit, "HEAD"):
            return red.commit
    return start


def fold(view: LedgerView, episode: Episode, worktree: Path, log: str | None) -> Folded | None:
    """Fold the commits made since the round's fold point (L6: one commit a round), or None
    when HEAD is there already. ``episode`` is the ledger's current one, so a commit the
    post-commit hook recorded during the round is a fold point, never folded."""
    onto = fold_point(view, episode, worktree)
    head = _git(["rev-parse", "HEAD"], worktree)
    if head == onto:
        return None
    count = _git(["rev-list", "--count", head, f"^{onto}"], worktree, check=False)
    _git(["reset", "--soft", onto], worktree)  # index and worktree kept: nothing is lost
    folded = Folded(onto, head, int(count or 0))
    if log:
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(f"\n[leap] folded {folded.commits} commit(s) the builder made (tip "
                     f"{head[:12]}, kept in the reflog) into this round's one commit on "
                     f"{onto[:12]}\n")
    return folded
