"""The shared remote as the work queue (issue 16): what the thrower and the workers do with
it besides `leap sync`. Ball branches travel as the remote holds them; a round's commit and
its receipt go up in one atomic push (``sync(also=...)``); claims are decided by the
remote's own compare-and-swap (``sync.push_records``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path

from leapgit import git
from leapgit.errors import LeapError, RuleViolation
from leapgit.ledger import query
from leapgit.ledger import sync as syncing
from leapgit.ledger.sync import fetch, fetch_only
from leapgit.ledger.workspace import Workspace
from leapgit.records.types import ThrowRecord
from leapgit.rules.episodes import current_episode, drops_branch
from leapgit.worktrees import place
from leapgit.worktrees.closeround import admin_dir
from leapgit.worktrees.drivelock import NAME
from leapgit.worktrees.place import list_worktrees

REMOTE_PATIENCE = 30 * 60  # seconds a loop looks again for a remote out of reach


class Reach:
    """Whether the shared remote answers, for a loop that can wait for it (`leap run
    --remote`, `leap worker`), kept by kind of call (a look, a step, a claim): a fetch that
    answers says nothing of a push that does not. An outage is said once, with how long the
    loop waits, and its end once every kind answers again; past ``REMOTE_PATIENCE`` of one
    kind failing, the loop gives up (``gave_up``)."""

    def __init__(self, remote: str, poll: float, say: Callable[[str], None]) -> None:
        self.remote, self.poll, self.say = remote, poll, say
        self.since: dict[str, float] = {}  # kind -> when it first failed, this outage
        self.last: dict[str, float] = {}  # kind -> when it last failed
        self.gave_up: str | None = None

    def _stale(self, kind: str, now: float) -> bool:
        """A kind that has not been tried for a while (no claim to make, no step to take):
        its old failure belongs to an outage that is over once the looks answer."""
        return now - self.last.get(kind, now) > max(10 * self.poll, 60.0)

    @property
    def away(self) -> bool:
        """Whether the looks go unanswered (no new step starts meanwhile)."""
        return "look" in self.since

    def lost(self, exc: git.RemoteUnavailable, kind: str = "look") -> str | None:
        """The reason to give up, once ``kind`` has failed too long; else None."""
        now = time.monotonic()
        why = exc.problems[0].message if exc.problems else str(exc)
        if kind in self.since and "look" not in self.since and self._stale(kind, now):
            del self.since[kind]  # a new outage, not the one before
        self.last[kind] = now
        if kind not in self.since:
            if not self.since:  # said once an outage, whichever kind of call meets it first
                self.say(f"{self.remote} is out of reach ({why}): looking again every "
                         f"{self.poll:g} s, at most {REMOTE_PATIENCE / 60:g} minutes")
            self.since[kind] = now
        elif now - self.since[kind] > REMOTE_PATIENCE:
            self.gave_up = (f"{self.remote} has been out of reach for "
                            f"{REMOTE_PATIENCE / 60:g} minutes ({why})")
        return self.gave_up

    def back(self, kind: str = "look") -> None:
        was = bool(self.since)
        self.since.pop(kind, None)
        now = time.monotonic()
        for other in [k for k in self.since if "look" not in self.since and
                      self._stale(k, now)]:
            del self.since[other]
        if was and not self.since:
            self.say(f"{self.remote} answers again: going on")


def tracking(remote: str, branch: str) -> str:
    """Where this clone keeps the remote's copy of a ball branch."""
    return git.leap_tracking(remote, f"refs/heads/{branch}")


def balls_refspec(ws: Workspace, remote: str) -> str:
    """The remote's ball branches into ``tracking`` refs (never into local branches: one
    may be checked out in a worktree here)."""
    prefix = ws.config.ball_branch_prefix
    return f"+refs/heads/{prefix}/*:{tracking(remote, prefix)}/*"


def sync_with_balls(ws: Workspace, remote: str, push: bool = True) -> None:
    """`leap sync` and ``fetch_balls`` in one fetch (a look of `leap run --remote` or of a
    worker, several a second while workers build)."""
    syncing.sync(remote, start=ws.paths.root, push=push, fetch_also=(balls_refspec(ws, remote),))


def fetch_balls(ws: Workspace, remote: str) -> None:
    """The remote's ball branches alone (a score reads its ball's as the remote holds it);
    a failure says what `sync` says of one (a lock file left here is named)."""
    failed = fetch_only(ws.paths.root, remote, [balls_refspec(ws, remote)],
                        "no ball branch fetched, nothing pushed")
    if failed is not None:
        raise failed


def remote_tip(ws: Workspace, remote: str, branch: str) -> str | None:
    return git.rev_parse(tracking(remote, branch), ws.paths.root)


def adopt_ledger(ws: Workspace, remote: str) -> None:
    """A fresh clone takes the remote's ledger as its own (compare-and-swap on an absent
    ref: a ledger already here is kept, `leap sync` joins the two)."""
    ref = ws.config.ledger_ref
    if git.rev_parse(ref, ws.paths.root) is not None:
        return
    track = git.leap_tracking(remote, ref)

    proc = fetch(ws.paths.root, ["--quiet", "--no-tags", remote, f"+{ref}:{track}"])
    tip = git.rev_parse(track, ws.paths.root) if proc.returncode == 0 else None
    if tip is None:
        err = proc.stderr.decode(errors="replace").strip()
        failed = git.RemoteUnavailable if git.unavailable(err) else git.GitFailed
        raise failed(f"no ledger on {remote} ({git.says(err) or ref})",
                     hint=f"the thrower pushes it (`leap sync {remote}`)")
    git.run(["update-ref", ref, tip, ""], ws.paths.root, check=False)


def push_branch(ws: Workspace, remote: str, branch: str, sha: str, force: bool) -> None:
    """One ball branch to the remote (after the ledger that names its throw: the server
    judges a ball branch against the ledger it stores)."""
    spec = f"{'+' if force else ''}{sha}:refs/heads/{branch}"
    proc = git.run(["push", "--porcelain", "--no-verify", remote, spec], ws.paths.root,
                   check=False)  # the server judges it (``sync._push``)
    if proc.returncode != 0:
        text = (proc.stdout + proc.stderr).decode(errors="replace")
        lines = [ln for ln in text.splitlines() if ln.startswith("remote:") and ln[7:].strip()]
        failed = git.unavailable_push(remote, text, lines, ws.paths.root)
        if failed is not None:  # not a refusal: nothing was judged
            raise failed
        raise RuleViolation(f"the remote refused {branch}", rule="L9",
                            hint="; ".join(ln[7:].strip() for ln in lines) or
                            text.strip().splitlines()[-1])
    git.run(["update-ref", tracking(remote, branch), sha], ws.paths.root, check=False)


def publish(ws: Workspace, remote: str, slice_id: str, balls: list[str]) -> None:
    """Issue 16: the throw records (with the ledger), then each published ball's branch as
    it stands here, unless the remote holds it already or further on. Run again after a
    kill between the two, it pushes what is missing."""
    sync_with_balls(ws, remote)
    push_branches(ws, remote, slice_id, balls)


def push_branches(ws: Workspace, remote: str, slice_id: str, balls: list[str]) -> None:
    """``publish`` past its sync: each published ball's branch as it stands here, unless
    the remote holds it already or further on (a look of `leap run --remote` asks it of
    every ball the workers build, after its own sync)."""
    with ws.ledger() as ledger:
        view = ledger.require()
        thrown = [current_episode(view, slice_id, b).throw for b in balls
                  if query.episodes(view, slice_id, b)]
    for t in thrown:
        if not t.published:
            continue
        here = git.rev_parse(f"refs/heads/{t.branch}", ws.paths.root)
        there = remote_tip(ws, remote, t.branch)
        if here is None or here == there:
            continue
        if there is not None and git.is_ancestor(ws.paths.root, here, there):
            continue  # the remote is further on: a worker's rounds
        # a fresh episode's branch replaces an earlier episode's: the server lets a branch
        # move off a tip that does not descend from the current base, or off the tip its
        # earlier episode recorded when the throw started afresh on the same base
        fresh = there is not None and (not git.is_ancestor(ws.paths.root, t.base, there)
                                       or _drops(ws, t, there))
        push_branch(ws, remote, t.branch, here, force=fresh)


def _drops(ws: Workspace, thrown: ThrowRecord, tip: str) -> bool:
    with ws.ledger() as ledger:
        return drops_branch(ledger.require(), thrown, tip)


def take_home(ws: Workspace, remote: str, slice_id: str) -> None:
    """Before a throw to workers from any machine: the remote's ledger joined with this one
    (`leap sync`), and each of the slice's ball branches that no worktree here has checked
    out moved to the remote's tip (``bring_home``), so a ball resumed here goes on from the
    rounds its workers pushed, even where it was never thrown before."""
    sync_with_balls(ws, remote)
    prefix = f"{ws.config.ball_branch_prefix}/{slice_id}/"
    there = git.run(["for-each-ref", "--format=%(refname)",
                     f"{tracking(remote, prefix.rstrip('/'))}/"], ws.paths.root).stdout
    busy = {w.branch for w in list_worktrees(ws) if w.branch}
    tips = ball_tips(ws, remote)
    for name in filter(None, there.decode("utf-8", "surrogateescape").split("\n")):
        branch = prefix + name.rsplit("/", 1)[1]
        if f"refs/heads/{branch}" not in busy:
            bring_home(ws, remote, branch, tips)


def ball_tips(ws: Workspace, remote: str) -> dict[str, str]:
    """Every ball branch here and its copy from ``remote`` (ref name -> commit), read in
    one git process (a look of `leap run --remote` asks for each ball's two)."""
    prefix = ws.config.ball_branch_prefix
    out = git.run(["for-each-ref", "--format=%(objectname) %(refname)",
                   f"refs/heads/{prefix}/", f"{tracking(remote, prefix)}/"],
                  ws.paths.root).stdout.decode("utf-8", "surrogateescape")
    # "\n" only: a ref name may hold U+2028 or U+0085, which splitlines() would break at
    return {name: sha for sha, _, name in (line.partition(" ") for line in out.split("\n"))
            if name}


def bring_home(ws: Workspace, remote: str, branch: str,
               tips: Mapping[str, str] | None = None) -> str | None:
    """The thrower's own copy of a published ball's branch moves to the remote's tip (a
    fast-forward, compare-and-swap): scoring and merging read it. None when the remote
    holds no such branch; a local branch the remote's does not descend from is kept, and so
    is one the remote still holds a tip for that the ball's current throw dropped (L3, L6:
    thrown afresh, the branch here starts at the base until it is published).
    ``tips``: the refs as ``ball_tips`` read them a moment ago."""
    ref = f"refs/heads/{branch}"
    if tips is None:
        there, here = remote_tip(ws, remote, branch), git.rev_parse(ref, ws.paths.root)
    else:
        there, here = tips.get(tracking(remote, branch)), tips.get(ref)
    if there is None:
        return None
    if here == there:
        return there
    if here is not None and not git.is_ancestor(ws.paths.root, here, there):
        return here
    if here is not None and _dropped(ws, branch, there):
        return here
    moved = git.run(["update-ref", ref, there, here or ""], ws.paths.root, check=False)
    # a ref another git holds locked, or moved meanwhile: the branch here is what it was (a
    # blind review: taken as moved, a score read the branch without the worker's round)
    return there if moved.returncode == 0 else git.rev_parse(ref, ws.paths.root)


def _dropped(ws: Workspace, branch: str, tip: str) -> bool:
    """Whether ``tip`` is an earlier episode's branch that the ball's current throw dropped
    (``rules.episodes.drops_branch``, the rule `publish` and the server ask)."""
    prefix = ws.config.ball_branch_prefix + "/"
    slice_id, _, ball_id = branch.removeprefix(prefix).partition("/")
    with ws.ledger() as ledger:
        view = ledger.require()
        if not ball_id or not query.episodes(view, slice_id, ball_id):
            return False
        return drops_branch(view, current_episode(view, slice_id, ball_id).throw, tip)


def _killed_round_of(ws: Workspace, path: Path, slice_id: str, ball_id: str, episode: int,
                     tip: str) -> bool:
    """Whether ``path``'s drive lock names a round of ``episode`` that a worker killed
    mid-round (a crash) never recorded, started at the remote's ``tip``: what its builder
    left there is that round's, recorded first (``carry.close_killed_round``), as a local
    run's; not work to refuse the ball for (a chaos hunt: the restarted worker refused the
    ball it had crashed in, and the slice waited for good)."""
    admin = admin_dir(ws.paths.common_dir, path)
    if admin is None:
        return False
    try:
        said = (admin / "leap" / NAME).read_text(encoding="utf-8").split() + ["-"] * 6
    except OSError:
        return False
    if not (said[2].isdigit() and said[3] == str(episode) and said[4] == tip):
        return False

    with ws.ledger() as ledger:  # still unrecorded: no other worker recorded that round
        done = query.receipts(ledger.require(), slice_id, ball_id, episode)
    return len(done) + 1 == int(said[2])


def ensure_worktree(ws: Workspace, path: Path, branch: str, tip: str,
                    claimed: tuple[str, str, int] = ("", "", 0)) -> None:
    """A worker's worktree for a ball it claimed, on the branch at the remote's ``tip``:
    made when absent, moved forward when clean and behind. A tree holding anything not
    committed is never touched (nothing lost): the ball is refused here, named; unless it
    is the round of the ``claimed`` (slice, ball, episode) a killed worker left, started at
    ``tip`` and recorded by no one since, which is closed first with what its builder left."""
    slice_id, ball_id, episode = claimed

    ref = f"refs/heads/{branch}"
    found = place.registered(ws, path)
    if found is None:
        here = git.rev_parse(ref, ws.paths.root)
        if here is not None and here != tip and not git.is_ancestor(ws.paths.root, here, tip):
            raise RuleViolation(f"branch {branch} here holds commits the remote lacks "
                                f"({here[:12]})", rule="L9",
                                hint="push or drop them, then run the worker again")
        git.run(["update-ref", ref, tip, here or ""], ws.paths.root)
        place.add(ws, path, branch, tip, new_branch=False)
        return
    status = git.run(["status", "--porcelain", "--untracked-files=all"], path, check=False)
    head = git.rev_parse("HEAD", path)
    if _killed_round_of(ws, path, slice_id, ball_id, episode, tip):
        return  # its round is closed first, with what its builder left (L6, carry)
    if status.returncode != 0 or status.stdout.strip():
        raise RuleViolation(f"the worktree {path} holds work no round recorded", rule="L9",
                            hint="commit or move it away; the worker never discards it")
    if head != tip:
        if head is not None and not git.is_ancestor(ws.paths.root, head, tip):
            raise RuleViolation(f"the worktree {path} is at {head[:12]}, which the remote's "
                                f"{branch} does not hold", rule="L9",
                                hint="push or drop that commit, then run the worker again")
        try:
            git.run(["merge", "--ff-only", "--quiet", tip], path)
        except LeapError as exc:
            raise RuleViolation(f"cannot bring {path} to {tip[:12]}: {exc.lines()[0]}",
                                rule="L9") from None
