"""`leap sync [REMOTE]`: the ledger across machines. Fetch the remote ledger, replay the
local records it lacks onto its tip (additions to distinct paths commute; the same path
with different bytes is a true conflict, refused and named), push, and on a lost race
(non-fast-forward) go round again, up to a bound. No record is lost or duplicated: the
remote's ref moves atomically, and a replay skips records the remote already holds."""

from __future__ import annotations

import os
import random
import re
import shlex
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dulwich.diff_tree import tree_changes
from dulwich.walk import ORDER_TOPO, Walker

from leapgit import git
from leapgit.errors import InvalidRecord, LedgerBusy, LedgerConflict, RuleViolation, UsageError
from leapgit.gitobj import oid, parents_here
from leapgit.ledger import leases, query
from leapgit.ledger.added import added_between
from leapgit.ledger.recovery import locked
from leapgit.ledger.view import commit_tree
from leapgit.ledger.workspace import Workspace, open_workspace
from leapgit.ledger.writer import Move, swap
from leapgit.records.types import Receipt

if TYPE_CHECKING:
    from leapgit.ledger.store import Ledger

MAX_ROUNDS = 30
# Reasons git gives for a push that lost a race; anything else (a hook's refusal) is final.
_RETRY = ("non-fast-forward", "fetch first", "failed to update ref", "cannot lock ref",
          "failed to lock", "incorrect old value", "stale info")
# F1: the server's hook saw the ref move between git's advertisement and its own run (another
# push landed in between): a lost race when every refusal of the push is that one.
_STALE = "but this repository holds it at"


@dataclass(frozen=True)
class SyncResult:
    remote: str
    ref: str
    tip: str | None
    pushed: bool
    replayed: int
    records: int
    skipped: int
    rounds: int
    # this clone's records left out: leases that lost their number, or (``take_remote``)
    # every record the remote holds with other bytes
    left_out: tuple[str, ...] = ()
    # published rounds' commits pushed with their receipts (``_rounds_along``), as refspecs
    along: tuple[str, ...] = ()
    along_refused: str = ""  # why the remote refused them: their receipts went up alone
    kept: str | None = None  # ``take_remote``: the ref keeping this clone's ledger as it was


# What a fetch that raced another git on either side says; the same fetch again succeeds.
_FETCH_AGAIN = (b"cannot lock ref", b"did not send all necessary objects")
# One fetch at a time from this process: git also moves the remote's tracking refs on a
# fetch by name, and two at once fail on the ref lock (`leap run --remote`'s threads).
FETCHING = threading.Lock()


_named: dict[tuple[Path, str], bool] = {}  # (repository, remote) found among its remotes


def require_remote(root: Path, remote: str) -> None:
    """``remote`` is one of the repository's remotes, by name: leapgit tracks what it
    fetched under ``refs/leap/remotes/<name>/``, which a URL or a path cannot name (a
    fuzzing review: a URL made an invalid refspec). Asked before any fetch."""
    if (root, remote) in _named:
        return
    names = git.remotes(root)
    if remote not in names:
        known = ", ".join(names) or "none"
        raise UsageError(f"{remote!r} is not a remote of this repository (its remotes: "
                         f"{known})", hint=(
                             f"add it (`git remote add NAME {shlex.quote(remote)}`), then give "
                             "NAME" if located(remote) else "give one of its remotes" if names
                             else f"add it by that name (`git remote add "
                                  f"{shlex.quote(remote)} URL`)"))
    _named[(root, remote)] = True


def located(remote: str) -> bool:
    """Whether ``remote`` reads as where a repository is (a URL, a path, ``host:path``),
    rather than as a remote's name."""
    return "://" in remote or remote.startswith(("/", ".", "~")) or \
        re.match(r"[^/]+@[^/]+:", remote) is not None or os.path.exists(remote)


def fetch(root: Path, args: Sequence[str]) -> subprocess.CompletedProcess[bytes]:
    """``git fetch ARGS`` under ``FETCHING``, again after a race (``_FETCH_AGAIN``)."""
    for attempt in range(3):
        with FETCHING:
            proc = git.run(["fetch", *args], root, check=False)
        if proc.returncode == 0 or attempt == 2 or \
                not any(why in proc.stderr for why in _FETCH_AGAIN):
            return proc
        time.sleep(random.uniform(0.05, 0.2))
    return proc


def _fetch(root: Path, remote: str, ref: str, track: str,
           also: Sequence[str] = ()) -> tuple[str | None, git.GitFailed | None]:
    """The remote's ledger tip (None: it has no ledger), and what went wrong with ``also``.
    ``also``: more refspecs (glob ones, pruned) brought by the same fetch: one connection
    to the remote a look, not one a refspec. When that fetch fails, the ledger is fetched
    on its own (a remote without the ledger, or one tracking ref of ``also`` that git
    cannot write, never keeps the ledger from syncing), then ``also`` on its own: its
    failure is returned, for the caller to raise once the ledger is up."""
    require_remote(root, remote)
    prune = ["--prune"] if also else []
    before = git.rev_parse(track, root)
    # a partial clone's fetches leave file contents behind: the records come along here
    whole = ["--no-filter"] if _is_partial(root) else []
    proc = fetch(root, ["--quiet", "--no-tags", *whole, *prune, remote, f"+{ref}:{track}",
                        *also])
    if proc.returncode == 0:
        tip = git.rev_parse(track, root)
        _whole(root, remote, ref, track, tip, before)
        return tip, None
    if also:
        tip, _ = _fetch(root, remote, ref, track)
        return tip, fetch_only(root, remote, also, "the ledger was synced", reached=True)
    err = proc.stderr.decode(errors="replace")
    if "couldn't find remote ref" in err:
        git.run(["update-ref", "-d", track], root, check=False)
        return None, None
    raise _fetch_failed(remote, [ref], proc, "nothing was pushed")


_partial: dict[Path, bool] = {}  # repository -> a partial clone (a promisor remote)


def _whole(root: Path, remote: str, ref: str, track: str, tip: str | None,
           before: str | None) -> None:
    """In a partial clone (`git clone --filter=blob:none`) the clone itself brought the
    ledger's commits without its records, which leapgit would then fetch one by one as it
    reads them (``ledger.repo.Promised``), and a fetch of commits already here brings
    nothing: the ledger is fetched again, whole, in one go, when any object its new commits
    reach is missing (once: later fetches take the records along, ``_fetch``). No repack of
    the whole repository follows (git's default after a refetch)."""
    if tip is None or not _is_partial(root):
        return
    since = [f"^{before}"] if before and before != tip else []
    listed = git.run(["rev-list", "--objects", "--missing=print", tip, *since], root,
                     check=False).stdout
    if not any(line.startswith(b"?") for line in listed.splitlines()):
        return
    proc = fetch(root, ["--quiet", "--no-tags", "--refetch", "--no-filter",
                        "--no-auto-maintenance", remote, f"+{ref}:{track}"])
    if proc.returncode != 0:  # each record is still fetched as it is read
        return


def _is_partial(root: Path) -> bool:
    if root not in _partial:
        found = git.run(["config", "--get-regexp",
                         r"^(remote\..*\.promisor|extensions\.partialclone)$"], root,
                        check=False).stdout.decode().split("\n")
        _partial[root] = any(line.split(" ", 1)[0].lower() == "extensions.partialclone" or
                             line.rpartition(" ")[2].lower() in ("true", "yes", "on", "1")
                             for line in found if line)
    return _partial[root]


_LEFT_LOCK = re.compile(r"Unable to create '([^']+\.lock)': File exists")


def fetch_only(root: Path, remote: str, refspecs: Sequence[str], done: str,
               reached: bool = False) -> git.GitFailed | None:
    """``refspecs`` fetched (glob ones, pruned); what went wrong, said with ``done`` (what
    stands nevertheless), or None. ``reached``: the remote answered a fetch just before."""
    require_remote(root, remote)
    proc = fetch(root, ["--quiet", "--no-tags", "--prune", remote, *refspecs])
    if proc.returncode == 0:
        return None
    return _fetch_failed(remote, refspecs, proc, done, reached)


def lock_in_the_way(remote: str, refspecs: Sequence[str],
                    proc: subprocess.CompletedProcess[bytes], done: str) -> git.GitFailed | None:
    """A fetch failed by a lock file a git stopped midway left here, said as ``_fetch_failed``
    says it (naming the file and what to do), or None for any other failure."""
    if _LEFT_LOCK.search(proc.stderr.decode(errors="replace")) is None:
        return None
    return _fetch_failed(remote, refspecs, proc, done)


def _fetch_failed(remote: str, refspecs: Sequence[str], proc: subprocess.CompletedProcess[bytes],
                  done: str, reached: bool = False) -> git.GitFailed:
    """What a failed fetch says: a lock file a git stopped midway left here is named, with
    what to do; after the ledger came from ``remote`` (``reached``), git's own words, since
    the remote answered; else the remote's name or reach."""
    err = proc.stderr.decode(errors="replace").strip()
    left = _LEFT_LOCK.search(err)
    if left is not None:
        return git.GitFailed(f"cannot fetch {' '.join(refspecs)} from {remote}: a lock file "
                             f"is in the way here: {left.group(1)} ({done})",
                             hint="a git process stopped midway left it: if no git process "
                                  f"is running, delete {left.group(1)}, then run the "
                                  "command again")
    line = git.says(err) or f"exit {proc.returncode}"
    if reached:
        return git.GitFailed(f"cannot fetch {' '.join(refspecs)} from {remote}: {line} "
                             f"({done})", hint="git's words say what to mend here, then run "
                                               "the command again")
    failed = git.RemoteUnavailable if git.unavailable(err) else git.GitFailed
    return failed(f"cannot reach {remote}: git fetch failed: {line}; {done}",
                  hint="check the remote's name and that it is reachable")


def _push(root: Path, remote: str, tip: str | None, ref: str,
          also: Sequence[str] = ()) -> str | None:
    """None when the push landed; the reason when it lost a race. Raises when refused.
    ``also``: refspecs pushed with the ledger in one atomic push (all land, or none)."""
    specs = ([f"{tip}:{ref}"] if tip is not None else []) + list(also)
    atomic = ["--atomic"] if len(specs) > 1 else []
    # --no-verify: leap wrote and checked these records itself, and the server's pre-receive
    # judges them; the pre-push hook is early feedback for a person's own `git push` (run
    # here, it costs a process per push and judges against a tip that may be stale)
    proc = git.run(["push", "--porcelain", "--no-verify", *atomic, remote, *specs], root,
                   check=False)
    if proc.returncode == 0:
        return None
    if proc.returncode < 0:  # a signal ended git (a Ctrl-C to the whole process group)
        raise git.RemoteUnavailable(
            f"the push to {remote} was stopped (signal {-proc.returncode}) before {remote} "
            "answered: whether it landed is unknown", hint="the next `leap sync "
            f"{shlex.quote(remote)}` says, and puts up what did not land")
    text = proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace")
    if any(reason in text for reason in _RETRY) and "hook declined" not in text or \
            _STALE in text and text.count("[L") == text.count(_STALE):
        return text.strip().splitlines()[-1] if text.strip() else "rejected"
    remote_lines = [ln for ln in text.splitlines() if ln.startswith("remote:") and ln[7:].strip()]
    failed = git.unavailable_push(remote, text, remote_lines, root)
    if failed is not None:
        raise failed
    raise RuleViolation(f"the remote refused the ledger push to {remote}",
                        hint="; ".join(ln[7:].strip() for ln in remote_lines) or text.strip())


def _keep_once(root: Path, kept: str | None, tip: str) -> str:
    """The ref keeping this clone's ledger as it was before `--take-remote` left anything
    out: its first tip only (a blind review: each round kept the tip the round before had
    already cut, and the one said was the last, without what the first left out)."""
    if kept is not None:
        return kept
    kept = f"refs/leap/kept/ledger/{tip[:12]}"
    git.run(["update-ref", kept, tip], root)
    return kept


def sync(
    remote: str = "origin", start: Path | str = ".", max_rounds: int = MAX_ROUNDS,
    also: Sequence[str] = (), push: bool = True, fetch_also: Sequence[str] = (),
    take_remote: bool = False,
) -> SyncResult:
    """``also``: refspecs (a ball branch's round) that go with the ledger in one atomic
    push (issue 16: a round's commit and its receipt land together, or neither).
    ``push=False``: fetch and replay only (a worker's records go up with their round).
    ``fetch_also``: refspecs fetched with the ledger (the ball branches a look reads).
    ``take_remote``: a true conflict (a record both ledgers hold with other bytes), or a
    refusal naming records this clone holds, is settled for the remote, the authority (L8:
    its server judged its records, never this clone's): this clone's ledger goes onto the
    remote's without the commits that differ or were refused, whole, by compare-and-swap,
    and is kept as it was under ``refs/leap/kept/ledger/``."""
    ws = open_workspace(start)
    root, ref = ws.paths.root, ws.config.ledger_ref
    track = git.leap_tracking(remote, ref)
    replayed = records = skipped = 0
    left_out: list[str] = []
    kept: str | None = None
    for attempt in range(1, max_rounds + 1):
        # the ball branches with every fetch of the ledger: a ledger fetched again after a
        # lost race may hold rounds whose commits the first fetch did not bring
        remote_tip, fetch_failed = _fetch(root, remote, ref, track, fetch_also)
        conflict = None
        with ws.ledger() as ledger:
            if remote_tip is not None:
                try:
                    done = ledger.replay_onto(remote_tip)
                except LedgerConflict as exc:
                    conflict = exc.problems[0].file if exc.problems else "?"
                else:
                    replayed, records, skipped = done.replayed, done.records, done.skipped
            tip = ledger.tip()
        if conflict is not None:
            assert remote_tip is not None
            hint = _lost_leases_left_out(start, remote, remote_tip, conflict, left_out)
            if hint is None:
                continue  # this clone's lost leases left out: replay onto the remote's again
            if take_remote and tip is not None:
                kept = _keep_once(root, kept, tip)
                left_out.extend(drop_local(start, remote_tip, lambda _path: False, whole=True))
                continue  # the remote's records stand: replay onto them again
            raise LedgerConflict(
                f"a true conflict: {conflict} holds different bytes here and on {remote}",
                file=conflict, rule="L8", hint=hint if hint != _NEVER_EDITED else (
                    f"records are never edited; {remote}'s server judged its record, never "
                    f"this one: `leap sync {shlex.quote(remote)} --take-remote` lets "
                    f"{remote}'s stand and leaves this clone's out (kept under "
                    "refs/leap/kept/ledger/)"))
        if tip is None or (tip == remote_tip and not also) or not push:
            return _done(SyncResult(remote, ref, tip, False, replayed, records, skipped,
                                    attempt, tuple(left_out), kept=kept), fetch_failed)
        along = _rounds_along(ws, remote, remote_tip, tip, also) if tip != remote_tip else []
        refused = ""
        try:
            try:
                lost = _push(root, remote, tip if tip != remote_tip else None, ref,
                             [*also, *along])
            except RuleViolation as exc:
                if not along:
                    raise
                # the remote refused the push with rounds taken along: push as before,
                # without them (a refusal of this push's own records is raised by that push)
                refused, along = exc.lines()[-1], []
                lost = _push(root, remote, tip if tip != remote_tip else None, ref, also)
        except RuleViolation as exc:
            named = _refused_here(root, remote_tip, tip, " ".join(exc.lines()))
            if not named:
                raise
            if not take_remote:
                first, *rest = exc.problems
                way = (f"`leap sync {shlex.quote(remote)} --take-remote` leaves this clone's "
                       f"refused records out ({', '.join(named)}; kept under "
                       "refs/leap/kept/ledger/)")
                raise RuleViolation(problems=[first._replace(
                    hint=f"{first.hint}; {way}" if first.hint else way), *rest]) from None
            kept = _keep_once(root, kept, tip)
            assert remote_tip is not None  # a refused push went onto the remote's ledger
            left_out.extend(drop_local(start, remote_tip, set(named).__contains__, whole=True))
            continue  # the remote decided: push what it takes
        if lost is None:
            git.run(["update-ref", track, tip], root, check=False)
            for spec in along:  # the remote's copy of each branch taken along, as it is now
                sha, _, branch = spec.partition(":")
                git.run(["update-ref", git.leap_tracking(remote, branch), sha], root,
                        check=False)
            return _done(SyncResult(remote, ref, tip, True, replayed, records, skipped,
                                    attempt, tuple(left_out), tuple(along), refused, kept),
                         fetch_failed)
        time.sleep(random.uniform(0.01, 0.05) * min(attempt, 10))
    raise LedgerBusy(f"the ledger on {remote} kept moving; gave up after {max_rounds} rounds",
                     hint=f"nothing is lost: run `leap sync {shlex.quote(remote)}` again")


_RECEIPT = re.compile(r"^slices/[^/]+/balls/[^/]+/episodes/\d+/receipts/\d+\.yaml$")


def _rounds_along(ws: Workspace, remote: str, remote_tip: str | None, tip: str,
                  also: Sequence[str]) -> list[str]:
    """L7, L9: the refspecs of the rounds of published balls whose receipts this push carries
    up while their commits are not on ``remote``, so each goes in the same atomic push. A
    worker pushes its round with its receipt (``also``), but a worker killed while that push
    waited left the receipt here, and any later push of this ledger (`leap sync`, another
    worker of the clone) carried it up alone: the remote then named a round its branch never
    got. Per branch, the newest round whose commit this clone's branch holds goes along; a
    refused round (-1) never does (its commit is rolled back, and the server refuses it), nor
    a branch ``also`` already moves. The remote's copy is fetched first: only a round that
    moves it forward goes along."""
    root, moved = ws.paths.root, {spec.rsplit(":", 1)[-1] for spec in also}
    carried: dict[str, list[Receipt]] = {}
    with ws.ledger() as ledger:
        store, view = ledger.repo.object_store, ledger.view(tip)
        old = commit_tree(ledger.repo, remote_tip) if remote_tip is not None else None
        assert view.tree is not None
        for path, _ in added_between(store, old, view.tree):
            try:
                receipt = view.record(path, Receipt) if _RECEIPT.match(path) else None
                throw = receipt and query.throw(view, receipt.slice, receipt.ball,
                                                receipt.episode)
            except InvalidRecord:
                continue  # the remote's hook judges it, and says why
            if receipt is not None and throw is not None and throw.published and \
                    receipt.commit and receipt.outcome != -1 and \
                    f"refs/heads/{throw.branch}" not in moved:
                carried.setdefault(throw.branch, []).append(receipt)
    out = []
    for branch, receipts in sorted(carried.items()):
        here = git.rev_parse(f"refs/heads/{branch}", root)
        newest = next((r.commit for r in sorted(receipts, key=lambda r: (r.episode, r.round),
                                                 reverse=True)
                       if here is not None and r.commit is not None and
                       git.is_ancestor(root, r.commit, here)), None)
        if newest is None:
            continue  # no round's commit is here: nothing to take along
        track = git.leap_tracking(remote, f"refs/heads/{branch}")
        whole = ["--no-filter"] if _is_partial(root) else []
        if fetch(root, ["--quiet", "--no-tags", *whole, remote, f"+refs/heads/{branch}:{track}"]
                 ).returncode != 0:
            continue  # the remote's copy unknown (or none): the receipt goes up alone
        there = git.rev_parse(track, root)
        if there is not None and there != newest and git.is_ancestor(root, there, newest):
            out.append(f"{newest}:refs/heads/{branch}")
    return out


def lease_spine(path: str) -> str | None:
    """The spine of a lease record's path (``spines/<spine>/leases/<n>/<action>.yaml``; a
    spine's name may hold slashes), or None for any other path."""
    spine, found, _ = path.removeprefix("spines/").rpartition("/leases/")
    return spine if path.startswith("spines/") and found else None


_NEVER_EDITED = "records are never edited: write your version under a new record"


def _lost_leases_left_out(start: Path | str, remote: str, remote_tip: str, path: str,
                          left_out: list[str]) -> str | None:
    """A conflict on a lease record: this clone's leases that lost their number to the
    remote's (``leases.lost_leases``) are left out of the local ledger, when they are the
    only records the two ledgers hold different bytes of (their paths added to
    ``left_out``). None when they were; else what to do (the hint of the conflict)."""
    kept = _NEVER_EDITED
    spine = lease_spine(path)
    if spine is None:
        return kept
    ws = open_workspace(start)
    with ws.ledger() as ledger:
        here, there = ledger.require(), ledger.view(remote_tip)
        lost, still = leases.lost_leases(here, there, spine)
        differ = _differing(ws.paths.root, remote_tip, here.commit or "")
    if still is not None:
        return (f"lease {still.number} on {spine!r}, taken here alone, lost its number to "
                f"the remote's: `leap lease release --holder {shlex.quote(still.holder)}` "
                f"gives it back here, then `leap sync {shlex.quote(remote)}` again leaves it "
                "out")
    if not lost or not set(differ) <= set(lost):
        return kept
    left_out.extend(drop_local(start, remote_tip, lambda p: p in lost))
    return None


def _refused_here(root: Path, remote_tip: str | None, tip: str, said: str) -> list[str]:
    """The records this clone holds and ``remote_tip`` lacks that a refusal (``said``, the
    remote's lines) names: what ``--take-remote`` leaves out."""
    if remote_tip is None:
        return []
    out = git.run(["diff-tree", "-r", "-z", "--no-renames", "--diff-filter=A", "--name-only",
                   remote_tip, tip], root).stdout.decode("utf-8", "surrogateescape")
    return [p for p in out.split("\0") if p and p in said]


def _differing(root: Path, a: str, b: str) -> list[str]:
    """The paths two ledger commits both hold with different bytes."""
    out = git.run(["diff-tree", "-r", "-z", "--no-renames", "--diff-filter=M", "--name-only",
                   a, b], root).stdout.decode("utf-8", "surrogateescape")
    return [p for p in out.split("\0") if p]


def _done(result: SyncResult, fetch_failed: git.GitFailed | None) -> SyncResult:
    """The sync's result, once the ledger is as far as it goes; then what the fetch of the
    other refspecs could not bring, raised."""
    if fetch_failed is not None:
        raise fetch_failed
    return result


def push_records(remote: str, records: Mapping[str, bytes], subject: str,
                 trailers: Sequence[tuple[str, str]] = (), start: Path | str = ".",
                 max_rounds: int = MAX_ROUNDS) -> str:
    """Add ``records`` to the remote's ledger in one commit on its tip, by the remote's
    own compare-and-swap, and replay the local ledger onto the result (L9: a claim is
    decided by the shared remote, never by a local write). A lost race goes round again;
    a path the remote holds already is a ``LedgerConflict`` (another writer won it); a
    refusal is a ``RuleViolation``. Returns the remote's new tip."""
    ws = open_workspace(start)
    root, ref = ws.paths.root, ws.config.ledger_ref
    track = git.leap_tracking(remote, ref)
    for attempt in range(1, max_rounds + 1):
        remote_tip, _ = _fetch(root, remote, ref, track)
        if remote_tip is None:
            raise RuleViolation(f"{remote} holds no ledger", rule="L8",
                                hint=f"push one first (`leap sync {remote}`)")
        with ws.ledger() as ledger:
            commit = ledger.commit_on(remote_tip, records, subject, trailers)
        if _push(root, remote, commit, ref) is None:
            git.run(["update-ref", track, commit], root, check=False)
            with ws.ledger() as ledger:
                ledger.replay_onto(commit)
            return commit
        time.sleep(random.uniform(0.01, 0.05) * min(attempt, 10))
    raise LedgerBusy(f"the ledger on {remote} kept moving; gave up after {max_rounds} rounds",
                     hint="nothing was written: try again")


def drop_local(start: Path | str, base: str, drop: Callable[[str], bool],
               whole: bool = False) -> list[str]:
    """The local ledger goes back onto ``base`` (the remote's tip, fetched here, that
    refused some of its records): each local commit ``base`` lacks is rebuilt on it, with
    its message, without the records ``drop`` names and without any ``base`` holds (the
    same bytes, or a true conflict the remote decided); the ref moves by compare-and-swap.
    Issue 16, L9: a refused round's records go, another ball's that are still to go up
    stay (nothing valid lost). ``whole``: a commit holding a true conflict or a record
    ``drop`` names is left out whole (the records written with it, a cut's other specs say,
    stand or fall with it).
    Returns the paths left out; the old commits stay in git's reflog."""
    ws = open_workspace(start)
    with ws.ledger() as ledger:
        return locked(ledger.repo, ledger.git_dir, ledger.ref,
                      lambda: swap(ledger, lambda old, _attempt: _without(ledger, old, base,
                                                                          drop, whole)))


def _without(ledger: Ledger, old: str | None, base: str,
             drop: Callable[[str], bool], whole: bool = False) -> Move[list[str]]:
    store = ledger.repo.object_store
    parents = parents_here(ledger.repo)  # a shallow ledger's walk ends at its cut
    local = [] if old is None else [
        e.commit for e in Walker(store, [oid(old)], exclude=[oid(base)], order=ORDER_TOPO,
                                 reverse=True, get_parents=parents)]
    tip, left_out = base, []
    there = ledger.view(base)
    for commit in local:
        first = parents(commit)
        parent_tree = store[first[0]].tree if first else None  # type: ignore[attr-defined]
        kept: dict[str, bytes] = {}
        conflicted = False
        for change in tree_changes(store, parent_tree, commit.tree):
            if change.type != "add" or change.new is None or change.new.path is None:
                continue  # records are only ever added (``replay`` refuses anything else)
            path = change.new.path.decode()
            if there.exists(path):
                if there.read(path) != store[oid(change.new.sha or b"")].as_raw_string():
                    left_out.append(path)  # a true conflict: the remote's bytes stand
                    conflicted = True
                continue
            if drop(path):
                left_out.append(path)
                conflicted = True
                continue
            kept[path] = store[oid(change.new.sha or b"")].as_raw_string()
        if whole and conflicted:
            left_out.extend(kept)
            kept = {}
        if kept:
            tip = ledger.committer.commit(tip, kept, commit.message).decode()
    return Move(tip, b"leap: this clone's refused or conflicting records left out", left_out)
