"""What a round brings, judged before it is recorded: the commits the builder made since the
round started and the commit `leap round` is about to make of everything left uncommitted,
each through ``rules.commits.check_commit``, the function the post-commit hook and
``pre-receive`` ask (issue 13: client and server never disagree). A refusal of the
``BREACH`` kind (L2, L4, L9, T7.1) makes the round a -1, derived by leapgit."""

from __future__ import annotations

from pathlib import Path

from dulwich.objects import Commit

from leapgit import git
from leapgit.errors import printable
from leapgit.gitobj import oid
from leapgit.ledger.repo import open_repo
from leapgit.ledger.view import LedgerView
from leapgit.records.types import BallRecord
from leapgit.rules.balls import not_rounds
from leapgit.rules.commits import BREACH, OUTSIDE, check_commit
from leapgit.rules.episodes import Episode, episode_reds
from leapgit.rules.objects import Objects
from leapgit.rules.refusal import Refusal

_MOST = 20  # a receipt is a record a person reads: name the first paths, count the rest


def _git(args: list[str], cwd: Path, check: bool = True) -> int:
    # L6: a Ctrl-C must not kill the git commands that close a round
    return git.run(args, cwd, check=check, detached=True).returncode


def _out(args: list[str], cwd: Path) -> str:
    return git.run(args, cwd, detached=True).stdout.decode().strip()


def stage(worktree: Path) -> str | None:
    """Stage every uncommitted change, untracked files included (ignored files are not):
    the tree the round's commit will hold, or None when it would change nothing."""
    _git(["add", "-A"], worktree)
    if _git(["diff", "--cached", "--quiet"], worktree, check=False) == 0:
        return None
    return _out(["write-tree"], worktree)


def _prospective(tree: str, parent: str, message: str) -> Commit:
    """The commit the round is about to make, as the rules read one (it is never stored)."""
    made = Commit()
    made.tree, made.parents, made.message = oid(tree), [oid(parent)], message.encode()
    made.author = made.committer = b"leapgit <leapgit@localhost>"
    made.author_time = made.commit_time = made.author_timezone = made.commit_timezone = 0
    return made


def judge_round(view: LedgerView, common_dir: Path, worktree: Path, ball: BallRecord,
                episode: Episode, start: str, staged: str | None, message: str,
                round_cap: int) -> list[Refusal]:
    """The breaches among the commits since ``start`` and the ``staged`` tree committed
    with ``message`` on top of them."""
    t = episode.throw
    ref = f"refs/heads/{t.branch}"
    reds = episode_reds(view, t.slice, t.ball, t.episode)
    head = _out(["rev-parse", "HEAD"], worktree)
    with open_repo(str(common_dir)) as repo:
        objects = Objects(repo)
        pre = not_rounds(objects, reds, t.base, head)
        commits = objects.new_commits(head, [start])
        if staged is not None:
            commits.append(_prospective(staged, head, message))
        found = [r for c in commits for r in check_commit(
            objects, ref, ball, c, round_cap, reds, red_test=c.id.decode() in pre)]
    return [r for r in found if r.rule in BREACH]


def listed(items: list[str], sep: str = ", ", most: int = _MOST) -> str:
    named = sep.join(items[:most])
    return named + (f" and {len(items) - most} more" if len(items) > most else "")


def breach_evidence(found: list[Refusal], ball_id: str, said: str) -> str:
    """The receipt's evidence for a breach: what leapgit found, then what the builder said."""
    # paths and messages shown escaped: a name need not be UTF-8, and may hold a newline
    frozen = sorted({printable(r.path) for r in found if r.rule == "T7.1" and r.path})
    if frozen:
        return (f"frozen test file(s) edited after red (T7.1): {', '.join(frozen)}; "
                f"builder said: {said}")
    outside = sorted({printable(r.path) for r in found if r.kind == OUTSIDE and r.path})
    other = list(dict.fromkeys((r.rule, printable(r.path or ""), printable(r.message))
                               for r in found if r.kind != OUTSIDE))
    rules = sorted({rule for rule, _, _ in other} | ({"L4", "L9"} if outside else set()))
    parts = ([f"{listed(outside)} outside the scope of {ball_id}"] if outside else []) + \
        [listed([f"{path}: {message}" if path else message for _, path, message in other],
                "; ")]
    return (f"scope breach ({', '.join(rules)}): {'; '.join(p for p in parts if p)}; "
            f"builder said: {said}")
