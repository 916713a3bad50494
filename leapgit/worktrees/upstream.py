"""L8 before any work is spent: the spine this clone cuts on, and `leap run` and `leap
throw` build on, must be one its remote takes. A commit made on the spine outside an
integration and never pushed (a note committed to `main` before a cut) went into every
ball's base: the slice was built, red-tested and scored, and only its merge was refused,
by this clone's `pre-push` or the server, for a commit no merge can carry. The spine's tip
is judged here by the rule the server runs (``rules.spine.check_spine_commits``: all of
``check_spine_update`` but the lease, which a merge takes before its push), against the
remote's spine as this clone last fetched it, before anything is cut or thrown. (`leap
merge` keeps checks of its own: a local commit on a merged ball's files, a spine parted
from the remote's.)"""

from __future__ import annotations

import shlex
from pathlib import Path

from leapgit import git
from leapgit.errors import RuleViolation
from leapgit.ledger.repo import open_repo
from leapgit.ledger.workspace import Workspace
from leapgit.records.config import CONFIG_PATH
from leapgit.rules.context import PushContext, RefUpdate
from leapgit.rules.objects import Objects
from leapgit.rules.refusal import Refusal
from leapgit.rules.spine import check_spine_commits, keep_branch, reset_target


def require_spine_pushable(ws: Workspace, then: str) -> None:
    """Raise when the local spine holds commits its remote lacks that the server would
    refuse, with the commands that keep them on a branch of their own and take them off the
    spine, then ``then`` (the command that stopped, again). No remote's spine fetched (a
    repository without a remote, a spine that tracks none): nothing to judge against."""
    root, spine = ws.paths.root, ws.config.spine
    tip = git.rev_parse(f"refs/heads/{spine}", root)
    upstream = _upstream(ws)
    if tip is None or upstream is None:
        return
    name, there = upstream
    if tip == there or git.is_ancestor(root, tip, there):
        return
    # the commits only this clone has: from where the two part (the remote's spine may have
    # moved on since this clone's commit; that alone is no reason to refuse)
    since = there if git.is_ancestor(root, there, tip) else _parted(root, tip, there)
    if since is None:
        return  # unrelated histories: nothing this rule can say about them
    refusals = spine_refusals(ws, since, tip)
    if not refusals:
        return  # integration merges not pushed yet: the merge's push carries them
    short = name.removeprefix("refs/remotes/")
    line = git.run(["rev-list", "--first-parent", "--reverse", f"{since}..{tip}"],
                   root).stdout.decode().split()
    refused = sorted({r.commit for r in refusals if r.commit in line}, key=line.index)
    why = next((r for r in refusals if r.commit == refused[0]), refusals[0]) if refused \
        else refusals[0]
    # what stays on the spine: the honest merges under the first refused commit of its line,
    # else the remote's spine (none refused on the line: it does not lead back; all goes)
    at = line.index(refused[0]) if refused else 0
    back = line[at - 1] if at > 0 else there
    keep = _take_off(ws, tip, name if back == there else back)
    raise RuleViolation(
        f"{spine} holds {len(line)} commit(s) {short} does not have, and the spine rule "
        f"refuses {max(len(refused), 1)} of them, as leapgit's pre-receive would: "
        f"{(why.commit or tip)[:12]}: {why.message}; no slice built on it can be merged",
        rule=why.rule,
        hint=f"keep {spine}'s {len(line) - at} newest commit(s) on a branch of their own and "
        f"take them off {spine}: `{keep}` (`git stash` uncommitted changes first if git says "
        f"a file is not up to date), then {then}; the kept change lands later as a ball of a "
        "slice")


def spine_refusals(ws: Workspace, since: str, tip: str) -> list[Refusal]:
    """What the server's spine rule (``rules.spine.check_spine_commits``, the lease left
    out) refuses of the spine's commits from ``since`` to ``tip``, judged here."""
    return _judge(ws, since, tip)[0]


def spine_reset_target(ws: Workspace, since: str, tip: str) -> str:
    """Where the spine goes back to when the rule refuses some of those commits
    (``rules.spine.reset_target``: the hooks' own answer)."""
    return _judge(ws, since, tip)[1]


def _judge(ws: Workspace, since: str, tip: str) -> tuple[list[Refusal], str]:
    update = RefUpdate(f"refs/heads/{ws.config.spine}", since, tip)
    with open_repo(str(ws.paths.common_dir)) as repo:
        ctx = PushContext(Objects(repo), ws.config, (update,))
        refused = check_spine_commits(ctx, update)
        return refused, reset_target(ctx, update) if refused else since


def _take_off(ws: Workspace, newest: str, back: str) -> str:
    """The commands that keep ``newest`` (and what it stands on) on a branch and move the
    spine back to ``back``: where the spine is checked out, a `reset --keep` there; where
    it is not, the branch moved alone. Each names its work tree (`git -C`), so they run
    from any folder, and they are safe to run again (``keep_aside``; the config is put
    back only where it is missing)."""
    spine, q = ws.config.spine, shlex.quote
    where = _checked_out(ws, spine)
    if where is None:
        root = q(str(ws.paths.root))
        return f"{keep_branch(newest, root)} && git -C {root} branch -f {q(spine)} {q(back)}"
    top = q(str(where))
    out = f"{keep_branch(newest, top)} && git -C {top} reset --keep {q(back)}"
    config = CONFIG_PATH.as_posix()
    if _holds(ws, newest, config) and not _holds(ws, back, config):
        # the reset takes leapgit's own config out of the work tree, and every leap command
        # after it would run on the defaults: it comes back, untracked, as before its commit
        out += (f" && (test -e {q(str(where / config))} || (git -C {top} checkout "
                f"kept-{newest[:12]} -- {config} && git -C {top} rm -q --cached {config}))")
    return out


def _holds(ws: Workspace, commit: str, path: str) -> bool:
    return git.run(["cat-file", "-e", f"{commit}:{path}"], ws.paths.root,
                   check=False).returncode == 0


def _checked_out(ws: Workspace, spine: str) -> Path | None:
    """The work tree that has the spine checked out, if any."""
    listed = git.run(["worktree", "list", "--porcelain"], ws.paths.root, check=False)
    path: str | None = None
    for line in listed.stdout.decode("utf-8", "surrogateescape").splitlines():
        if line.startswith("worktree "):
            path = line.removeprefix("worktree ")
        elif line == f"branch refs/heads/{spine}" and path is not None:
            return Path(path)
    return None


def _upstream(ws: Workspace) -> tuple[str, str] | None:
    """The spine of the remote its merges push to (``branch.<spine>.remote``), as this clone
    last fetched it (``refs/remotes/<remote>/<spine>``), and its tip; None when there is no
    such remote or copy."""
    root, spine = ws.paths.root, ws.config.spine
    remote = git.branch_remote(root, spine)
    if remote is None or remote not in git.remotes(root):
        return None  # no remote, or a URL or a path: no copy of its refs is kept
    name = f"refs/remotes/{remote}/{spine}"
    there = git.rev_parse(name, root)
    return (name, there) if there is not None else None


def _parted(root: Path, tip: str, there: str) -> str | None:
    proc = git.run(["merge-base", tip, there], root, check=False)
    found = proc.stdout.decode().strip()
    return found if proc.returncode == 0 and found else None
