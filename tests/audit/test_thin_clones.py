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

import json
import re
import shlex
import shutil
import subprocess
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
    shown = json.loads(leap("status", "--json", cwd=repo).out)["signatures"]
    assert shown["shallow"] is True and shown["fetch_rest"] == hinted(line)
    run_hint(hinted(line), repo)
    again = leap("status", cwd=repo)
    assert again.code == 0, again
    line = next(x for x in again.out.splitlines() if x.startswith("signatures:"))
    assert "20 ledger commits" in line and "shallow" not in line, line

    as_json = leap("status", "--json", cwd=repo)
    assert as_json.code == 0
    signatures = json.loads(as_json.out)["signatures"]
    assert signatures["shallow"] is False and signatures["fetch_rest"] is None


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


def test_the_unshallow_names_the_remote_the_ledger_came_from(remote: Path, tmp_path: Path,
                                                            ) -> None:
    """A fork setup: the clone comes from ``upstream``; ``origin`` is a fork holding `main`
    only. Fetching from ``origin`` would leave the ledger cut (a hint that led back to
    itself): the hint names ``upstream``, where `leap sync` took the ledger."""
    fork = tmp_path / "fork.git"
    git("clone", "-q", "--bare", "--single-branch", "-b", "main", str(remote), str(fork),
        cwd=tmp_path)
    repo = clone(remote, tmp_path / "ci", "-o", "upstream", "--depth", "3",
                 "--no-single-branch")
    git("remote", "add", "origin", f"file://{fork}", cwd=repo)
    assert leap("sync", "upstream", cwd=repo).code == 0

    status = leap("status", cwd=repo)
    line = next(x for x in status.out.splitlines() if x.startswith("signatures:"))
    assert hinted(line) == "git fetch --unshallow upstream", line
    r = leap("audit", cwd=repo)
    assert r.code == 3, r
    assert hinted(r.err) == "git fetch --unshallow upstream", r.err
    run_hint(hinted(r.err), repo)
    again = leap("audit", cwd=repo)
    assert again.code == 0, again


def test_a_depth_that_reached_the_roots_cuts_nothing(remote: Path, tmp_path: Path) -> None:
    """git lists a root commit at the boundary of a clone as deep as the history: nothing is
    missing, so the audit judges and status counts it all."""
    repo = clone(remote, tmp_path / "ci", "--depth", "20", "--no-single-branch")  # the ledger's
    assert leap("sync", "origin", cwd=repo).code == 0
    assert (repo / ".git" / "shallow").read_text().split()  # git lists the roots
    r = leap("audit", cwd=repo)
    assert r.code == 0, r
    assert "20 commit(s)" in r.out
    status = leap("status", cwd=repo)
    line = next(x for x in status.out.splitlines() if x.startswith("signatures:"))
    assert "shallow" not in line and "20 of 20 ledger commits" in line, line


def cut_another_slice(remote: Path, tmp_path: Path) -> Path:
    """A copy of ``remote`` (the module's stays as the quickstart left it) whose ledger has
    moved on: another slice cut in another clone and synced there. The copy."""
    moved = Path(shutil.copytree(remote, tmp_path / "moved.git"))
    writer = clone(moved, tmp_path / "writer")
    assert leap("sync", "origin", cwd=writer).code == 0
    (tmp_path / "draft.yaml").write_text(
        "slice: more-docs\nspine: integrator\nballs:\n" + "".join(
            f"  - id: {ball}\n    goal: g\n    spec: s\n    scope: [{ball.upper()}.md]\n"
            "    proof: \"true\"\n    tests: \"true\"\n    rollback: restore-scope\n"
            for ball in ("notes", "faq")))
    cut = leap("slice", "cut", str(tmp_path / "draft.yaml"), cwd=writer)
    assert cut.code == 0, cut
    assert leap("sync", "origin", cwd=writer).code == 0
    return moved


def partial_by_hand(remote: Path, into: Path) -> Path:
    """A partial clone whose ledger branch was made from the clone's own copy (no `leap
    sync`): every record still with the remote."""
    repo = clone(remote, into, "--filter=blob:none", "--no-single-branch")
    git("branch", "leap/ledger", "origin/leap/ledger", cwd=repo)
    assert missing(repo, "leap/ledger") > 0
    return repo


def test_a_promisor_remote_out_of_reach_is_a_hold_and_the_rerun_reads_on(
        remote: Path, tmp_path: Path) -> None:
    repo = partial_by_hand(remote, tmp_path / "ci")
    git("remote", "set-url", "origin", f"file://{tmp_path}/gone.git", cwd=repo)
    for command in (["status"], ["audit"]):
        r = leap(*command, cwd=repo)
        assert r.code == 3, r
        assert "internal error" not in r.err
        assert "is not in this partial clone" in r.err and "run the command again" in r.err
    git("remote", "set-url", "origin", f"file://{remote}", cwd=repo)
    assert leap("status", cwd=repo).code == 0
    assert leap("audit", cwd=repo).code == 0


def test_records_fetched_one_by_one_survive_git_repacking_between_them(
        remote: Path, tmp_path: Path) -> None:
    """Each record git fetches leaves a pack; git repacks past its limit (50 by default, 2
    here) and would delete packs dulwich has open (before: PackFileDisappeared)."""
    repo = partial_by_hand(remote, tmp_path / "ci")
    git("config", "gc.autoPackLimit", "2", cwd=repo)
    git("config", "gc.autoDetach", "false", cwd=repo)  # it repacks before the read goes on
    housekeeping = {"GIT_CONFIG_COUNT": "0"}  # as on a user's machine (the suite turns it off)
    r = leap("status", cwd=repo, env=housekeeping)
    assert r.code == 0, r
    assert "calc-positions" in r.out
    assert leap("audit", cwd=repo, env=housekeeping).code == 0
    assert missing(repo, "leap/ledger") == 0


def test_the_audit_of_a_partial_clone_changes_nothing_it_judges(remote: Path,
                                                                 tmp_path: Path) -> None:
    """The audit reads (README: read-only). git fetches what it reads from the promisor,
    and would tidy up after (`gc --auto`: pack the refs, expire the reflogs the audit's
    ledger-history-kept check reads); the audit's git runs without that housekeeping."""
    repo = partial_by_hand(remote, tmp_path / "ci")
    git("config", "gc.autoPackLimit", "2", cwd=repo)
    git("config", "gc.autoDetach", "false", cwd=repo)
    reflog = repo / ".git" / "logs" / "refs" / "heads" / "leap" / "ledger"
    before = reflog.read_bytes()
    r = leap("audit", cwd=repo, env={"GIT_CONFIG_COUNT": "0"})  # a user's housekeeping on
    assert r.code == 0, r
    assert reflog.read_bytes() == before
    assert (repo / ".git" / "refs" / "heads" / "leap" / "ledger").is_file()  # not packed


def test_a_partial_clone_that_git_marked_with_the_old_extension_is_read_too(
        remote: Path, tmp_path: Path) -> None:
    """``extensions.partialClone``: what git wrote for a partial clone before promisor
    remotes, which dulwich's Repo refuses to open (before: exit 2)."""
    repo = partial_by_hand(remote, tmp_path / "ci")
    git("config", "extensions.partialClone", "origin", cwd=repo)
    git("config", "--unset", "remote.origin.promisor", cwd=repo)
    r = leap("status", cwd=repo)
    assert r.code == 0, r
    assert "calc-positions" in r.out


def test_a_push_from_a_partial_clone_is_judged_by_the_rules_not_an_internal_error(
        remote: Path, tmp_path: Path) -> None:
    """The pre-push hook reads the ledger the same way (before: it opened the repository
    without reading through git, and failed closed on the first record)."""
    repo = partial_by_hand(remote, tmp_path / "ci")
    assert leap("hooks", "install", cwd=repo).code == 0
    git("checkout", "-q", "-b", "topic", cwd=repo)
    (repo / "x.txt").write_text("x\n")
    git("add", "x.txt", cwd=repo)
    git("commit", "-q", "-m", "a change outside any integration", cwd=repo)
    pushed = subprocess.run(["git", "push", "origin", "HEAD:main"], cwd=repo,
                            capture_output=True, text=True)
    assert pushed.returncode != 0
    assert "internal error" not in pushed.stderr, pushed.stderr
    assert "[L8]" in pushed.stderr, pushed.stderr


def test_a_later_sync_in_a_partial_clone_takes_new_records_along_without_fetching_all_again(
        remote: Path, tmp_path: Path) -> None:
    repo = clone(remote, tmp_path / "ci", "--filter=blob:none", "--no-single-branch")
    assert leap("sync", "origin", cwd=repo).code == 0
    git("remote", "set-url", "origin", f"file://{cut_another_slice(remote, tmp_path)}",
        cwd=repo)

    trace = tmp_path / "trace"
    r = leap("sync", "origin", cwd=repo, env={"GIT_TRACE": str(trace)})
    assert r.code == 0, r
    assert missing(repo, "leap/ledger") == 0
    assert "more-docs" in leap("status", cwd=repo).out
    assert "--refetch" not in trace.read_text()  # the new records came with their commits


def test_a_ball_s_commits_are_walked_past_no_graft(tmp_path: Path) -> None:
    """The walk that reads a ball's commits treats a shallow clone's cut as git does, and
    nothing else: a graft (``info/grafts``) hides no commit from the rules (a blind review:
    the repository's parents provider applied grafts too)."""
    from leapgit.ledger.repo import open_repo
    from leapgit.rules.objects import Objects
    from tests.support import make_repo

    repo = make_repo(tmp_path / "r", {"a.txt": "0\n"})
    base = git("rev-parse", "HEAD", cwd=repo)
    for n in range(1, 6):
        (repo / "a.txt").write_text(f"{n}\n")
        git("commit", "-q", "-am", f"c{n}", cwd=repo)
    head = git("rev-parse", "HEAD", cwd=repo)
    middle = git("rev-parse", "HEAD~2", cwd=repo)
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "grafts").write_text(f"{head} {base}\n")  # hides c1..c4
    with open_repo(str(repo / ".git")) as opened:
        objects = Objects(opened)
        walked = objects.new_commits(head, [base])
        assert objects.is_ancestor(middle, head)  # the same for ancestry
    assert len(walked) == 5


def test_a_graft_that_rewires_the_spine_changes_nothing_the_audit_judges(
        remote: Path, tmp_path: Path) -> None:
    """``info/grafts`` (git's old local hack) gives a commit other parents for every git
    command; leapgit's git reads the commits as they are, as dulwich does (a blind review:
    the audit named a sound merge as not merging its candidate)."""
    repo = clone(remote, tmp_path / "ci")
    assert leap("sync", "origin", cwd=repo).code == 0
    tip, older = git("rev-parse", "main", cwd=repo), git("rev-parse", "main~3", cwd=repo)
    (repo / ".git" / "info" / "grafts").write_text(f"{tip} {older}\n")
    assert git("rev-parse", "main^2", cwd=repo, check=False) != git("rev-parse", "main^2",
                                                                     cwd=remote)
    r = leap("audit", cwd=repo)
    assert r.code == 0, r
    assert "all holds" in r.out


@pytest.mark.parametrize("how", ["ledger fetched shallow", "synced twice"])
def test_sync_over_a_shallow_ledger_replays_down_to_the_cut(remote: Path, tmp_path: Path,
                                                           how: str) -> None:
    """GitHub Actions' checkout (`--depth 1 --no-tags`, one branch) and a ledger fetched
    at depth 1 beside it; or a `--depth 1` clone synced, then synced again after the remote
    moved (a blind review: the replay walked past the cut, an internal error)."""
    if how == "ledger fetched shallow":
        repo = clone(remote, tmp_path / "ci", "--depth", "1", "--no-tags", "--single-branch",
                     "--branch", "main")
        git("fetch", "-q", "--depth", "1", "origin", "leap/ledger:leap/ledger", cwd=repo)
    else:
        repo = clone(remote, tmp_path / "ci", "--depth", "1", "--no-single-branch")
        assert leap("sync", "origin", cwd=repo).code == 0
    git("remote", "set-url", "origin", f"file://{cut_another_slice(remote, tmp_path)}",
        cwd=repo)
    r = leap("sync", "origin", cwd=repo)
    assert r.code == 0, r
    assert "more-docs" in leap("status", cwd=repo).out


def test_a_promisor_remote_that_answers_without_the_object_is_a_hold(
        remote: Path, tmp_path: Path) -> None:
    """The promisor answers, but not with the object (another repository now, or one that
    wants credentials): git's words, exit 3 (before: an internal error, KeyError)."""
    repo = partial_by_hand(remote, tmp_path / "ci")
    other = tmp_path / "other.git"
    git("init", "-q", "--bare", str(other), cwd=tmp_path)
    git("config", "uploadpack.allowFilter", "true", cwd=other)
    git("config", "uploadpack.allowAnySHA1InWant", "true", cwd=other)
    git("remote", "set-url", "origin", f"file://{other}", cwd=repo)
    r = leap("status", cwd=repo)
    assert r.code == 3, r
    assert "is not in this partial clone" in r.err and "internal error" not in r.err


def test_a_detached_ci_checkout_is_led_to_the_spine_then_to_its_history(
        remote: Path, tmp_path: Path) -> None:
    """GitLab CI's checkout (and GitHub's of a pull request): `git fetch --depth 1` of the
    spine into a remote-tracking ref, HEAD detached, no `main` branch. The audit has no
    spine to judge the ledger's merges on (before: four violations, "rewound or
    rewritten"); each hint, run as written, leads to the next, then it judges."""
    repo = tmp_path / "ci"
    git("init", "-q", str(repo), cwd=tmp_path)
    git("remote", "add", "origin", f"file://{remote}", cwd=repo)
    git("fetch", "-q", "--depth", "1", "origin", "+refs/heads/main:refs/remotes/origin/main",
        cwd=repo)
    git("checkout", "-q", "-f", git("rev-parse", "origin/main", cwd=repo), cwd=repo)
    assert leap("sync", "origin", cwd=repo).code == 0
    for command in (["audit-signatures"], ["audit"]):
        r = leap(*command, cwd=repo)
        assert r.code == 3, r
        assert "refs/heads/main is not a branch of this clone" in r.err, r.err
        assert hinted(r.err) == "git fetch origin main:main"
    run_hint("git fetch origin main:main", repo)
    r = leap("audit", cwd=repo)
    assert r.code == 3 and "shallow" in r.err, r  # the spine is here now, cut short
    run_hint(hinted(r.err), repo)
    again = leap("audit", cwd=repo)
    assert again.code == 0, again
    assert "all holds" in again.out


def test_a_spine_behind_the_remote_s_is_brought_up_not_called_rewritten(
        remote: Path, tmp_path: Path) -> None:
    """A clone whose `main` is behind origin's (fetched, not merged), its ledger synced:
    the ledger's last merge is not on this `main` yet. That is no rewrite (before: a
    violation, exit 1); the hint moves `main` forward, fast-forward only."""
    repo = clone(remote, tmp_path / "ci")
    git("reset", "-q", "--hard", "HEAD~1", cwd=repo)
    assert leap("sync", "origin", cwd=repo).code == 0
    r = leap("audit", cwd=repo)
    assert r.code == 3, r
    assert "refs/heads/main is behind origin's" in r.err, r.err
    assert hinted(r.err) == "git merge --ff-only origin/main"
    run_hint(hinted(r.err), repo)
    again = leap("audit", cwd=repo)
    assert again.code == 0, again


def test_a_remote_branch_whose_name_ends_like_the_spine_is_no_copy_of_it(
        remote: Path, tmp_path: Path) -> None:
    """`origin/wip/main` is origin's branch `wip/main`, not a copy of `main` from a remote
    called `origin/wip` (a blind review: the audit held, and its hint put an unlanded
    commit on `main`)."""
    repo = clone(remote, tmp_path / "ci")
    assert leap("sync", "origin", cwd=repo).code == 0
    git("commit", "-q", "--allow-empty", "-m", "work in progress", cwd=repo)
    wip = git("rev-parse", "HEAD", cwd=repo)
    git("reset", "-q", "--hard", "HEAD~1", cwd=repo)
    git("update-ref", "refs/remotes/origin/wip/main", wip, cwd=repo)
    r = leap("audit", cwd=repo)
    assert r.code == 0, r


def test_a_spine_checked_out_in_another_worktree_is_brought_up_there(
        remote: Path, tmp_path: Path) -> None:
    """git fetches into no branch a worktree has checked out: the hint merges there."""
    repo = clone(remote, tmp_path / "ci")
    git("reset", "-q", "--hard", "HEAD~1", cwd=repo)
    assert leap("sync", "origin", cwd=repo).code == 0
    other = tmp_path / "other-wt"
    git("worktree", "add", "-q", "-b", "scratch", str(other), cwd=repo)
    r = leap("audit", cwd=other)
    assert r.code == 3, r
    assert hinted(r.err) == f"git -C {repo} merge --ff-only origin/main", r.err
    run_hint(hinted(r.err), other)
    assert leap("audit", cwd=other).code == 0


def test_a_spine_behind_leapgit_s_own_copy_is_brought_up_from_that_copy(
        remote: Path, tmp_path: Path) -> None:
    """leapgit keeps copies of its own under `refs/leap/remotes/`; where that copy is ahead
    and git's is not, the hint brings `main` up from it (a blind review: it named git's
    copy, and the hint led back to itself)."""
    repo = clone(remote, tmp_path / "ci")
    assert leap("sync", "origin", cwd=repo).code == 0
    tip = git("rev-parse", "main", cwd=repo)
    git("update-ref", "refs/leap/remotes/origin/heads/main", tip, cwd=repo)
    git("reset", "-q", "--hard", "HEAD~1", cwd=repo)
    git("update-ref", "refs/remotes/origin/main", "HEAD", cwd=repo)
    r = leap("audit", cwd=repo)
    assert r.code == 3, r
    assert hinted(r.err) == "git merge --ff-only refs/leap/remotes/origin/heads/main", r.err
    run_hint(hinted(r.err), repo)
    assert leap("audit", cwd=repo).code == 0
