"""The audit judges whole histories, or nothing.

A shallow clone (`git clone --depth N`, the checkout most CI systems make) holds only the
newest commits of its branches; the commit at the cut names parents the clone does not
have. The audit re-derives every pass from the whole history of the ledger and of the
spine, so where either is cut it judges none of it: a part that holds says nothing of the
part that is away ("missing proof is never a pass"). What is cut is named with the one git
command that fetches the rest; another ref cut short (a topic fetched with ``--depth``) is
none of the audit's business, and neither is a root commit git lists at the cut (a depth
that reached it: nothing is missing)."""

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
    cut = [ref for ref, tip in held.items() if cut_in(root, tip, boundary)]
    if not cut:
        return
    names = " and ".join(cut)
    fetch = unshallow(root, cut)
    raise Hold(f"{names}: this clone is shallow and holds only the newest part of "
               f"{'their' if len(cut) > 1 else 'its'} history, so nothing was judged: the "
               "audit re-derives every pass from the whole history or from none",
               hint=f"fetch the rest with `{fetch}`, then audit again" if fetch else
               "clone the repository again without --depth, then audit there")


def require_spine(root: Path, spine_ref: str, tip: str | None) -> None:
    """Hold when this clone's spine is not the spine its remote holds, so that judging it
    would call the ledger's merges rewritten: absent here while a remote's copy is kept (a
    detached checkout, as CI makes one), or behind that copy (fetched, not moved). The hint
    brings the remote's spine here."""
    names = _tracking_names(root)
    branch = spine_ref.removeprefix("refs/heads/")
    for remote in git.remotes_holding(spine_ref, names, git.remotes(root)):
        for ref in (f"refs/remotes/{remote}/{branch}", git.leap_tracking(remote, spine_ref)):
            copy = git.rev_parse(ref, root) if ref in names else None
            if copy is None or copy == tip:
                continue
            if tip is None:
                why = f"is not a branch of this clone, though {remote} has it (a detached " \
                      "checkout)"
            elif git.is_ancestor(root, tip, copy):
                why = f"is behind {remote}'s, which this clone fetched"
            else:
                continue  # parted from it: judged as it stands here
            raise Hold(f"{spine_ref} {why}, so nothing was judged: the audit judges the "
                       "ledger's merges on the spine they landed on",
                       hint=f"bring it here with `{_bring(root, remote, spine_ref, ref)}`, "
                            "then audit again")


def _bring(root: Path, remote: str, spine_ref: str, copy: str) -> str:
    """The git command that moves ``spine_ref`` to the remote's copy found at ``copy`` (git's
    ``refs/remotes/``, or leapgit's own), fast-forward only: a merge where it is checked out,
    else a fetch into it (from the remote for git's copy, from this clone for leapgit's)."""
    branch = spine_ref.removeprefix("refs/heads/")
    gits = copy == f"refs/remotes/{remote}/{branch}"
    source = f"{remote}/{branch}" if gits else copy
    merge = f"git merge --ff-only {shlex.quote(source)}"
    head = git.run(["symbolic-ref", "-q", "HEAD"], root, check=False).stdout.decode().strip()
    if head == spine_ref:
        return merge
    listed = git.run(["worktree", "list", "--porcelain"], root).stdout.decode(
        "utf-8", "surrogateescape").split("\n\n")
    for block in listed:  # checked out in another worktree: git fetches into it never
        fields = dict(line.partition(" ")[::2] for line in block.splitlines())
        if fields.get("branch") == spine_ref:
            return f"git -C {shlex.quote(fields.get('worktree', '.'))} {merge[4:]}"
    if gits:
        return f"git fetch {shlex.quote(remote)} {shlex.quote(branch)}:{shlex.quote(branch)}"
    return f"git fetch . {shlex.quote(f'{copy}:{spine_ref}')}"


def _tracking_names(root: Path) -> list[str]:
    return git.run(["for-each-ref", "--format=%(refname)", "refs/leap/remotes/",
                    "refs/remotes/"], root).stdout.decode("utf-8", "surrogateescape").split()


def cut_in(root: Path, tip: str, boundary: frozenset[str]) -> bool:
    """Whether ``tip``'s history (in a shallow clone: down to the boundary) holds a commit
    at the cut whose parents are not here."""
    listed = git.run(["rev-list", tip], root).stdout.decode().split()
    return bool(cut_commits(root, boundary.intersection(listed)))


def cut_commits(root: Path, boundary: frozenset[str] | set[str]) -> set[str]:
    """Of the commits git lists as shallow, those that name a parent (the object's own
    ``parent`` lines): a root commit at the boundary hides nothing."""
    if not boundary:
        return set()
    out = git.run(["cat-file", "--batch"], root, check=False,
                  input="".join(f"{sha}\n" for sha in sorted(boundary)).encode()).stdout
    found, at = set(), 0
    while at < len(out):
        end = out.find(b"\n", at)
        if end < 0:  # cut off mid-line (git stopped): nothing more to read
            break
        header = out[at:end].split()
        if len(header) != 3 or not header[2].isdigit():
            at = end + 1  # "<id> missing": nothing to read
            continue
        size = int(header[2])
        body = out[end + 1:end + 1 + size]
        if b"\nparent " in body.partition(b"\n\n")[0]:
            found.add(header[0].decode())
        at = end + 2 + size
    return found


def unshallow(root: Path, refs: list[str]) -> str | None:
    """`git fetch --unshallow REMOTE` from a remote that holds the first of ``refs`` that
    one does: the one its branch tracks, else one whose copy of it this clone keeps (where
    `leap sync` or `git fetch` put it); else ``origin``, else the clone's only remote. None
    when there is no remote to name."""
    known = git.remotes(root)
    names = _tracking_names(root)
    ordered: list[str] = []
    for ref in refs:
        tracked = git.branch_remote(root, ref.removeprefix("refs/heads/"))
        ordered += [*([tracked] if tracked else []), *git.remotes_holding(ref, names, known)]
    for name in [*ordered, "origin", *(known[:1] if len(known) == 1 else [])]:
        if name in known:
            return f"git fetch --unshallow {shlex.quote(name)}"
    return None
