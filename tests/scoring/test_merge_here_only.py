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

    fresh = tmp_path / "fresh"
    git("clone", "-q", str(server), str(fresh), cwd=tmp_path)
    git("fetch", "-q", "origin", "leap/ledger:leap/ledger", cwd=fresh)
    audit = leap("audit", cwd=fresh)
    assert audit.code == 0, audit
