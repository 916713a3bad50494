"""L8 before any work is spent: the spine this clone cuts, writes reds and throws on must be
one its remote takes. A commit made on the spine outside an integration and never pushed
(a note committed to `main` before a cut) went into every ball's base: the slice was
built, red-tested and scored, and only its merge was refused, by this clone's `pre-push`
or the server, for a commit no merge can carry. The spine's tip is judged here by the rule
the server runs (``rules.spine.check_spine_commits``: all of ``check_spine_update`` but
the lease, which a merge takes before its push), against the remote's spine as this clone
last fetched it (the branch's upstream), before anything is cut or thrown."""

from __future__ import annotations

from pathlib import Path

from leapgit import git
from leapgit.errors import RuleViolation
from leapgit.ledger.workspace import Workspace

AGAIN = "run the leap command that stopped again"


def require_spine_pushable(ws: Workspace, then: str) -> None:
    """Raise (with the rule's own hint, then ``then``) when the local spine holds commits
    its upstream lacks that the server would refuse. No upstream (a repository without a
    remote, or a spine that tracks none): nothing to judge against, as before."""
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
    from leapgit.ledger.repo import open_repo
    from leapgit.rules.context import PushContext, RefUpdate
    from leapgit.rules.objects import Objects
    from leapgit.rules.spine import OUTSIDE, check_spine_commits, keep_aside

    update = RefUpdate(f"refs/heads/{spine}", since, tip)
    with open_repo(str(ws.paths.common_dir)) as repo:
        refusals = check_spine_commits(PushContext(Objects(repo), ws.config, (update,)), update)
    if not refusals:
        return  # integration merges not pushed yet: the merge's push carries them
    # the newest commit made outside an integration: a branch kept at it keeps them all
    outside = [r for r in refusals if OUTSIDE in r.hint and r.commit]
    first = outside[-1] if outside else refusals[0]
    short = name.removeprefix("refs/remotes/")
    hint = (f"keep them on a branch of their own and take them off {spine} (with {spine} "
            f"checked out): {keep_aside(first.commit)}, then {then}; the kept change lands "
            "later as a ball of a slice") if outside and first.commit else \
        f"{first.hint}; then {then}"
    raise RuleViolation(
        f"{spine} holds commits {short} does not have, and its server refuses them on the "
        f"spine: {(first.commit or tip)[:12]}: {first.message}; a slice built on it could "
        "never be merged", rule=first.rule, hint=hint)


def _upstream(ws: Workspace) -> tuple[str, str] | None:
    """The spine's upstream (``refs/remotes/R/B``, what `@{upstream}` names) and its tip as
    last fetched, or None."""
    root, spine = ws.paths.root, ws.config.spine
    proc = git.run(["for-each-ref", "--format=%(upstream)", f"refs/heads/{spine}"], root,
                   check=False)
    name = proc.stdout.decode("utf-8", "surrogateescape").strip()
    if not name.startswith("refs/remotes/"):  # none, or a branch of this repository
        return None
    there = git.rev_parse(name, root)
    return (name, there) if there is not None else None


def _parted(root: Path, tip: str, there: str) -> str | None:
    proc = git.run(["merge-base", tip, there], root, check=False)
    found = proc.stdout.decode().strip()
    return found if proc.returncode == 0 and found else None
