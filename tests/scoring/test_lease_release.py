"""`leap lease release` (L9): a lease whose merge died outright is given back by its holder,
never by another, and never while a stopped merge waits to be finished."""

from __future__ import annotations

from pathlib import Path

import pytest

from leapgit.ledger import leases
from leapgit.ledger.leases import LeaseHeld
from leapgit.ledger.store import Ledger
from tests.support import leap, make_repo


def test_the_holder_gives_back_a_lease_its_dead_merge_left(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"f.txt": "x\n"})
    assert leap("init", cwd=repo).code == 0
    with Ledger(repo / ".git") as ledger:  # a merge killed outright left this open
        leases.take_lease(ledger, "main", "integrator", "merge s")
    with Ledger(repo / ".git") as ledger, pytest.raises(LeaseHeld) as refused:
        leases.take_lease(ledger, "main", "integrator", "merge s")  # even by its holder
    assert "leap lease release --holder integrator" in " ".join(refused.value.lines())
    other = leap("lease", "release", "--holder", "someone", cwd=repo)
    assert other.code == 1 and "[L9]" in other.err and "not 'someone'" in other.err
    (repo / ".git" / "leap-merging").mkdir()
    (repo / ".git" / "leap-merging" / "s.yaml").write_text("kind: merge\n")
    waiting = leap("lease", "release", cwd=repo)
    assert waiting.code == 1 and "`leap merge s` again" in waiting.err
    (repo / ".git" / "leap-merging" / "s.yaml").unlink()
    done = leap("lease", "release", cwd=repo)
    assert done.code == 0, done
    assert "lease 1 on main released by integrator" in done.out
    with Ledger(repo / ".git") as ledger:
        assert leases.active_lease(ledger.require(), "main") is None
        assert leases.take_lease(ledger, "main", "integrator").number == 2


def test_a_lease_another_clone_s_merge_took_is_given_back_only_when_forced(
        tmp_path: Path) -> None:
    """A walk-away hunt on two machines: a clone gave back the lease another machine's
    merge held while that merge ran; a second integrator merged beside it, and the first
    clone was stuck. A lease whose take names another clone's merge is that clone's to
    give back; the refusal names `--force` for a clone gone for good, which gives it back.
    This clone's own merge's lease needs no force."""
    from leapgit.ledger.workspace import open_workspace
    from leapgit.scoring.merge import _taken_for
    from tests.support import hinted_leap

    repo = make_repo(tmp_path / "repo", {"f.txt": "x\n"})
    assert leap("init", cwd=repo).code == 0
    with Ledger(repo / ".git") as ledger:
        leases.take_lease(ledger, "main", "integrator", "merge s on elsewhere in clone /w/.git")
    (repo / ".git" / "leap-merging" / "kept" / "left").mkdir(parents=True)  # one recorded
    refused = leap("lease", "release", cwd=repo)
    assert refused.code == 1 and "[L9]" in refused.err, refused
    assert "another clone's merge" in refused.err, refused.err  # no "merge kept" (a review)
    [forced] = hinted_leap(refused.err)
    assert forced == ["lease", "release", "--holder", "integrator", "--force"], refused.err
    done = leap(*forced, cwd=repo)
    assert done.code == 0 and "lease 1 on main released" in done.out, done
    with Ledger(repo / ".git") as ledger:
        leases.take_lease(ledger, "main", "integrator", _taken_for(open_workspace(repo), "s"))
    assert leap("lease", "release", cwd=repo).code == 0  # this clone's own: no force


@pytest.mark.parametrize("asked", ["status", "release"])
def test_a_live_merge_s_lease_is_not_given_back_by_hand(tmp_path: Path, asked: str) -> None:
    """A blind review: while a merge of this clone runs (its merge lock held, from before it
    takes the lease; its intent is written only after its review), `leap status` called the
    lease one a killed merge left and named `leap lease release`, which gave it back from
    under the live merge: another clone's merge could take it, two integrators at once."""
    from filelock import FileLock

    from leapgit.ledger.workspace import open_workspace
    from leapgit.scoring.merge import _taken_for

    repo = make_repo(tmp_path / "repo", {"f.txt": "x\n"})
    assert leap("init", cwd=repo).code == 0
    ws = open_workspace(repo)
    folder = repo / ".git" / "leap" / "merging"
    folder.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(folder / "spine.lock"), thread_local=False)
    lock.acquire(timeout=0)  # a merge of this clone runs now
    try:
        with Ledger(repo / ".git") as ledger:
            leases.take_lease(ledger, "main", "integrator", _taken_for(ws, "s"))
        if asked == "status":
            said = leap("status", cwd=repo).out
            assert "a merge of this clone runs now and gives it back" in said, said
            assert "leap lease release" not in said, said
        else:
            done = leap("lease", "release", cwd=repo)
            assert done.code == 1 and "a merge of this clone runs now" in done.err, done
    finally:
        lock.release()
    with Ledger(repo / ".git") as ledger:
        assert leases.active_lease(ledger.require(), "main") is not None  # still its own
