"""A slice merged in a clone whose spine the shared remote never took: a clone that ran the
whole flow before its project moved to a server that runs leapgit's `pre-receive` (the
server's spine still at the project's first commit). Its `git push` of the spine was refused
for want of an open integrator lease (L9), with a hint that named no command; `leap merge
SLICE` said "already merged: nothing to do", so nothing led on. The refusal names `leap
merge SLICE`, which pushes the slice's merges under a lease of its own, and the server's
spine holds the slice; an audit of a fresh clone of the server holds."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.support import git, leap

SLICE = "calc-positions"  # the quickstart's


def _push(work: Path, *refs: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "push", "origin", *refs], cwd=work, capture_output=True,
                          text=True)


def test_a_slice_merged_here_only_is_pushed_by_the_merge_the_refusal_names(
        tmp_path: Path) -> None:
    assert leap("quickstart", "--dir", str(tmp_path / "qs"), cwd=tmp_path).code == 0
    work = tmp_path / "qs" / "calc"
    first = git("rev-list", "--max-parents=0", "main", cwd=work)
    server = tmp_path / "server.git"
    git("init", "-q", "--bare", "-b", "main", str(server), cwd=tmp_path)
    assert leap("hooks", "install", "--server", cwd=server).code == 0
    git("remote", "set-url", "origin", str(server), cwd=work)  # the project's new home
    assert _push(work, f"{first}:refs/heads/main").returncode == 0  # its code came first
    assert _push(work, "leap/ledger").returncode == 0
    merged_here = git("rev-parse", "main", cwd=work)

    # a note on top (blind review: the keep-aside commands reset the spine to its upstream,
    # taking this clone's honest merges off it too): followed, they take the note alone off
    (work / "NOTE.md").write_text("a note\n")
    git("add", "NOTE.md", cwd=work)
    git("commit", "-q", "-m", "a note", cwd=work)
    note = git("rev-parse", "HEAD", cwd=work)
    refused = _push(work, "main")
    assert refused.returncode != 0 and "[L8]" in refused.stderr, refused.stderr
    keep = re.search(r"`(\(git branch kept-[^`]+)`", refused.stderr)
    assert keep is not None, refused.stderr
    ran = subprocess.run(["sh", "-c", keep.group(1)], cwd=work, capture_output=True, text=True)
    assert ran.returncode == 0, ran
    assert git("rev-parse", "main", cwd=work) == merged_here
    assert git("rev-parse", f"kept-{note[:12]}", cwd=work) == note

    refused = _push(work, "main")
    assert refused.returncode != 0 and "no open integrator lease" in refused.stderr, refused
    named = re.findall(r"`(leap [^`]+)`", refused.stderr)
    assert named == [f"leap merge {SLICE}"], refused.stderr

    merged = leap(*named[0].split()[1:], cwd=work)
    assert merged.code == 0, merged
    assert "pushed to origin" in merged.out, merged.out
    tip = git("rev-parse", "main", cwd=work)
    assert git("rev-parse", "main", cwd=server) == tip != first
    again = leap("merge", SLICE, cwd=work)  # now it is merged there too: nothing to do
    assert again.code == 0 and "already merged" in again.out, again

    # a merge killed after its push landed, before it gave its lease back: the next `leap
    # merge` of the slice takes none (nothing is left to merge), so it gives that one back
    from leapgit.ledger import leases
    from leapgit.ledger.store import Ledger
    from leapgit.ledger.workspace import open_workspace
    from leapgit.records.types import INTEGRATOR
    from leapgit.scoring.merge import _taken_for

    left = leases.take_lease_on("origin", work, "main", INTEGRATOR,
                                _taken_for(open_workspace(work), SLICE), "a test")
    git("fetch", "-q", "origin", "leap/ledger:leap/ledger", cwd=work)
    given = leap("merge", SLICE, cwd=work)
    assert given.code == 0 and "already merged" in given.out, given
    assert f"lease {left.number} on main, left by a killed merge of this clone, given back" \
        in given.out, given.out
    with Ledger(server) as ledger:
        assert leases.active_lease(ledger.require(), "main") is None

    fresh = tmp_path / "fresh"
    git("clone", "-q", str(server), str(fresh), cwd=tmp_path)
    git("fetch", "-q", "origin", "leap/ledger:leap/ledger", cwd=fresh)
    audit = leap("audit", cwd=fresh)
    assert audit.code == 0, audit


def test_a_slice_merged_here_only_while_the_remote_moved_on_elsewhere_says_so(
        tmp_path: Path) -> None:
    """Blind review: the remote's spine moved on along another line (another integrator
    landed first): `leap merge` said "already merged: nothing to do", and the slice was on
    no shared spine. It says what happened, and keeps the merges on a branch of their own."""
    assert leap("quickstart", "--dir", str(tmp_path / "qs"), cwd=tmp_path).code == 0
    work = tmp_path / "qs" / "calc"
    first = git("rev-list", "--max-parents=0", "main", cwd=work)
    server = tmp_path / "server.git"
    git("init", "-q", "--bare", "-b", "main", str(server), cwd=tmp_path)
    assert leap("hooks", "install", "--server", cwd=server).code == 0
    git("remote", "set-url", "origin", str(server), cwd=work)
    assert _push(work, f"{first}:refs/heads/main").returncode == 0
    assert _push(work, "leap/ledger").returncode == 0
    elsewhere = git("commit-tree", f"{first}^{{tree}}", "-p", first, "-m", "landed elsewhere",
                    cwd=server)
    git("update-ref", "refs/heads/main", elsewhere, cwd=server)  # behind the hooks' back
    tip = git("rev-parse", "main", cwd=work)
    said = leap("merge", SLICE, cwd=work)
    assert said.code == 1 and "moved on along another line" in said.err, said
    assert "nothing to do" not in said.out + said.err
    keep = re.search(r"`(git branch \S+ [0-9a-f]{40})`", said.err)
    assert keep is not None, said.err
    subprocess.run(keep.group(1), shell=True, cwd=work, check=True)
    assert git("rev-parse", f"{SLICE}-merged-here", cwd=work) == tip
    assert git("rev-parse", "main", cwd=server) == elsewhere
