"""Close one round (L6): commit the ball's in-scope changes with the receipt as trailers,
check the scope of everything the ball changed, record the receipt through ``record_round``
(the only round accounting), and roll back on a refuse.

A change outside the scope is a breach (L9): the round is -1 whatever the builder said, the
breach is committed on the ball's own branch as evidence, and only this ball's scope files
are restored in its own worktree. Used by `leap round` and by `leap throw --run`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from leapgit import git
from leapgit.errors import RuleViolation
from leapgit.git import GitFailed
from leapgit.gitobj import oid
from leapgit.ledger import query
from leapgit.ledger.store import Ledger, LedgerView
from leapgit.records.types import OUTCOME_NAMES, BallRecord
from leapgit.slices.diff import out_of_scope, touched_paths
from leapgit.worktrees import handoff
from leapgit.worktrees.rollback import RolledBack, rollback
from leapgit.worktrees.rounds import (
    RECORDING_ENV,
    TRAILER_EVIDENCE,
    TRAILER_OUTCOME,
    TRAILER_ROUND,
    Episode,
    RoundRecorded,
    record_round,
)

MAX_TRAILER = 400


@dataclass(frozen=True)
class RoundClosed:
    recorded: RoundRecorded
    commit: str | None
    breach: tuple[str, ...]
    rolled_back: RolledBack | None


def dirty_paths(worktree: Path) -> list[str]:
    """Paths with uncommitted changes, untracked files included (ignored files are not)."""
    raw = git.run(["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"],
                  worktree).stdout
    return [item[3:].decode("utf-8", "surrogateescape") for item in raw.split(b"\0") if item]


def committed_paths(common_dir: Path, base: str, head: str) -> set[str]:
    if base == head:
        return set()
    from dulwich.repo import Repo

    with Repo(str(common_dir)) as repo:
        old = repo.object_store[oid(base)].tree  # type: ignore[attr-defined]
        new = repo.object_store[oid(head)].tree  # type: ignore[attr-defined]
        return touched_paths(repo.object_store, old, new)


def round_start(view: LedgerView, episode: Episode, worktree: Path) -> str:
    """The commit the next round starts from: the last recorded round commit of this episode,
    else of the episode it resumed (when the branch still holds it), else the throw base."""
    t = episode.throw
    for receipt in reversed(episode.receipts):
        if receipt.commit:
            return receipt.commit
    if t.resumed_from is not None:
        for receipt in reversed(query.receipts(view, t.slice, t.ball, t.resumed_from)):
            if receipt.commit and git.run(["merge-base", "--is-ancestor", receipt.commit,
                                           "HEAD"], worktree, check=False).returncode == 0:
                return receipt.commit
    return t.base


def _frozen(view: LedgerView, episode: Episode, worktree: Path) -> list[str]:
    from leapgit.scoring.history import latest_red
    from leapgit.scoring.red import frozen_changes, is_ancestor
    from leapgit.worktrees.check import blob_of_file

    red = latest_red(view, episode.throw.slice, episode.throw.ball)
    if red is None or not is_ancestor(worktree, red.commit, "HEAD"):
        return []  # the branch never held the red test: score's T9 check refuses it
    return frozen_changes(red, lambda p: blob_of_file(worktree / p))


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MAX_TRAILER else line[: MAX_TRAILER - 1] + "…"


def _commit(worktree: Path, message: str) -> None:
    # This round is recorded by close_round itself, with its log and evidence; the
    # post-commit hook, there for builders that commit by themselves, stands aside.
    env = {RECORDING_ENV: "1"}
    proc = git.run(["commit", "-q", "-F", "-"], worktree, input=message.encode(), check=False,
                   env=env)
    if proc.returncode != 0 and b"tell me who you are" in proc.stderr:
        # no identity configured anywhere: commit as leapgit rather than lose the round
        proc = git.run(["-c", "user.name=leapgit", "-c", "user.email=leapgit@localhost",
                        "commit", "-q", "-F", "-"], worktree, input=message.encode(),
                       check=False, env=env)
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip().splitlines()
        raise GitFailed(f"git commit in {worktree} failed: {err[-1] if err else proc.returncode}")


def commit_round(worktree: Path, paths: list[str], ball: BallRecord, round_no: int,
                 outcome: int, evidence: str) -> str | None:
    """One commit with the receipt as trailers, of exactly ``paths``; None if none changed."""
    if not paths:
        return None
    git.run(["add", "-A", "--", *(f":(literal){p}" for p in paths)], worktree)
    if git.run(["diff", "--cached", "--quiet"], worktree, check=False).returncode == 0:
        return None
    message = (
        f"leap: round {round_no} of {ball.slice}/{ball.ball} ({OUTCOME_NAMES[outcome]})\n\n"
        f"Leap-Slice: {ball.slice}\nLeap-Ball: {ball.ball}\n"
        f"{TRAILER_ROUND}: {round_no}\n{TRAILER_OUTCOME}: {outcome}\n"
        f"{TRAILER_EVIDENCE}: {_one_line(evidence)}\n"
    )
    _commit(worktree, message)
    return git.out(["rev-parse", "HEAD"], worktree)


def close_round(
    ledger: Ledger, common_dir: Path, ball: BallRecord, episode: Episode, *,
    outcome: Literal[-1, 0, 1], evidence: str, round_limit: int, recorded_by: str,
    start: str | None = None, log: str | None = None, env: dict[str, str] | None = None,
    claim: bool = True,
) -> RoundClosed:
    """``claim`` is True when the outcome is the builder's (or a person's) word, False when
    leapgit derived it (a failed L2 check, a breach)."""
    t = episode.throw
    if episode.closed:
        raise RuleViolation(f"episode {t.episode} of {t.slice}/{t.ball} is closed: "
                            f"{episode.closed}", rule="L6")
    round_no = len(episode.receipts) + 1
    if round_no > min(round_limit, 4):
        raise RuleViolation(f"{t.slice}/{t.ball} already used {round_no - 1} rounds in episode "
                            f"{t.episode}; there is no fifth round", rule="L6",
                            hint=f"`leap throw {t.slice} --ball {t.ball} --resume`")
    worktree = Path(t.worktree or "")
    if not worktree.is_dir():
        raise RuleViolation(f"the worktree of {t.slice}/{t.ball} is gone: {worktree}",
                            rule="L5", hint="resume the ball to recreate it")
    start = start or round_start(ledger.require(), episode, worktree)
    dirty = dirty_paths(worktree)
    head = git.out(["rev-parse", "HEAD"], worktree)
    # L9: default deny; everything this ball changed since its base must be in scope.
    breach = tuple(out_of_scope(set(dirty) | committed_paths(common_dir, t.base, head), ball))
    frozen = _frozen(ledger.require(), episode, worktree)
    if frozen:
        outcome, claim = -1, False  # T7.1: derived by leapgit, whatever the builder said
        evidence = (f"frozen test file(s) edited after red (T7.1): {', '.join(frozen)}; "
                    f"builder said: {evidence}")
        breach = tuple(sorted(set(breach) | set(frozen)))
    elif breach:
        outcome, claim = -1, False  # derived by leapgit, not claimed by the builder
        evidence = (f"scope breach (L4, L9): {', '.join(breach)} outside the scope of "
                    f"{t.ball}; builder said: {evidence}")
    to_commit = dirty if breach else [p for p in dirty if not out_of_scope([p], ball)]
    made = commit_round(worktree, to_commit, ball, round_no, outcome, evidence)
    head = made or git.out(["rev-parse", "HEAD"], worktree)
    round_commit = made or (head if head != start else None)
    candidate = git.out(["rev-parse", f"{round_commit}^{{tree}}"], worktree) \
        if round_commit else None
    recorded = record_round(
        ledger, t.slice, t.ball, outcome=outcome, evidence=evidence, round_limit=round_limit,
        commit=round_commit, candidate=candidate, recorded_by=recorded_by,
        claim=True if outcome == 1 else claim,  # L7: a 1 here is only ever a claim
        log=log, expect_round=round_no,
    )
    rolled = None
    if recorded.receipt.outcome == -1:
        rolled = rollback(common_dir, worktree, ball, t, handoff.environment(env or {}))
    return RoundClosed(recorded, round_commit, breach, rolled)
