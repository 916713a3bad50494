"""The audit judges whole histories, or nothing.

A shallow clone (`git clone --depth N`, the checkout most CI systems make) holds only the
newest commits of its branches; the commit at the cut names parents the clone does not
have. The audit re-derives every pass from the whole history of the ledger and of the
spine, so where either is cut it judges none of it: a part that holds says nothing of the
part that is away ("missing proof is never a pass"). What is cut is named with the one git
command that fetches the rest; another ref cut short (a topic fetched with ``--depth``) is
none of the audit's business."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path

from leapgit import git
from leapgit.errors import Hold


def require_whole(root: Path, common_dir: Path, tips: Mapping[str, str | None]) -> None:
    """Hold when a shallow boundary of this clone lies in the history of any of ``tips``
    (ref name -> its commit, None when the ref is absent)."""
    boundary = git.shallow_commits(common_dir)
    held = {ref: tip for ref, tip in tips.items() if tip}
    if not boundary or not held:
        return
    cut = [ref for ref, tip in held.items() if _reaches(root, tip, boundary)]
    if not cut:
        return
    names = " and ".join(cut)
    fetch = unshallow(root, cut)
    raise Hold(f"{names}: this clone is shallow and holds only the newest part of "
               f"{'their' if len(cut) > 1 else 'its'} history, so nothing was judged: the "
               "audit re-derives every pass from the whole history or from none",
               hint=f"fetch the rest with `{fetch}`, then audit again" if fetch else
               "clone the repository again without --depth, then audit there")


def _reaches(root: Path, tip: str, boundary: frozenset[str]) -> bool:
    """Whether ``tip``'s history (in a shallow clone: down to the boundary) holds a
    boundary commit."""
    listed = git.run(["rev-list", tip], root).stdout.decode().split()
    return not boundary.isdisjoint(listed)


def unshallow(root: Path, refs: list[str]) -> str | None:
    """`git fetch --unshallow REMOTE`: from the remote the first of ``refs`` tracks, else
    ``origin``, else the clone's only remote; None when there is no remote to name. git
    deepens every shallow boundary of the clone that way, whatever ref it is under."""
    known = git.remotes(root)
    tracked = [git.run(["config", f"branch.{ref.removeprefix('refs/heads/')}.remote"], root,
                       check=False).stdout.decode().strip() for ref in refs]
    for name in [*tracked, "origin", *(known[:1] if len(known) == 1 else [])]:
        if name in known:
            return f"git fetch --unshallow {shlex.quote(name)}"
    return None
