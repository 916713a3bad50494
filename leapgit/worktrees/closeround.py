"""Close one round (L6): judge what the round brings as the hooks judge it
(``roundcheck``), commit the ball's changes with the receipt as trailers, record the
receipt through ``record_round`` (the only round accounting), and roll back on a refuse.

A breach (a change outside the scope, a scope path turned into a link, an edited frozen
test: L4, L9, L2, T7.1) makes the round -1 whatever the builder said; the breach is
committed and kept under its evidence ref (``evidence``), then the ball branch goes back to
the round's start and the round's changes outside the scope leave the worktree (``rewind``:
the branch stays one the server accepts), and only this ball's scope files are restored in
its own worktree. Used by `leap round` and by `leap throw --run`.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from leapgit import git
from leapgit.errors import LeapError, RuleViolation, printable
from leapgit.git import GitFailed
from leapgit.ledger.history import latest_red
from leapgit.ledger.repo import open_repo
from leapgit.ledger.store import Ledger, LedgerView
from leapgit.records import trailers as tr
from leapgit.records.types import BUILTIN_ROLLBACK, OUTCOME_NAMES, BallRecord, ThrowRecord
from leapgit.rules.episodes import Episode, current_episode, spent_hint
from leapgit.worktrees import handoff
from leapgit.worktrees.evidence import keep
from leapgit.worktrees.fold import fold
from leapgit.worktrees.place import recorded_tip, require_worktree
from leapgit.worktrees.rewind import rewind
from leapgit.worktrees.rollback import RolledBack, rollback
from leapgit.worktrees.roundcheck import breach_evidence, judge_round, stage
from leapgit.worktrees.rounds import RECORDING_ENV, RoundRecorded, record_round

MAX_TRAILER = 400


def _git(args: list[str], cwd: Path, *, input: bytes | None = None, check: bool = True,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    # L6: a Ctrl-C must not kill the commit (or its hooks) that closes a round
    return git.run(args, cwd, input=input, check=check, env=env, detached=True)


def _out(args: list[str], cwd: Path) -> str:
    return _git(args, cwd).stdout.decode().strip()


def _head(worktree: Path) -> str | None:
    proc = _git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], worktree, check=False)
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


@dataclass(frozen=True)
class RoundClosed:
    recorded: RoundRecorded
    commit: str | None
    breach: tuple[str, ...]
    rolled_back: RolledBack | None
    rollback_failed: LeapError | None = None


def dirty_paths(worktree: Path) -> list[str]:
    """Paths with uncommitted changes, untracked files included (ignored files are not)."""
    raw = _git(["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"],
                  worktree).stdout
    return [item[3:].decode("utf-8", "surrogateescape") for item in raw.split(b"\0") if item]


def admin_dir(common_dir: Path, worktree: Path) -> Path | None:
    """The git dir the repository registered for ``worktree`` (``<common>/worktrees/<name>``),
    read from the repository's side, never from the worktree's own ``.git`` file."""
    real = os.path.realpath(worktree)
    for gitdir_file in sorted((common_dir / "worktrees").glob("*/gitdir")):
        try:
            points_at = gitdir_file.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            continue
        if os.path.realpath(os.path.dirname(points_at)) == real:
            return gitdir_file.parent
    return None


def worktree_problem(common_dir: Path, worktree: Path, branch: str) -> str | None:
    """Why ``worktree`` is no longer the ball's own checkout on its own branch, or None.
    A builder can point HEAD at the spine, switch to a branch of its own or rewrite ``.git``
    to point at the user's repository: a round committed there would land on a branch that
    is not the ball's, or in the user's checkout (L5, L9)."""
    admin = admin_dir(common_dir, worktree)
    if admin is None:
        return f"{worktree} is not a registered worktree of this repository any more"
    found = _git(["rev-parse", "--absolute-git-dir"], worktree, check=False)
    gitdir = found.stdout.decode("utf-8", "surrogateescape").strip()
    if found.returncode != 0 or os.path.realpath(gitdir) != os.path.realpath(admin):
        return f"its git dir is {gitdir or '(none)'}, expected {admin}"
    head = _git(["symbolic-ref", "-q", "HEAD"], worktree, check=False)
    ref = head.stdout.decode("utf-8", "surrogateescape").strip()
    if ref != f"refs/heads/{branch}":
        return f"its HEAD is {ref or '(detached)'}, expected refs/heads/{branch}"
    return None


def _one_line(text: str) -> str:
    """A trailer value git takes: one line, its controls (a NUL git refuses in a message, an
    ESC) and bytes that were not UTF-8 (a file name's) escaped."""
    line = printable(" ".join(text.split()))
    return line if len(line) <= MAX_TRAILER else line[: MAX_TRAILER - 1] + "…"


_NO_HOOKS = ("-c", f"core.hooksPath={os.devnull}")  # a folder with no hook in it


def _commit(worktree: Path, message: str) -> None:
    # This round is recorded by close_round itself, with its log and evidence; leapgit's
    # post-commit hook, there for builders that commit by themselves, would stand aside. The
    # project's own commit hooks (a commit-msg lint, a formatter in pre-commit, a
    # prepare-commit-msg that adds a ticket line) judge or edit a person's commits; the
    # round's commit records what the builder left, as it is, with its receipt's trailers
    # last, and the ball's proof, tests and tribunal judge it. So no hook runs for it (a
    # hook's refusal refused the ball and rolled its work back; a line added after the
    # trailers made the round unpushable)
    env = {RECORDING_ENV: "1"}
    proc = _git([*_NO_HOOKS, "commit", "-q", "--no-verify", "-F", "-"], worktree,
                input=message.encode(), check=False, env=env)
    if proc.returncode != 0 and b"tell me who you are" in proc.stderr:
        # no identity configured anywhere: commit as leapgit rather than lose the round
        proc = _git([*_NO_HOOKS, "-c", "user.name=leapgit", "-c",
                     "user.email=leapgit@localhost", "commit", "-q", "--no-verify", "-F", "-"],
                    worktree, input=message.encode(),
                       check=False, env=env)
    if proc.returncode != 0:
        said = git.says(proc.stderr.decode(errors="replace")) or f"exit {proc.returncode}"
        raise GitFailed(f"git commit in {worktree} failed: {said}")


def round_message(ball: BallRecord, round_no: int, outcome: int, evidence: str) -> str:
    """A round commit's message: the receipt as trailers."""
    return tr.format_message(
        f"leap: round {round_no} of {ball.slice}/{ball.ball} ({OUTCOME_NAMES[outcome]})",
        [(tr.SLICE, ball.slice), (tr.BALL, ball.ball), (tr.ROUND, str(round_no)),
         (tr.OUTCOME, str(outcome)), (tr.EVIDENCE, _one_line(evidence))]).decode()


def commit_staged(worktree: Path, message: str) -> str:
    """Commit what ``roundcheck.stage`` staged; the new commit's id."""
    _commit(worktree, message)
    return _out(["rev-parse", "HEAD"], worktree)


def close_round(
    ledger: Ledger, common_dir: Path, ball: BallRecord, episode: Episode, *,
    outcome: Literal[-1, 0, 1], evidence: str, round_cap: int, recorded_by: str,
    start: str | None = None, log: str | None = None, env: dict[str, str] | None = None,
    claim: bool = True, stuck: bool = False, untracked: frozenset[str] | None = None,
    stopped: str | None = None,
) -> RoundClosed:
    """``claim`` is True when the outcome is the builder's (or a person's) word, False when
    leapgit derived it (a failed L2 check, a breach); ``stuck``: the builder failed as in
    the round before, and a 0 ends the episode (``rounds.record_round``); ``untracked``: the
    worktree's untracked files before the builder ran, which a refused round leaves alone
    (``rewind``); ``stopped``: why leap stopped the round (``rounds.record_round``)."""
    t = episode.throw
    worktree = Path(t.worktree or "")
    require_worktree(common_dir, worktree, t.branch, f"{t.slice}/{t.ball}",
                     lambda: recorded_tip(ledger.require(), common_dir, episode))
    # The episode as the ledger holds it now: a builder that committed by itself had its
    # round recorded by the post-commit hook while it ran; what it left is the next round.
    episode = current_episode(ledger.require(), t.slice, t.ball)
    if episode.throw.episode != t.episode:
        raise RuleViolation(f"{t.slice}/{t.ball} was thrown again (episode "
                            f"{episode.throw.episode}) while episode {t.episode} ran", rule="L3")
    round_no = len(episode.receipts) + 1
    if episode.closed or episode.spent(round_cap):
        own = _closed_by_builder(ledger.require(), common_dir, worktree, ball, episode,
                                 start, env, round_cap, untracked)
        if own is not None:
            return own
    if episode.closed:
        raise RuleViolation(f"episode {t.episode} of {t.slice}/{t.ball} is closed: "
                            f"{episode.closed}", rule="L6")
    if episode.spent(round_cap):
        raise RuleViolation(f"{t.slice}/{t.ball} already used {round_no - 1} rounds in episode "
                            f"{t.episode}; there is no fifth round", rule="L6",
                            hint=spent_hint(ledger.require(), episode,
                                            _out(["rev-parse", "HEAD"], worktree),
                                            str(worktree)))
    moved = worktree_problem(common_dir, worktree, t.branch)
    if moved is not None:
        return _refuse_moved(ledger, common_dir, ball, episode, moved, evidence, round_cap,
                             recorded_by, log, env)
    # L6: one commit a round; commits the builder made itself are folded into it, and the
    # rules below judge their sum
    folded = fold(ledger.require(), episode, worktree, log)
    start = start or _out(["rev-parse", "HEAD"], worktree)
    message = round_message(ball, round_no, outcome, evidence)
    staged = stage(worktree)
    # L4, L9 (default deny), L2, T7.1: what the round brings, judged as the hooks judge it
    found = judge_round(ledger.require(), common_dir, worktree, ball, episode, start, staged,
                        message, round_cap)
    if found:
        outcome, claim = -1, False  # derived by leapgit, whatever the builder said
        evidence = breach_evidence(found, t.ball, evidence)
        message = round_message(ball, round_no, outcome, evidence)
    breach = tuple(sorted({r.path for r in found if r.path}))
    made = commit_staged(worktree, message) if staged is not None else None
    head = made or _out(["rev-parse", "HEAD"], worktree)
    # a commit the post-commit hook recorded while the builder ran is this round's
    round_commit = made or (head if head != start and folded is None else None)
    candidate = _out(["rev-parse", f"{round_commit}^{{tree}}"], worktree) \
        if round_commit else None
    recorded = record_round(
        ledger, t.slice, t.ball, outcome=outcome, evidence=evidence, round_cap=round_cap,
        commit=round_commit, candidate=candidate, recorded_by=recorded_by,
        claim=True if outcome == 1 else claim,  # L7: a 1 here is only ever a claim
        log=log, expect_round=round_no, stuck=stuck, stopped=stopped,
    )
    rolled, failed = None, None
    if recorded.receipt.outcome == -1:
        # L6: the refused commit is kept before anything is rolled back (evidence.py)
        kept = keep(ledger.repo, t.slice, t.ball, t.episode, recorded.receipt.round,
                    round_commit) if round_commit else None
        rolled, failed = leave_refused(ledger.require(), common_dir, worktree, ball, t, env,
                                       kept, start if found else None, round_commit, untracked)
    return RoundClosed(recorded, round_commit, breach, rolled, failed)


def leave_refused(view: LedgerView, common_dir: Path, worktree: Path, ball: BallRecord,
                  t: ThrowRecord, env: dict[str, str] | None, kept: str | None,
                  start: str | None, refused: str | None,
                  untracked: frozenset[str] | None = None
                  ) -> tuple[RolledBack | None, LeapError | None]:
    """L6: the commit of a round refused for a breach (L2, L4, L9, T7.1: the server would
    refuse the branch holding it), once kept under its evidence ref, leaves the ball branch,
    which goes back to the round's ``start`` (None: no breach, the branch keeps it), and its
    changes outside the scope leave the worktree (``rewind``); then the rollback restores
    the scope. Only in the ball's own worktree, on its own branch. The post-commit
    hook asks it too, of a commit refused outside `leap throw --run`."""
    rewound, problem = None, None
    if kept is not None and start is not None and refused is not None and refused != start:
        problem = worktree_problem(common_dir, worktree, t.branch)
        if problem is None:
            try:
                rewound = rewind(common_dir, worktree, t.branch, start, refused, ball,
                                 untracked)
            except LeapError as exc:
                problem = exc.lines()[0]
    rolled, failed = roll_back(view, common_dir, worktree, ball, t, env, evidence=kept)
    if rolled is not None:
        rolled = replace(rolled, rewound=rewound, not_rewound=problem)
    return rolled, failed


def _refuse_moved(
    ledger: Ledger, common_dir: Path, ball: BallRecord, episode: Episode, moved: str,
    evidence: str, round_cap: int, recorded_by: str, log: str | None,
    env: dict[str, str] | None,
) -> RoundClosed:
    """-1 derived by leapgit, recorded without a single git write in that tree: any commit
    there would land on a branch, or in a repository, that is not the ball's own."""
    t = episode.throw
    recorded = record_round(
        ledger, t.slice, t.ball, outcome=-1, round_cap=round_cap, recorded_by=recorded_by,
        claim=False, log=log, expect_round=len(episode.receipts) + 1,
        evidence=(f"the worktree is no longer on its ball branch with its own git dir "
                  f"(L5, L9): {moved}; nothing was committed; builder said: {evidence}"),
    )
    rolled, failed = None, None
    if ball.rollback.strip() == BUILTIN_ROLLBACK:  # files only, never git
        rolled, failed = roll_back(ledger.require(), common_dir, Path(t.worktree or ""),
                                   ball, t, env)
    return RoundClosed(recorded, None, (), rolled, failed)


def _closed_by_builder(view: LedgerView, common_dir: Path, worktree: Path, ball: BallRecord,
                       episode: Episode, start: str | None, env: dict[str, str] | None,
                       round_cap: int, untracked: frozenset[str] | None = None
                       ) -> RoundClosed | None:
    """The builder's own commit in this round (HEAD moved from ``start``), recorded by the
    hook, ended the episode (a -1, or its last round): that receipt is this round's; a -1 is
    rolled back."""
    last = episode.receipts[-1] if episode.receipts else None
    head = _head(worktree)
    if start is None or last is None or last.commit is None or head == start or \
            head != last.commit:
        return None
    rolled, failed = None, None
    if last.outcome == -1:  # the hook kept the commit as evidence when it recorded the -1

        t = episode.throw
        with open_repo(str(common_dir)) as repo:
            kept = keep(repo, t.slice, t.ball, t.episode, last.round, last.commit)
        # the hook refused a breach (a -1 the builder said itself stays on the branch)
        breach = judge_round(view, common_dir, worktree, ball, episode, start, None, "",
                             round_cap)
        rolled, failed = leave_refused(view, common_dir, worktree, ball, t, env, kept,
                                       start if breach else None, last.commit, untracked)
    return RoundClosed(RoundRecorded(last, episode.checkpoint, None), last.commit, (), rolled,
                       failed)


def roll_back(view: LedgerView, common_dir: Path, worktree: Path, ball: BallRecord,
              t: ThrowRecord, env: dict[str, str] | None, evidence: str | None = None
              ) -> tuple[RolledBack | None, LeapError | None]:
    """L6: the -1 is recorded already; a rollback that fails is reported with it, never
    raised past it (the round must not look unrecorded). The scope goes back to the red
    commit when there is one (T7.1: the frozen test stays)."""
    red = latest_red(view, t.slice, t.ball)
    try:
        done = rollback(common_dir, worktree, ball, t, handoff.environment(env or {}),
                        red.commit if red is not None else None)
        return replace(done, evidence=evidence), None
    except LeapError as exc:
        return None, exc
    except OSError as exc:
        return None, RuleViolation(f"the rollback of {t.slice}/{t.ball} failed: {exc}",
                                   field="rollback", rule="L6",
                                   hint=f"restore the scope files by hand in {worktree}")
