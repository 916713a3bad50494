"""Where ball worktrees live, and the plain-git operations that make and remove them (L5).

Each ball gets a throwaway checkout of its base on its own branch. By default the worktrees
live beside the user's checkout (``<repo>.leap-worktrees/<slice>/<ball>``), configurable as
``worktrees.root``; a worktree is never placed inside another worktree (the user's checkout
included), so no tree is part of another's checkout and no scope check or ``git add -A`` in
one reaches into another. It is not a sandbox: a builder can still write elsewhere by an
absolute path; ``leap throw --run`` detects such writes to the user's checkout and to idle
ball worktrees and holds the round (``watch.Watch``).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from leapgit import git
from leapgit.errors import Hold, RuleViolation, UsageError, printable
from leapgit.ledger import query
from leapgit.ledger.history import finding_reds, latest_red
from leapgit.ledger.lock import LockTimeout, WriterLock
from leapgit.ledger.workspace import Workspace, require_folder
from leapgit.records.types import ThrowRecord
from leapgit.rules.episodes import branch_episodes

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from leapgit.ledger.store import LedgerView
    from leapgit.rules.episodes import Episode


PLACE_LOCK = "leap-place.lock"
PLACE_WAIT = 300.0  # seconds a command waits for another one's placing
_place_locks: dict[str, WriterLock] = {}


@contextlib.contextmanager
def placing(ws: Workspace) -> Iterator[None]:
    """L5, L8 (nothing lost under concurrency): one command at a time decides about and
    places or removes ball worktrees in a clone (an advisory lock on ``<git dir>/
    leap-place.lock``, dropped by the kernel when its holder dies; the file names the
    holder's pid and command line). A throw makes a ball's worktree and branch before its
    record: a second throw, or a prune, deciding meanwhile would take them for a killed
    throw's leftover and remove them. Held from the reading of the ledger to the record,
    so the second decides on what the first recorded."""
    path = ws.paths.common_dir / PLACE_LOCK
    lock = _place_locks.setdefault(str(path), WriterLock(path, PLACE_WAIT, on_wait=_waiting))
    lock.timeout = PLACE_WAIT
    try:
        lock.__enter__()
    except LockTimeout:
        pid, command = _holder_of(path)
        who = f"pid {pid}, `{command}`" if pid else "another leap command"
        raise Hold(f"{who} placed or removed ball worktrees in this clone for "
                   f"{PLACE_WAIT:g} s (it holds {path}); nothing was changed", rule="L5",
                   hint="run the same command again once it is done" + (
                       f"; if it hangs, stop it (`kill {pid}`)" if pid else "")) from None
    try:
        if not os.path.islink(path):  # never written through a link planted there
            lock.note(f"{os.getpid()} {shlex.join(['leap', *sys.argv[1:]])}\n")
        yield
    finally:
        lock.__exit__(None, None, None)


def _holder_of(path: Path | str) -> tuple[int | None, str]:
    """The pid and command line the place lock's holder wrote into it, if it did."""
    try:
        with open(path, "rb") as fh:
            said = fh.read(4096).decode("utf-8", "replace").strip()
    except OSError:
        return None, ""
    pid, _, command = said.partition(" ")
    if not (pid.isascii() and pid.isdigit() and len(pid) <= 10):
        return None, ""  # none it can read: the waiting is said without it
    return int(pid), printable(command)


def _waiting(path: str) -> None:
    pid, command = _holder_of(path)
    who = f"pid {pid}, `{command}`," if pid else "another leap command"
    sys.stderr.write(f"leap: waiting for {who} placing or removing ball worktrees in this "
                     f"clone ({path}); giving up after {PLACE_WAIT:g} s\n")
    sys.stderr.flush()


@dataclass(frozen=True)
class Worktree:
    path: Path
    head: str | None
    branch: str | None  # refs/heads/...
    locked: bool = False


def worktree_root(ws: Workspace) -> Path:
    main = ws.main_top
    anchor = main if main is not None else ws.paths.common_dir
    configured = ws.config.worktree_root
    if configured:
        root = Path(os.path.expanduser(configured))
        return Path(os.path.abspath(anchor / root if not root.is_absolute() else root))
    return anchor.parent / f"{anchor.name}.leap-worktrees"


def target(ws: Workspace, slice_id: str, ball_id: str) -> Path:
    return worktree_root(ws) / slice_id / ball_id


def localized(ws: Workspace, ep: Episode) -> Episode:
    """The episode with its throw's worktree where this machine builds it (issue 16: a
    published ball's throw names none; each worker builds in its own clone's place)."""
    if not ep.throw.published:
        return ep
    return ep._replace(throw=ep.throw._replace(worktree=str(worktree_of(ws, ep.throw))))


def worktree_of(ws: Workspace, thrown: ThrowRecord) -> Path:
    """Where this machine builds a thrown ball: the worktree its throw names, or, for a
    ball published to workers (issue 16: its throw names none, each worker builds in its
    own clone), the ball's place here."""
    if thrown.published or not thrown.worktree:
        return target(ws, thrown.slice, thrown.ball)
    return Path(thrown.worktree)


def list_worktrees(ws: Workspace) -> list[Worktree]:
    return _listed(ws.paths.root)


NO_COMMIT = "0" * 40  # the HEAD git lists for a worktree whose branch is not there


def _listed(root: Path) -> list[Worktree]:
    """The worktrees git lists, asked from ``root`` (a checkout or the common git dir)."""
    text = git.run(["worktree", "list", "--porcelain"], root).stdout.decode(
        "utf-8", "surrogateescape")  # a branch name need not be UTF-8
    out: list[Worktree] = []
    for block in text.strip().split("\n\n"):  # "\n" only: a name may hold U+2028
        fields = dict(line.partition(" ")[::2] for line in block.split("\n") if line)
        if "worktree" in fields:
            out.append(Worktree(Path(fields["worktree"]), fields.get("HEAD"),
                                fields.get("branch"), "locked" in fields))
    return out


def registered(ws: Workspace, path: Path) -> Worktree | None:
    return _registered(list_worktrees(ws), path)


def _registered(worktrees: list[Worktree], path: Path) -> Worktree | None:
    real = Path(os.path.realpath(path))
    return next((w for w in worktrees if Path(os.path.realpath(w.path)) == real), None)


def require_worktree(root: Path, path: Path, branch: str, ball: str,
                     recorded: Callable[[], str] | None = None) -> None:
    """L5: the ball's worktree is there to build in, or a hold (exit 3: the work stands on
    its branch, only its place is missing) says it is not and names the one way back. Its
    branch holds the ball's work, so the worktree is checked out on it again; a folder
    deleted by hand is still listed by git, which must forget it first; a worktree moved
    elsewhere is moved back; a locked one may be on a disk not mounted now. Every command
    that meets a missing worktree (`leap throw --run`, `leap round`, `leap ball check`)
    asks this, and none sends the user to another leap command. A branch deleted by hand
    as well is made again at ``recorded()``, the commit the ledger last names for the ball
    (``recorded_tip``): `git worktree add` of a branch that is gone fails."""
    every = _listed(root)
    listed = _registered(every, path)
    if listed is not None and path.is_dir() and not no_checkout(path):
        if listed.head != NO_COMMIT or recorded is None or \
                listed.branch != f"refs/heads/{branch}" or \
                git.rev_parse(f"refs/heads/{branch}", root) is not None:
            return
        # its branch deleted by hand (`git update-ref -d`): the worktree stands on none;
        # put back only where none is (an empty old value: git never overwrites a branch)
        put = f"git update-ref refs/heads/{shlex.quote(branch)} {recorded()} ''"
        raise Hold(f"the branch {branch} of {ball} is gone; its worktree {path} still "
                   "stands on it", rule="L5", hint=f"put the branch back at the ball's last "
                   f"recorded commit (`{put}`), then run this again; the worktree's edits "
                   "stay as they are")
    where = shlex.quote(str(path))
    add = f"git worktree add {where} {shlex.quote(branch)}"
    aside = shlex.quote(f"{path}.aside")
    gone = recorded is not None and git.rev_parse(f"refs/heads/{branch}", root) is None
    if gone:
        assert recorded is not None
        add = f"git worktree add -b {shlex.quote(branch)} {where} {recorded()}"
    if listed is not None and path.is_dir():  # a kill inside `git worktree remove`, say
        forget = f"git worktree remove{' -f -f' if listed.locked else ''} {where}"
        raise Hold(f"the worktree of {ball} at {path} has no .git file: it is no checkout "
                   "(git still lists it)", rule="L5",
                   hint=f"move the folder aside and recreate the worktree on its branch "
                   f"(`{aside_hint(path)} && {forget} && {add}`; what it held stays in "
                   f"{aside}), then run this again")
    elsewhere = None if gone else next((w for w in every if w.branch == f"refs/heads/{branch}"
                                        and w is not listed and w.path.is_dir()), None)
    if elsewhere is not None:  # moved (`git worktree move`), or checked out by hand
        there = shlex.quote(str(elsewhere.path))
        how = f"git worktree move {there} {where}" if elsewhere is not every[0] else \
            f"git -C {there} switch --detach && {add}"
        raise Hold(f"the worktree of {ball} is not at {path}: its branch is checked out at "
                    f"{elsewhere.path}", rule="L5", hint=f"`{how}`, then run this again")
    if listed is not None and listed.locked:  # on a disk not mounted now, say
        raise Hold(f"the worktree of {ball} is not at {path}, and git holds it locked",
                    rule="L5", hint=f"mount its disk; or, if it is gone for good, "
                    f"`git worktree unlock {where} && git worktree remove {where} && {add}`, "
                    "then run this again")
    if listed is None and path.exists():  # a folder git no longer lists as a worktree
        raise Hold(f"the worktree of {ball} at {path} is not listed by git", rule="L5",
                   hint=f"move the folder aside and recreate the worktree on its branch "
                   f"(`mv {where} {aside} && {add}`; what it held stays in {aside}), then "
                   "run this again")
    # git forgets this one folder only (a prune would forget every missing one, another
    # ball's on a disk not mounted now included, with leap's state in its admin folder)
    how = add if listed is None else f"git worktree remove {where} && {add}"
    if gone:
        raise Hold(f"the worktree of {ball} is gone, and its branch {branch} with it: "
                   f"{path}", rule="L5", hint=f"recreate both at the ball's last recorded "
                   f"commit (`{how}`), then run this again")
    moved = "" if listed is None else "; if its folder was moved by hand, `git worktree " \
        "repair NEWPATH` finds it instead, edits kept"
    raise Hold(f"the worktree of {ball} is gone: {path}", rule="L5",
               hint=f"recreate it on its branch (`{how}`), then run this again{moved}")


def recorded_tip(view: LedgerView, root: Path, episode: Episode) -> str:
    """L8 (nothing lost): the newest commit the ledger names on the episode's branch, where
    a branch deleted by hand is made again. The branch starts at the ball's red (else its
    base), and each kept round, and each finding's red (T7.6), goes on from the one before,
    through the episodes a resumed throw goes on with (``rules.episodes.branch_episodes``).
    Walked in the order they were recorded, the newest is the last that descends from what
    was found before it; a refused round (-1) was rolled back and is not on it."""
    best = episode.throw.base
    for commit in _recorded(view, episode):
        if git.is_ancestor(root, best, commit):
            best = commit
    return best


def recorded_tip_here(view: LedgerView, root: Path, episode: Episode) -> str | None:
    """``recorded_tip`` when this clone holds every commit the ledger records on the branch;
    else None: a commit it lacks would read as no descendant, and the tip found would be an
    older one (a blind review: a branch put back there lost the rounds above it)."""
    if any(git.rev_parse(c, root) is None for c in [episode.throw.base,
                                                      *_recorded(view, episode)]):
        return None
    return recorded_tip(view, root, episode)


def _recorded(view: LedgerView, episode: Episode) -> list[str]:
    """The ball's red, then each kept round's commit and each finding's red of the episodes
    the branch goes on with, in the order they were recorded."""
    t = episode.throw
    red = latest_red(view, t.slice, t.ball)
    later: list[tuple[str, str]] = []
    for number in sorted(branch_episodes(view, t.slice, t.ball, t.episode)):
        later += [(r.recorded_at, r.commit) for r in query.receipts(view, t.slice, t.ball, number)
                  if r.commit and r.outcome != -1]
        later += [(r.recorded_at, r.commit) for r in finding_reds(view, t.slice, t.ball, number)]
    return ([red.commit] if red is not None else []) + [c for _, c in sorted(later)]


def recorded_in(ws: Workspace, episode: Episode) -> str:
    """``recorded_tip``, read from the workspace's ledger."""
    with ws.ledger() as ledger:
        return recorded_tip(ledger.require(), ws.paths.root, episode)


def check_root(ws: Workspace) -> None:
    """L5: the worktrees' root is a folder, or one can be made there (a file, or a place
    under /proc, fails only when the first worktree is made, after the checks)."""
    require_folder(worktree_root(ws), file=".leap/config.yaml", field="worktrees.root",
                   hint="point worktrees.root at a folder outside every checkout", rule="L5")


def check_placement(ws: Workspace, path: Path) -> None:
    """L5: isolated means outside every other checkout of the repository."""
    real = Path(os.path.realpath(path))
    for wt in list_worktrees(ws):
        other = Path(os.path.realpath(wt.path))
        if other == real:
            continue
        if real.is_relative_to(other) or other.is_relative_to(real):
            raise RuleViolation(
                f"worktree {path} would be inside (or around) the checkout {wt.path}",
                file=".leap/config.yaml", field="worktrees.root", rule="L5",
                hint="point worktrees.root at a folder outside every checkout",
            )


def add(ws: Workspace, path: Path, branch: str, base: str, *, new_branch: bool) -> None:
    check_placement(ws, path)
    if path.exists() and any(path.iterdir()):
        raise UsageError(
            f"{path} already exists and is not a worktree of this ball",
            # no command: `leap worktree prune` removes only worktrees leapgit made
            hint="move it away; leapgit never removes a folder it did not make",
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    args = ["worktree", "add", "--quiet"]
    args += ["-b", branch, str(path), base] if new_branch else [str(path), branch]
    git.run(args, ws.paths.root)


def branch_exists(ws: Workspace, branch: str) -> bool:
    return git.rev_parse(f"refs/heads/{branch}", ws.paths.root) is not None


HELD = "another checkout stands on it"  # ``remove``: nothing was touched


def remove(ws: Workspace, path: Path, branch_at: tuple[str, str] | None, *, force: bool,
           locked: bool = False) -> str | None:
    """Remove one ball's worktree, and its branch when ``branch_at`` names it with the tip
    it was judged at: deleted by compare-and-swap, so a commit that lands meanwhile keeps
    the branch (nothing lost, L8). None when all asked for went; else why the branch was
    kept: ``HELD`` when another worktree has it checked out (``holder``: its callers say
    so first; then nothing was touched), it moved meanwhile, or git's reason it could not
    delete it (a lock file, say). ``locked``: the lock is git's own, of a `git worktree
    add` a kill stopped (``prune.half_made``), and goes too. A worktree whose folder is
    gone is removed all the same (git forgets it); no other worktree is touched: a
    repository-wide `git worktree prune` would forget the user's on a disk not mounted."""
    if branch_at is not None and holder(ws, path, branch_at[0]) is not None:
        return HELD  # the checkout there stands on it: never pulled from under it
    if registered(ws, path) is not None:
        flags = ["--force"] * ((2 if locked else 1) if force or locked else 0)
        git.run(["worktree", "remove", *flags, str(path)], ws.paths.root)
    if branch_at is None:
        return None
    branch, tip = branch_at
    ref = f"refs/heads/{branch}"
    done = git.run(["update-ref", "-d", ref, tip], ws.paths.root, check=False)
    now = None if done.returncode == 0 else git.rev_parse(ref, ws.paths.root)
    if now is None:
        return None
    if now != tip:
        return "it moved meanwhile"
    said = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return f"git could not delete it ({printable(said[0] if said else 'update-ref failed')})"


def no_checkout(path: Path) -> bool:
    """A folder without its `.git` file: no checkout, whatever git still lists there (a
    kill inside `git worktree remove` deletes that file among the first)."""
    return path.is_dir() and not os.path.lexists(path / ".git")


def aside_hint(path: Path) -> str:
    """The command that moves the folder at ``path`` aside, what it holds kept."""
    return f"mv {shlex.quote(str(path))} {shlex.quote(f'{path}.aside')}"


def holder(ws: Workspace, path: Path, branch: str) -> Worktree | None:
    """A worktree other than the one at ``path`` (the user's checkout included) that has
    ``branch`` checked out: deleting the branch would leave it standing on nothing. One
    whose folder is gone stands on nothing already (git lists it as prunable), unless git
    holds it locked: a disk not mounted now, whose checkout comes back."""
    real = Path(os.path.realpath(path))
    return next((w for w in list_worktrees(ws) if w.branch == f"refs/heads/{branch}"
                 and Path(os.path.realpath(w.path)) != real
                 and (w.path.is_dir() or w.locked)), None)


def freeing(other: Worktree) -> str:
    """The command that frees a branch ``other`` has checked out, its edits kept."""
    return f"git -C {shlex.quote(str(other.path))} switch --detach"
