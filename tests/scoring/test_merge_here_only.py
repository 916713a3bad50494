"""A slice merged in a clone whose spine the shared remote never took: a clone that ran the
whole flow before its project moved to a server that runs leapgit's `pre-receive` (the
server's spine still at the project's first commit). Its `git push` of the spine was refused
for want of an open integrator lease (L9), with a hint that named no command; `leap merge
SLICE` said "already merged: nothing to do", so nothing led on. The refusal names `leap
merge SLICE`, which pushes the slice's merges under a lease of its own, and the server's
spine holds the slice; an audit of a fresh clone of the server holds."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import git, leap
from tests.templates import Served

SLICE = "calc-positions"  # the quickstart's


def _push(work: Path, *refs: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "push", "origin", *refs], cwd=work, capture_output=True,
                          text=True)


@dataclass
class Landed:
    work: Path


def _quickstart(folder: Path) -> Landed:
    """The quickstart's repository, its slice landed: the clone's work tree."""
    assert leap("quickstart", "--dir", str(folder / "qs"), cwd=folder).code == 0
    return Landed(folder / "qs" / "calc")


@pytest.fixture
def landed(served: Served) -> Iterator[Path]:
    """The quickstart's clone, its slice landed (built once a run, a copy for each test:
    a quickstart is ~3.6 s of CPU)."""
    with served.world("merge-here-quickstart", _quickstart) as world:
        yield world.work


def _moved(tmp_path: Path, work: Path, spine: str | None = "first") -> tuple[Path, Path, str]:
    """The quickstart's clone ``work`` moved to a new server with leapgit's `pre-receive`
    (its `origin` now): the server's spine at ``spine`` (`first`, the project's first
    commit; else a revision of the clone; None: no spine yet) and its ledger pushed. The
    clone, the server, the first commit."""
    first = git("rev-list", "--max-parents=0", "main", cwd=work)
    server = tmp_path / "server.git"
    git("init", "-q", "--bare", "-b", "main", str(server), cwd=tmp_path)
    assert leap("hooks", "install", "--server", cwd=server).code == 0
    git("remote", "set-url", "origin", str(server), cwd=work)  # the project's new home
    if spine is None:
        git("update-ref", "-d", "refs/remotes/origin/main", cwd=work)
    else:  # its code came first
        at = first if spine == "first" else git("rev-parse", spine, cwd=work)
        assert _push(work, f"{at}:refs/heads/main").returncode == 0
    assert _push(work, "leap/ledger").returncode == 0
    return work, server, first


def test_a_slice_merged_here_only_is_pushed_by_the_merge_the_refusal_names(
        tmp_path: Path, landed: Path) -> None:
    work, server, first = _moved(tmp_path, landed)
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
        tmp_path: Path, landed: Path) -> None:
    """Blind review: the remote's spine moved on along another line (another integrator
    landed first): `leap merge` said "already merged: nothing to do", and the slice was on
    no shared spine. It says what happened, and keeps the merges on a branch of their own."""
    work, server, first = _moved(tmp_path, landed)
    elsewhere = git("commit-tree", f"{first}^{{tree}}", "-p", first, "-m", "landed elsewhere",
                    cwd=server)
    git("update-ref", "refs/heads/main", elsewhere, cwd=server)  # behind the hooks' back
    tip = git("rev-parse", "main", cwd=work)
    # and a note here after the merge (blind review: the commands kept the slice's tip only,
    # and their guard then left the spine as it was, without a word, every time)
    (work / "NOTE.md").write_text("later, here\n")
    git("add", "NOTE.md", cwd=work)
    git("commit", "-q", "-m", "later, here", cwd=work)
    note = git("rev-parse", "HEAD", cwd=work)
    said = leap("merge", SLICE, cwd=work)
    assert said.code == 1 and "moved on along another line" in said.err, said
    assert tip[:12] in said.err and "nothing to do" not in said.out + said.err
    keep = re.search(r"`(\(git branch kept-[^`]+)`", said.err)
    assert keep is not None, said.err
    subprocess.run(["sh", "-c", keep.group(1)], cwd=work, check=True, capture_output=True)
    assert git("rev-parse", f"kept-{note[:12]}", cwd=work) == note
    # asked again once the spine followed the remote's (blind review: the same commands,
    # whose guard then stopped them without a word): it names what still leads on
    again = leap("merge", SLICE, cwd=work)
    assert again.code == 1 and "moved on along another line" in again.err, again
    keep = re.search(r"`(\(git branch kept-[^`]+)`", again.err)
    assert keep is not None and "git switch" not in keep.group(1), again.err
    subprocess.run(["sh", "-c", keep.group(1)], cwd=work, check=True, capture_output=True)
    assert git("rev-parse", f"kept-{tip[:12]}", cwd=work) == tip
    assert git("rev-parse", "main", cwd=work) == elsewhere == git("rev-parse", "main",
                                                                  cwd=server)


def test_merges_here_on_a_line_the_server_refuses_are_refused_before_any_lease(
        tmp_path: Path, landed: Path) -> None:
    """Blind review: the slice's merges, pushed as they are, stood on a history the spine
    rule refuses: the push was refused, its hint said `leap merge S` again, which pushed the
    same tip, a loop, a lease taken and given back on the remote each time. The merges are
    judged here first, by the hooks' own rule and reset target; refused, nothing is taken,
    and the hint keeps them and lands the work anew. Here the remote's spine is a ball's
    candidate (a first push, not judged there): the spine's line from the slice's tip does
    not lead back to it."""
    from leapgit.ledger import leases
    from leapgit.ledger.store import Ledger

    work, server, _first = _moved(tmp_path, landed, f"leap/ball/{SLICE}/parser")
    candidate = git("rev-parse", f"leap/ball/{SLICE}/parser", cwd=work)
    with Ledger(server) as ledger:
        before = ledger.tip()
    tip = git("rev-parse", "main", cwd=work)
    said = leap("merge", SLICE, cwd=work)
    assert said.code == 1 and "on commits the spine rule refuses" in said.err, said
    assert "does not lead back" in said.err, said.err
    assert f"git branch kept-{tip[:12]} {tip}" in said.err, said.err
    assert f"git reset --keep {candidate}`" in said.err, said.err  # the hooks' own target
    assert f"`leap merge {SLICE}` again" not in said.err, said.err
    with Ledger(server) as ledger:
        assert ledger.tip() == before  # no lease taken there
        assert leases.active_lease(ledger.require(), "main") is None
    assert git("rev-parse", "main", cwd=server) == candidate


def test_a_slice_merged_here_only_goes_to_a_new_empty_server_judged_first(
        tmp_path: Path, landed: Path) -> None:
    """To a remote with no spine yet (whose first push `pre-receive` does not judge), the
    publish judges from the slice's base (a blind review: it pushed whatever the slice
    stood on, a note too, and a fresh clone's audit then failed; this test shows the honest
    case goes up, not that refusal, which the quickstart's history cannot hold), and the
    audit of a fresh clone holds."""
    work, server, _first = _moved(tmp_path, landed, None)
    merged = leap("merge", SLICE, cwd=work)
    assert merged.code == 0 and "(none -> " in merged.out, merged
    assert git("rev-parse", "main", cwd=server) == git("rev-parse", "main", cwd=work)
    fresh = tmp_path / "fresh"
    git("clone", "-q", str(server), str(fresh), cwd=tmp_path)
    git("fetch", "-q", "origin", "leap/ledger:leap/ledger", cwd=fresh)
    assert leap("audit", cwd=fresh).code == 0


def test_a_slice_merged_here_whose_spine_tracks_no_remote_says_how_then_goes_up(
        tmp_path: Path, landed: Path) -> None:
    """Blind review: with `main` tracking no remote (`git push -u` sets it only once a push
    lands), the L9 refusal's `leap merge SLICE` said "already merged: nothing to do". Where
    a remote shares the ledger and its spine lacks the slice, it names the config that makes
    the spine track it; followed, the merge pushes the slice."""
    work, server, first = _moved(tmp_path, landed)
    git("config", "--unset", "branch.main.remote", cwd=work)
    git("config", "--unset", "branch.main.merge", cwd=work)
    said = leap("merge", SLICE, cwd=work)
    assert said.code == 2 and "nothing to do" not in said.out, said
    track = re.search(r"`(git config [^`]+)`", said.err)
    assert track is not None and f"then `leap merge {SLICE}` again" in said.err, said.err
    subprocess.run(track.group(1), shell=True, cwd=work, check=True)
    merged = leap("merge", SLICE, cwd=work)
    assert merged.code == 0 and "pushed to origin" in merged.out, merged
    assert git("rev-parse", "main", cwd=server) == git("rev-parse", "main", cwd=work)


def test_the_keep_aside_reset_stays_on_the_spine_line_past_refused_ball_commits(
        tmp_path: Path, landed: Path) -> None:
    """Blind review: the reset target was the parent of the push's first refused commit,
    and a refused commit on a ball branch that a merge brings in (its candidate history)
    came first: the commands named a commit of the ball branch, and followed, the spine
    left its own line. The target is under the first refused commit of the spine's line."""
    work = landed
    before = git("rev-parse", "main", cwd=work)
    parser = git("rev-parse", f"leap/ball/{SLICE}/parser", cwd=work)
    tree = git("rev-parse", f"{parser}^{{tree}}", cwd=work)
    out = git("commit-tree", git("mktree", cwd=work, input=(
        git("ls-tree", tree, cwd=work) + "\n100644 blob "
        + git("hash-object", "-w", "--stdin", cwd=work, input=b"zz\n") + "\tzz.txt\n"
    ).encode()), "-p", parser, "-m", "parser: outside the scope", cwd=work)
    back = git("commit-tree", tree, "-p", out, "-m", "parser: taken back", cwd=work)
    merge = git("commit-tree", f"{before}^{{tree}}", "-p", before, "-p", back, "-m",
                f"integrate parser again\n\nLeap-Slice: {SLICE}\nLeap-Ball: parser\n"
                f"Leap-Candidate: {tree}", cwd=work)
    note = git("commit-tree", f"{merge}^{{tree}}", "-p", merge, "-m", "a note", cwd=work)
    pushed = _push(work, "--no-verify", f"{note}:refs/heads/main")
    assert pushed.returncode != 0, pushed.stderr
    resets = set(re.findall(r"git reset --keep ([0-9a-f]{40})`", pushed.stderr))
    assert resets == {before}, pushed.stderr


def test_an_untracked_spine_with_a_stale_remote_copy_still_says_already_merged(
        tmp_path: Path, landed: Path) -> None:
    """Blind review: with `main` tracking no remote and `refs/remotes/origin/main` stale
    (fetched before the slice landed there), an already-merged slice was told to make the
    spine track origin (exit 2). The remote's spine is read again first: it holds it."""
    work = landed
    git("config", "--unset", "branch.main.remote", cwd=work)
    git("config", "--unset", "branch.main.merge", cwd=work)
    first = git("rev-list", "--max-parents=0", "main", cwd=work)
    git("update-ref", "refs/remotes/origin/main", first, cwd=work)  # stale
    said = leap("merge", SLICE, cwd=work)
    assert said.code == 0 and "already merged" in said.out, said


def test_leap_run_of_a_slice_merged_here_only_publishes_it_and_says_so(
        tmp_path: Path, landed: Path) -> None:
    """`leap run`, whose merge step is `leap merge`'s, pushes such a slice too, and its
    `--json` merge event says `published` (not "already merged": it was not, there)."""
    import json

    work, server, first = _moved(tmp_path, landed)
    ran = leap("run", SLICE, "--json", "--heartbeat", "0", cwd=work)
    assert ran.code == 0, (ran.out[-2000:], ran.err)
    said = [json.loads(line) for line in ran.out.splitlines() if line.startswith("{")]
    [merged] = [e for e in said if e["event"] == "merge"]
    assert merged["step"] == "published" and merged["remote"] == "origin", merged
    assert merged["lease"] >= 1 and merged["released"] is True and "hint" not in merged, merged
    assert git("rev-parse", "main", cwd=server) == git("rev-parse", "main", cwd=work)


def test_a_remote_out_of_reach_that_lacked_the_slice_is_a_hold_not_already_merged(
        tmp_path: Path, landed: Path) -> None:
    """Telemetry review: with the remote out of reach, a slice its spine lacked (as last
    fetched) was reported "already merged", exit 0, beside a warning that said "nothing
    landed". It is the hold the merge gives for a remote out of reach (exit 3)."""
    work, _server, _first = _moved(tmp_path, landed)
    git("remote", "set-url", "origin", str(tmp_path / "gone.git"), cwd=work)
    said = leap("merge", SLICE, cwd=work)
    assert said.code == 3 and "already merged" not in said.out, said
    assert f"`leap merge {SLICE}` again once origin answers" in said.err, said.err


def test_a_publish_whose_push_stopped_says_so_in_the_lease_it_gives_back(
        tmp_path: Path, landed: Path) -> None:
    """Telemetry review: the lease's release reason said "pushed" when the push failed."""
    from leapgit.ledger.store import Ledger

    work, server, _first = _moved(tmp_path, landed)
    hook = server / "hooks" / "update"
    hook.write_text('#!/bin/sh\n[ "$1" != refs/heads/main ] || exit 1\n')
    hook.chmod(0o755)
    said = leap("merge", SLICE, cwd=work)
    assert said.code == 1, said
    with Ledger(server) as ledger:
        view = ledger.require()
        released = [p for p in view.walk() if p.startswith("spines/main/leases/")
                    and p.endswith("release.yaml")]
        path = max(released, key=lambda p: int(p.split("/")[3]))  # the publish's, the last
        text = (view.read(path) or b"").decode()
    assert "its push stopped" in text and "pushed" not in text, text


@pytest.mark.parametrize("command", ["merge", "run"])
def test_a_publish_whose_release_cannot_reach_the_remote_names_the_sync_that_gives_it_back(
        tmp_path: Path, landed: Path, command: str) -> None:
    """Stop 37 left it read-only: the spine went up, then the remote refused the ledger's
    push that gives the lease back. The merge says the lease is given back here only and
    names `leap sync origin` (`leap run --json`: in its `published` merge event); run as
    printed, once the remote takes pushes again, it gives the lease back there, and no other
    integrator is held by it."""
    from leapgit.ledger import leases
    from leapgit.ledger.store import Ledger

    work, server, first = _moved(tmp_path, landed)
    hook = server / "hooks" / "update"  # the ledger refused once the spine has moved
    hook.write_text(f'#!/bin/sh\n[ "$1" != refs/heads/leap/ledger ] || '
                    f'[ "$(git rev-parse refs/heads/main)" = {first} ] || exit 1\n')
    hook.chmod(0o755)
    if command == "merge":
        said = leap("merge", SLICE, cwd=work)
        assert said.code == 0, said
        assert "given back here; `leap sync origin` gives it back there" in said.out, said.out
        shown = said.out
    else:
        said = leap("run", SLICE, "--json", "--heartbeat", "0", cwd=work)
        assert said.code == 0, (said.out[-2000:], said.err)
        events = [json.loads(line) for line in said.out.splitlines() if line.startswith("{")]
        [merged] = [e for e in events if e["event"] == "merge"]
        assert merged["step"] == "published" and merged["released"] is False, merged
        shown = merged["hint"]
    assert git("rev-parse", "main", cwd=server) == git("rev-parse", "main", cwd=work) != first
    with Ledger(server) as ledger:
        open_there = leases.active_lease(ledger.require(), "main")
    assert open_there is not None  # the lease stays open on the remote, as said

    hook.unlink()
    named = re.findall(r"`(leap sync [^`]+)`", shown)
    assert named == ["leap sync origin"], shown
    synced = leap(*named[0].split()[1:], cwd=work)  # the hint, exactly
    assert synced.code == 0, synced
    with Ledger(server) as ledger:
        assert leases.active_lease(ledger.require(), "main") is None
