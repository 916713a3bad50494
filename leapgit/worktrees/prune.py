"""`leap worktree prune [SLICE]`: remove the worktrees and branches of finished balls only.

Finished means merged onto the spine, refused (-1) and rolled back, or of an abandoned
slice. A ball in flight or
held at a checkpoint keeps its worktree (a fresh episode resumes there). A worktree with
uncommitted work is never removed unless forced; the files a rollback restored to their base
blobs do not count as work. A branch or worktree of a ball the ledger never saw thrown (what a
throw killed before its record leaves) goes too, when it holds nothing beyond where a throw
starts the ball (its red, the slice base, the spine) and no uncommitted work, or when forced.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from leapgit import git
from leapgit.errors import Hold, UsageError
from leapgit.gitobj import oid
from leapgit.ledger import query
from leapgit.ledger.history import has, latest_red, reds
from leapgit.ledger.repo import open_repo
from leapgit.ledger.view import LedgerView
from leapgit.ledger.workspace import Workspace
from leapgit.records.abandon import AbandonRecord
from leapgit.records.types import ABSENT, BallRecord, ThrowRecord
from leapgit.rules import episodes
from leapgit.rules.episodes import starts_afresh
from leapgit.rules.readiness import BallStanding, assess
from leapgit.slices.scope import ScopeError, TreeResolver
from leapgit.worktrees import place
from leapgit.worktrees.check import blob_of_file
from leapgit.worktrees.closeround import admin_dir, dirty_paths
from leapgit.worktrees.drivelock import check_free

DROP_TRIES = 5  # compare-and-swap deletes of a dropped branch before it is a hold


@dataclass(frozen=True)
class PruneLine:
    slice: str
    ball: str
    removed: bool
    why: str
    worktree: str | None = None


def _base_blobs(ws: Workspace, ball: BallRecord, base: str) -> dict[str, str]:
    out: dict[str, str] = {}
    with open_repo(str(ws.paths.common_dir)) as repo:
        tree = repo.object_store[oid(base)].tree
        resolver = TreeResolver(repo, tree, None)
        for entry in ball.scope:
            try:
                found = resolver.resolve(entry.path)
            except ScopeError:
                continue
            out[found.real] = found.blob
    return out


def uncommitted_work(ws: Workspace, ball: BallRecord, t: ThrowRecord) -> list[str]:
    """Dirty paths in the ball's worktree, minus scope files a rollback put back at base."""
    worktree = place.worktree_of(ws, t)
    if not worktree.is_dir():
        return []
    restored = {p: blob for p, blob in _base_blobs(ws, ball, restore_point(ws, t)).items()
                if blob_of_file(worktree / p) == blob}  # its bytes: never work lost
    # a file a rollback put back where the builder had left a folder: the folder's
    # (committed) content shows as deleted beneath it, and is not work either
    return [p for p in dirty_paths(worktree)
            if p not in restored and not any(p.startswith(f"{r}/") for r in restored)]


def rolled_back(ws: Workspace, ball: BallRecord, t: ThrowRecord) -> bool:
    worktree = place.worktree_of(ws, t)
    if not worktree.is_dir():
        return True
    return all((blob_of_file(worktree / path) == blob) or (blob == ABSENT and
               not (worktree / path).exists())
               for path, blob in _base_blobs(ws, ball, restore_point(ws, t)).items())


def restore_point(ws: Workspace, t: ThrowRecord) -> str:
    """Where a rollback puts the ball's scope back (``worktrees.rollback``): its red commit
    when that descends from the base (T7.1: the frozen failing test stays), else the base."""
    with ws.ledger() as ledger:
        red = latest_red(ledger.require(), t.slice, t.ball)
    if red is not None and git.is_ancestor(ws.paths.root, t.base, red.commit):
        return red.commit
    return t.base


def finished(ws: Workspace, s: BallStanding, ball: BallRecord,
             abandoned: AbandonRecord | None = None) -> tuple[bool, str]:
    assert s.episode is not None
    if abandoned is not None:  # its slice is given up: no episode of it goes on
        return True, f"slice abandoned ({abandoned.reason})"
    t = s.episode.throw
    tip = git.rev_parse(f"refs/heads/{t.branch}", ws.paths.root)
    spine = git.rev_parse(f"refs/heads/{ws.config.spine}", ws.paths.root)
    if tip and spine and tip != t.base and git.run(
            ["merge-base", "--is-ancestor", tip, spine], ws.paths.root,
            check=False).returncode == 0:
        return True, f"merged onto {ws.config.spine}"
    if s.own == "refuse":
        if ball.rollback.strip() != "restore-scope" or rolled_back(ws, ball, t):
            return True, "refused (-1) and rolled back"
        return False, "refused (-1) but its scope is not rolled back yet"
    return False, f"not finished ({s.verdict})"


def check_droppable(ws: Workspace, slice_id: str, ball_id: str, path: Path) -> None:
    """Refuse, before anything moves, to drop an old worktree that holds work: a throw checks
    this for every ball before it removes or creates any worktree or branch."""
    with ws.ledger() as ledger:
        view = ledger.require()
        ep = query.episodes(view, slice_id, ball_id)
        t = query.throw(view, slice_id, ball_id, ep[-1]) if ep else None
        ball = query.load_ball(view, slice_id, ball_id)
    if t is None or place.registered(ws, path) is None:
        return  # no worktree of the ball there: nothing to drop (a stray folder is placed's)

    if place.no_checkout(path):  # a kill inside `git worktree remove`: git reads nothing
        raise UsageError(f"the old worktree of {slice_id}/{ball_id} has no .git file, so "
                         f"what it holds cannot be read ({path})",
                         hint=f"`{place.aside_hint(path)}` moves it aside, what it holds "
                         f"kept; then `leap throw {slice_id} --ball {ball_id}`")
    admin = admin_dir(ws.paths.common_dir, path)  # L3: never under a builder at work in it
    check_free(admin / "leap" if admin else None, path, f"{slice_id}/{ball_id}")
    dirty = uncommitted_work(ws, ball, t)
    if dirty:
        raise UsageError(f"the old worktree of {slice_id}/{ball_id} still holds uncommitted "
                         f"work: {', '.join(dirty)} ({path})",
                         hint=f"`leap worktree prune {slice_id} --force` removes it")


def drop_refused(ws: Workspace, slice_id: str, ball_id: str, path: Path, branch: str) -> None:
    """Before a refused ball (or a held one whose scope a respec changed) is thrown again
    from a fresh branch (L3), its old worktree and branch go; the branch's tip stays under
    ``kept_ref`` (nothing lost: a commit past the last round no receipt records)."""
    check_droppable(ws, slice_id, ball_id, path)
    root = ws.paths.root
    other = place.holder(ws, path, branch)
    if other is not None:  # refused before anything moves
        raise Hold(f"the branch {branch} of {slice_id}/{ball_id}, dropped for a fresh "
                   f"throw (L3), is checked out in {other.path}", rule="L3",
                   hint=f"`{place.freeing(other)}` frees it, then `leap throw {slice_id} "
                        f"--ball {ball_id}`")
    place.remove(ws, path, None, force=True)  # the worktree; then the branch, by CAS
    for _ in range(DROP_TRIES):  # a commit that lands meanwhile is kept as well
        tip = git.rev_parse(f"refs/heads/{branch}", root)
        if tip is None:
            return
        git.run(["update-ref", episodes.kept_ref(slice_id, ball_id, tip), tip], root)
        if git.run(["update-ref", "-d", f"refs/heads/{branch}", tip], root,
                   check=False).returncode == 0:
            return
    raise Hold(f"the branch {branch} kept moving while it was dropped; each tip it had is "
               f"kept under refs/leap/kept/{slice_id}/{ball_id}/", rule="L3",
               hint=f"stop whatever commits to it, then `leap throw {slice_id} --ball {ball_id}` "
                    "again")


def restarts(s: BallStanding, thrown: BallRecord, current: BallRecord) -> bool:
    """L3: the ball's next throw starts afresh from a new branch and drops this worktree
    (``drop_refused``): it was refused, or held and respecced to another scope, and a respec
    came since."""
    return s.own in ("refuse", "hold") and starts_afresh(
        s.own == "refuse", current.spec_version > thrown.spec_version,
        set(thrown.paths) != set(current.paths))


def prune(ws: Workspace, slice_id: str | None = None, force: bool = False) -> list[PruneLine]:
    """Remove finished balls' worktrees and what killed throws left: never while a throw
    places its balls (``place.placing``), whose worktrees are not recorded yet."""
    with place.placing(ws):
        return _prune(ws, slice_id, force)


def _prune(ws: Workspace, slice_id: str | None, force: bool) -> list[PruneLine]:
    lines: list[PruneLine] = []
    present = _present(ws)
    with ws.ledger() as ledger:
        view = ledger.require()
        ids = [slice_id] if slice_id else query.slice_ids(view)
        todo, never = [], []
        for sid in ids:
            rec = query.load_slice(view, sid)
            gone = query.abandoned(view, sid)
            for ball_id, s in assess(view, rec, ws.config.round_cap).items():
                if s.episode is not None:
                    thrown = query.load_ball_version(
                        view, sid, ball_id, s.episode.throw.spec_version)
                    fresh = restarts(s, thrown, query.load_ball(view, sid, ball_id))
                    todo.append((sid, s, thrown, gone, fresh))
                elif (sid, ball_id) in present:
                    never.append((sid, ball_id, safe_tips(view, ws, sid, ball_id, rec.base)))
    for sid, s, ball, gone, fresh in todo:
        lines.append(_prune_one(ws, sid, s, ball, force, gone, fresh))
    lines.extend(_prune_leftover(ws, sid, ball_id, safe, force) for sid, ball_id, safe in never)
    return [line for line in lines if line.why]


def _present(ws: Workspace) -> set[tuple[str, str]]:
    """(slice, ball) of every ball branch and every worktree in a ball's place, two git
    calls for the whole repository."""
    prefix = f"refs/heads/{ws.config.ball_branch_prefix}/"
    refs = git.run(["for-each-ref", "--format=%(refname)", prefix], ws.paths.root).stdout
    found: set[tuple[str, str]] = set()
    for name in filter(None, refs.decode("utf-8", "surrogateescape").split("\n")):
        sid, _, ball_id = name.removeprefix(prefix).partition("/")
        if ball_id and "/" not in ball_id:
            found.add((sid, ball_id))
    root = os.path.realpath(place.worktree_root(ws))
    for wt in place.list_worktrees(ws):
        real = Path(os.path.realpath(wt.path))
        if str(real.parent.parent) == root:
            found.add((real.parent.name, real.name))
    return found


def safe_tips(view: LedgerView, ws: Workspace, sid: str, ball_id: str, base: str
               ) -> tuple[str, ...]:
    """Where a throw of a never-thrown ball starts its branch (its reds, the slice base):
    a leftover branch at or behind one of these holds nothing that removing it loses."""
    red_commits = tuple(r.commit for r in reds(view, sid, ball_id)) \
        if has(view, sid, ball_id, "reds") else ()
    spine = git.rev_parse(f"refs/heads/{ws.config.spine}", ws.paths.root)
    return (*red_commits, base, *((spine,) if spine else ()))


class Leftover(NamedTuple):
    """What a throw killed before its record left of a ball the ledger never saw thrown."""

    path: Path
    branch: str
    present: bool  # its branch or its worktree is there
    foreign: str | None  # a worktree in the ball's place on another branch: its branch
    work: str  # why removing it would lose work ("": it holds none)
    half_made: bool = False  # a `git worktree add` a kill stopped (``half_made``)
    tip: str | None = None  # its branch's commit as judged (None: no branch)

    @property
    def branch_at(self) -> tuple[str, str] | None:
        return None if self.tip is None else (self.branch, self.tip)


def half_made(ws: Workspace, path: Path) -> bool:
    """A worktree a kill stopped inside `git worktree add` (a helper's SIGKILL, a power
    loss): git locked it for the add, and its index holds no entry yet while its commit
    has files. Its files are git's checkout in progress; before, every one of them read as
    uncommitted work, prune kept it, `--force` could not remove a locked worktree, and the
    slice was stuck."""
    admin = admin_dir(ws.paths.common_dir, path)
    if admin is None or not (admin / "locked").exists() or not path.is_dir():
        return False  # a worktree locked by its user, on a disk not mounted now, say
    listed = git.run(["ls-files", "-z"], path, check=False)
    if listed.returncode != 0 or listed.stdout:
        return False
    tree = git.run(["ls-tree", "--name-only", "HEAD"], path, check=False)
    return tree.returncode == 0 and bool(tree.stdout.strip())


def half_made_work(path: Path) -> list[str]:
    """What a half-made worktree holds beyond its commit: against an index of the commit
    (a throwaway one: the worktree's own stays as the kill left it, which ``half_made``
    reads), a file changed or added is work, an ignored one too (git's checkout writes
    none); one the checkout had not written yet is not."""
    with tempfile.TemporaryDirectory(prefix="leap-half-made-") as tmp:
        env = {**os.environ, "GIT_INDEX_FILE": os.path.join(tmp, "index")}
        git.run(["read-tree", "HEAD"], path, env=env)
        raw = git.run(["status", "--porcelain=v1", "-z", "--untracked-files=all",
                       "--ignored=matching", "--no-renames"], path, env=env).stdout
    return [item[3:].decode("utf-8", "surrogateescape") for item in raw.split(b"\0")
            if item and item[:2] != b" D"]


def leftover(ws: Workspace, sid: str, ball_id: str, safe: tuple[str, ...]) -> Leftover:
    """The one judgment of such a leftover (L8: nothing lost, nothing stuck), for `leap
    worktree prune` and for the next throw, which makes the ball afresh over one that
    holds no work: a branch at or behind one of ``safe`` (``safe_tips``: where a throw
    starts it) with no worktree, or a clean one of its own."""
    path = place.target(ws, sid, ball_id)
    branch = ws.config.ball_branch(sid, ball_id)
    found = place.registered(ws, path)
    tip = git.rev_parse(f"refs/heads/{branch}", ws.paths.root)
    if found is not None and found.branch != f"refs/heads/{branch}":  # not ours to remove
        return Leftover(path, branch, True, found.branch or "a detached HEAD", "")
    if found is not None and place.no_checkout(path):  # git reads nothing there
        return Leftover(path, branch, True, None, NO_CHECKOUT, False, tip)
    work, half = "", found is not None and half_made(ws, path)
    if tip is not None and not any(git.is_ancestor(ws.paths.root, tip, s) for s in safe):
        work = "its branch holds commits no throw recorded"
    elif found is not None and path.is_dir():  # a folder gone (moved aside) holds nothing
        dirty = half_made_work(path) if half else dirty_paths(path)
        work = f"uncommitted work ({', '.join(dirty)})" if dirty else ""
    return Leftover(path, branch, found is not None or tip is not None, None, work, half, tip)


def _prune_leftover(ws: Workspace, sid: str, ball_id: str, safe: tuple[str, ...],
                    force: bool) -> PruneLine:
    """A ball the ledger never saw thrown whose branch or worktree exists (its refusal's
    hint, `leap worktree prune`, leads here): removed when it holds no work (``leftover``),
    or with ``force``; a worktree there that is not on the ball's branch is never touched."""
    found = leftover(ws, sid, ball_id, safe)
    if found.work == NO_CHECKOUT:
        return _no_checkout(sid, ball_id, found.path)
    if found.foreign is not None:
        return PruneLine(sid, ball_id, False, f"kept: the worktree in the ball's place is on "
                         f"{found.foreign}, not on {found.branch}: move it away with `git "
                         "worktree move`; leapgit removes only its own", str(found.path))
    if not found.present:
        return PruneLine(sid, ball_id, False, "")
    if found.work and not force:
        return PruneLine(sid, ball_id, False, f"kept: {found.work}; --force removes it",
                         str(found.path))
    held = _held(ws, sid, ball_id, found.path, found.branch)
    if held is not None:
        return held
    kept = place.remove(ws, found.path, found.branch_at, force=True, locked=found.half_made)
    return _removed(sid, ball_id, found.path, found.branch, "left over by a throw that never "
                    "recorded one (the ledger holds no throw of the ball)", kept)


def _prune_one(ws: Workspace, sid: str, s: BallStanding, ball: BallRecord,
               force: bool, abandoned: AbandonRecord | None = None,
               fresh: bool = False) -> PruneLine:
    assert s.episode is not None
    t = s.episode.throw
    path = place.worktree_of(ws, t)
    if place.registered(ws, path) is None and not place.branch_exists(ws, t.branch):
        return PruneLine(sid, s.ball, False, "")  # already gone: nothing to say
    if place.no_checkout(path):  # git reads nothing there: whether it is finished or not
        return _no_checkout(sid, s.ball, path)
    done, why = finished(ws, s, ball, abandoned)
    if not done and fresh and force:  # what the throw's hint promises: the throw drops it
        done, why = True, "respecced: its next throw starts afresh from a new branch (L3)"
    if not done:
        return PruneLine(sid, s.ball, False, f"kept: {why}", str(path))
    held = _held(ws, sid, s.ball, path, t.branch)
    if held is not None:
        return held
    dirty = uncommitted_work(ws, ball, t)
    if dirty and not force:
        return PruneLine(sid, s.ball, False, f"kept: uncommitted work ({', '.join(dirty)}); "
                         "--force removes it", str(path))
    tip = git.rev_parse(f"refs/heads/{t.branch}", ws.paths.root)
    kept = ""
    if tip is not None and tip != place.recorded_in(ws, s.episode):  # nothing lost (L6)
        ref = episodes.kept_ref(sid, s.ball, tip)
        git.run(["update-ref", ref, tip], ws.paths.root)
        kept = f"; its commit {tip[:12]}, which no round records, is kept as {ref}"
    left = place.remove(ws, path, None if tip is None else (t.branch, tip), force=True)
    return _removed(sid, s.ball, path, t.branch, f"{why}{kept}", left)


NO_CHECKOUT = "its folder has no .git file"


def _no_checkout(sid: str, ball_id: str, path: Path) -> PruneLine:
    """The kept line for the ball's folder that is no checkout (``place.no_checkout``): a
    kill inside the `git worktree remove` of an earlier prune, say; git cannot tell what
    it holds, so it is moved aside, never removed."""
    return PruneLine(sid, ball_id, False, f"kept: {NO_CHECKOUT} (a removal killed midway?); "
                     f"`{place.aside_hint(path)}` moves it aside, what it holds kept, and "
                     "the next prune removes the worktree git still lists", str(path))


def _held(ws: Workspace, sid: str, ball_id: str, path: Path, branch: str) -> PruneLine | None:
    """A kept line when another checkout has the ball's branch checked out: removing the
    branch would leave that checkout standing on nothing (its files all "new")."""
    other = place.holder(ws, path, branch)
    if other is None:
        return None
    first = "" if other.path.is_dir() else "git holds it locked and its folder is not " \
        "there (a disk not mounted?): mount it, then "
    return PruneLine(sid, ball_id, False, f"kept: its branch {branch} is checked out in "
                     f"{other.path}; {first}`{place.freeing(other)}` frees it (its edits "
                     "kept)", str(path))


def _removed(sid: str, ball_id: str, path: Path, branch: str, why: str, kept: str | None
             ) -> PruneLine:
    """The line of a removal, and of a branch it kept (``place.remove``'s reason): one
    another checkout stands on is kept with all else; one that moved, or that git could not
    delete, stays after its worktree went, and the next prune judges it again (L8)."""
    if kept == place.HELD:
        return PruneLine(sid, ball_id, False, f"kept: its branch {branch}: {kept}", str(path))
    if kept is None:
        return PruneLine(sid, ball_id, True, f"removed: {why}", str(path))
    return PruneLine(sid, ball_id, True, f"removed: {why}; its branch {branch} is kept: {kept}"
                     "; `leap worktree prune` judges it again", str(path))
