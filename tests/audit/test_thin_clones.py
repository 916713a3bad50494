"""A shallow clone (`git clone --depth N`, the checkout most CI systems make) holds only the
newest commits of its branches, and a commit at the cut names parents the clone does not
have. `leap audit` and `leap audit-signatures` re-derive every pass from the whole history
of the ledger and the spine, so where either is cut they judge nothing: a hold (exit 3)
naming the ref, whose hint, run exactly as written, fetches the rest, and then the audit
judges all of it. `leap status` reads only the ledger's tip, so it works there, and counts
the signatures it can see. Before: an internal error (exit 70) in all three.

A partial clone (`git clone --filter=blob:none`) holds every commit and no file contents
until git fetches them; dulwich fetches nothing. `leap sync` fetches the ledger whole in one
go, and any other object leapgit reads there is fetched through git as it is read.

The repository is the quickstart's: a slice landed on a real remote, whose `main` and
`leap/ledger` a clone takes."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest

from tests.support import git, leap

TIMEOUT = 120


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("shallow")
    assert leap("quickstart", "--dir", str(where), cwd=where).code == 0
    bare = where / "calc-remote.git"
    # what a hosting service allows, so a partial clone can fetch a file when it needs it
    git("config", "uploadpack.allowFilter", "true", cwd=bare)
    git("config", "uploadpack.allowAnySHA1InWant", "true", cwd=bare)
    return bare


def missing(repo: Path, ref: str) -> int:
    listed = git("rev-list", "--objects", "--missing=print", ref, cwd=repo)
    return sum(1 for line in listed.splitlines() if line.startswith("?"))


def clone(remote: Path, into: Path, *args: str) -> Path:
    """A clone of ``remote`` over a transport that honours --depth (a plain path ignores it)."""
    git("clone", "-q", *args, f"file://{remote}", str(into), cwd=into.parent)
    return into


def hinted(err: str) -> str:
    """The one git command a message names, in backticks."""
    found = re.findall(r"`(git [^`]*)`", err)
    assert len(found) == 1, err
    return found[0]


def run_hint(command: str, cwd: Path) -> None:
    git(*shlex.split(command)[1:], cwd=cwd)


@pytest.mark.parametrize("command", [["audit"], ["audit-signatures"]])
def test_a_cut_ledger_history_is_a_hold_whose_unshallow_lets_the_audit_judge_it_all(
        remote: Path, tmp_path: Path, command: list[str]) -> None:
    repo = clone(remote, tmp_path / "ci", "--depth", "3", "--no-single-branch")
    assert leap("sync", "origin", cwd=repo).code == 0  # what `leap status` names here
    assert int(git("rev-list", "--count", "leap/ledger", cwd=repo)) == 3

    r = leap(*command, cwd=repo)
    assert r.code == 3, r
    assert "internal error" not in r.err and "Traceback" not in r.err
    problem = [line for line in r.err.splitlines() if line.startswith("leap: ")]
    assert len(problem) == 1, r.err
    assert "refs/heads/leap/ledger" in problem[0] and "shallow" in problem[0]
    assert "nothing was judged" in problem[0]
    assert r.out == ""  # no report of a part

    run_hint(hinted(problem[0]), repo)
    assert int(git("rev-list", "--count", "leap/ledger", cwd=repo)) == 20
    again = leap(*command, cwd=repo)
    assert again.code == 0, again
    if command == ["audit"]:
        assert "audit: every pass re-derived; all holds" in again.out
        assert "20 commit(s)" in again.out


def test_a_cut_spine_history_under_a_whole_ledger_is_a_hold_too(
        remote: Path, tmp_path: Path) -> None:
    repo = clone(remote, tmp_path / "ci", "--depth", "1")  # main alone, one commit deep
    assert leap("sync", "origin", cwd=repo).code == 0  # the whole ledger
    assert not (repo / ".git" / "shallow").read_text().strip() == ""
    assert int(git("rev-list", "--count", "leap/ledger", cwd=repo)) == 20

    r = leap("audit", cwd=repo)
    assert r.code == 3, r
    problem = r.err.splitlines()[0]
    assert "refs/heads/main" in problem and "refs/heads/leap/ledger" not in problem, problem
    run_hint(hinted(problem), repo)
    again = leap("audit", cwd=repo)
    assert again.code == 0, again
    assert not (repo / ".git" / "shallow").exists()


def test_a_shallow_boundary_the_audited_histories_never_reach_changes_nothing(
        remote: Path, tmp_path: Path) -> None:
    """Another branch cut short (a topic fetched with --depth) is none of the audit's
    business: it judges, and holds."""
    repo = clone(remote, tmp_path / "full")
    assert leap("sync", "origin", cwd=repo).code == 0
    other = clone(remote, tmp_path / "other")
    git("commit", "-q", "--allow-empty", "-m", "a topic's base", cwd=other)
    git("commit", "-q", "--allow-empty", "-m", "a topic", cwd=other)
    topic = git("rev-parse", "HEAD", cwd=other)
    git("fetch", "-q", "--depth", "1", f"file://{other}", f"{topic}:refs/heads/topic",
        cwd=repo)
    assert (repo / ".git" / "shallow").read_text().split() == [topic]
    r = leap("audit", cwd=repo)
    assert r.code == 0, r
    assert "all holds" in r.out


def test_status_in_a_shallow_clone_counts_the_signatures_it_sees_and_says_the_rest_is_away(
        remote: Path, tmp_path: Path) -> None:
    repo = clone(remote, tmp_path / "ci", "--depth", "3", "--no-single-branch")
    assert leap("sync", "origin", cwd=repo).code == 0

    r = leap("status", cwd=repo)
    assert r.code == 0, r
    line = next(x for x in r.out.splitlines() if x.startswith("signatures:"))
    assert "3 ledger commits" in line and "shallow" in line, line
    run_hint(hinted(line), repo)
    again = leap("status", cwd=repo)
    assert again.code == 0, again
    line = next(x for x in again.out.splitlines() if x.startswith("signatures:"))
    assert "20 ledger commits" in line and "shallow" not in line, line

    as_json = leap("status", "--json", cwd=repo)
    assert as_json.code == 0


def test_a_copy_of_a_shallow_clone_is_held_the_same(remote: Path, tmp_path: Path) -> None:
    """The shallow list lives in the common git dir: an audit from a linked worktree of a
    shallow clone sees it too."""
    repo = clone(remote, tmp_path / "ci", "--depth", "2", "--no-single-branch")
    assert leap("sync", "origin", cwd=repo).code == 0
    wt = tmp_path / "wt"
    git("worktree", "add", "-q", "--detach", str(wt), "main", cwd=repo)
    r = leap("audit", cwd=wt)
    assert r.code == 3, r
    assert "shallow" in r.err
    shutil.rmtree(wt)


def test_sync_in_a_partial_clone_fetches_the_ledger_whole_in_one_go(
        remote: Path, tmp_path: Path) -> None:
    repo = clone(remote, tmp_path / "ci", "--filter=blob:none", "--no-single-branch")
    assert missing(repo, "origin/leap/ledger") > 0  # the clone's ledger: commits, no records
    r = leap("sync", "origin", cwd=repo)
    assert r.code == 0, r
    assert missing(repo, "leap/ledger") == 0
    assert leap("status", cwd=repo).code == 0
    audited = leap("audit", cwd=repo)
    assert audited.code == 0, audited
    assert "20 commit(s)" in audited.out and "all holds" in audited.out


def test_a_ledger_a_partial_clone_took_by_hand_is_read_by_fetching_each_record(
        remote: Path, tmp_path: Path) -> None:
    """No `leap sync`: the ledger branch made from the clone's own copy, every record still
    with the remote. leapgit reads each through git, which fetches it."""
    repo = clone(remote, tmp_path / "ci", "--filter=blob:none", "--no-single-branch")
    git("branch", "leap/ledger", "origin/leap/ledger", cwd=repo)
    before = missing(repo, "leap/ledger")
    assert before > 0
    status = leap("status", cwd=repo)
    assert status.code == 0, status
    assert "calc-positions" in status.out
    assert 0 < missing(repo, "leap/ledger") < before  # the records status read came
    audited = leap("audit", cwd=repo)
    assert audited.code == 0, audited
    assert missing(repo, "leap/ledger") == 0
