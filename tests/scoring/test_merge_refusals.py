"""The integrator's refusals: a second integrator (L9) and a merge conflict between balls
(nothing lands: the spine, local and remote, is untouched and no slice pass record exists)."""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from leapgit.ledger import layout
from leapgit.ledger.leases import release_lease, take_lease
from leapgit.ledger.store import Ledger
from leapgit.records import yamlio
from tests.scoring.test_refusals import ball, unit_test
from tests.scoring.world import Project, build_project
from tests.support import GitDaemon, git, hinted_leap
from tests.templates import Served


def draft(name: str, balls: list[tuple[str, str]]) -> str:
    return f"slice: {name}\nspine: integrator\nballs:\n" + "".join(
        ball(b, [path, f"tests/test_{b}.py"]) for b, path in balls)


DRAFT = draft("left", [("u", "calc/u.py"), ("v", "calc/v.py")]) + "\n---\n" + \
    draft("right", [("w", "calc/w.py"), ("z", "calc/z.py")])


def files(ball: str, path: str, value: int) -> dict[str, str]:
    module = path[:-3].replace("/", ".")
    return {path: f"def value():\n    return {value}\n",
            f"tests/test_{ball}.py": unit_test(ball, f"self.assertEqual(value(), {value})",
                                               f"from {module} import value")}


def red_test(ball: str) -> tuple[str, str]:
    path = f"tests/test_{ball}.py"
    return path, PLAN[ball][path]


PLAN = {"u": files("u", "calc/u.py", 1), "v": files("v", "calc/v.py", 2),
        "w": files("w", "calc/w.py", 3), "z": files("z", "calc/z.py", 4)}


def two_passed(base: Path, daemon: GitDaemon, url: str, slice_id: str = "left") -> Project:
    """A project whose slice ``slice_id`` has two balls, u and v, each red, built and
    passed by `leap score`: ready to merge."""
    plan = {"u": PLAN["u"], "v": PLAN["v"]}
    p = build_project(base, daemon, url, draft(slice_id, [("u", "calc/u.py"),
                                                          ("v", "calc/v.py")]), None, plan)
    for b in "uv":
        assert p.red(b, slice_id, red_test(b)).code == 0
    assert p.leap("throw", slice_id, "--run").code == 0
    for b in "uv":
        assert p.leap("score", slice_id, b).code == 0
    return p


def two_passed_copy(served: Served, url: str, slice_id: str = "left"
                    ) -> AbstractContextManager[Project]:
    """The run's ``two_passed`` project of ``slice_id``, a copy of its own for the block."""
    return served.world(f"two-passed-{slice_id}",
                        lambda folder: two_passed(folder, served.daemon, url, slice_id))


@pytest.fixture
def left_passed(served: Served, scripted_url: str) -> Iterator[Project]:
    with two_passed_copy(served, scripted_url) as p:
        yield p


@pytest.fixture(scope="module")
def scored(isolated: Path, served: Served, scripted_url: str) -> Project:
    p = build_project(served.folder("merges"), served.daemon, scripted_url, DRAFT, None, PLAN)
    for slice_id, balls in (("left", "uv"), ("right", "wz")):
        for b in balls:
            assert p.red(b, slice_id, red_test(b)).code == 0
        assert p.leap("throw", slice_id, "--run").code == 0
        for b in balls:
            res = p.leap("score", slice_id, b)
            assert res.code == 0, res
    return p


def test_a_second_integrator_is_refused(scored: Project) -> None:
    with Ledger(scored.work / ".git") as ledger:
        take_lease(ledger, "main", "alice")
    try:
        before = scored.tip("main")
        res = scored.leap("merge", "left")
        assert res.code == 3, res  # a hold: wait for the release
        assert "spine 'main' is leased to 'alice' (lease 1): one integrator at a time, " \
            "nothing landed [L9]; `leap merge left` again once it is given back" in res.err
        assert scored.tip("main") == before
    finally:
        with Ledger(scored.work / ".git") as ledger:
            release_lease(ledger, "main", "alice")


def test_an_untracked_file_blocking_the_checkout_lands_nothing(scored: Project) -> None:
    """Finding 1: the checkout must be able to fast-forward before anything is pushed."""
    blocker = scored.work / "calc" / "v.py"
    blocker.write_text("# mine, untracked\n")
    try:
        before, remote = scored.tip("main"), scored.remote_tip("refs/heads/main")
        res = scored.leap("merge", "left")
        assert res.code == 2, res
        assert "calc/v.py" in res.err and "nothing landed" in res.err
        assert scored.tip("main") == before
        assert scored.remote_tip("refs/heads/main") == remote
        names = git("ls-tree", "-r", "--name-only", "leap/ledger", "slices/left",
                    cwd=scored.work)
        assert layout.merge_path("left") not in names
        for where in (scored.work, scored.bare):
            leases = git("ls-tree", "-r", "--name-only", "leap/ledger", "spines/main/leases",
                         cwd=where).splitlines()
            assert sum(p.endswith("take.yaml") for p in leases) == \
                sum(p.endswith("release.yaml") for p in leases)
        assert blocker.read_text() == "# mine, untracked\n"
    finally:
        blocker.unlink()


def test_a_merge_conflict_between_balls_lands_nothing(scored: Project) -> None:
    """Two open slices can no longer claim one file (L4, at cut), so the conflict comes from
    the spine: a local commit there adds w's file after the slice was cut. The server would
    refuse that commit (no integration), and the merge says so before it builds anything
    (it said "conflicts on calc/w.py", the commit that caused it unnamed)."""
    left = scored.leap("merge", "left")
    assert left.code == 0, left
    merged, remote = scored.tip("main"), scored.remote_tip("refs/heads/main")
    assert remote == merged
    (scored.work / "calc" / "w.py").write_text("def value():\n    return 0\n")
    git("add", "calc/w.py", cwd=scored.work)
    git("commit", "-q", "--no-verify", "-m", "a hand-made calc/w.py on the spine",
        cwd=scored.work)
    tip = scored.tip("main")
    try:
        res = scored.leap("merge", "right")
        assert res.code == 1
        assert "main holds 1 commit(s) origin/main does not have, and the spine rule " \
            f"refuses 1 of them, as leapgit's pre-receive would: {tip[:12]}" in res.err, res
        assert scored.tip("main") == tip and scored.remote_tip("refs/heads/main") == remote
    finally:  # the hand-made commit goes, so the module's later tests see the spine merged
        git("reset", "-q", "--keep", merged, cwd=scored.work)
    assert git("status", "--porcelain", "--untracked-files=no", cwd=scored.work) == ""
    names = git("ls-tree", "-r", "--name-only", "leap/ledger", "slices/right",
                cwd=scored.work)
    assert layout.merge_path("right") not in names
    leases = git("ls-tree", "-r", "--name-only", "leap/ledger", "spines/main/leases",
                 cwd=scored.work).splitlines()
    assert sum(p.endswith("take.yaml") for p in leases) == \
        sum(p.endswith("release.yaml") for p in leases)  # the lease was given back
    assert git("for-each-ref", "refs/leap/merging", cwd=scored.work) == ""
    audit = scored.leap("audit")
    assert audit.code == 0, audit


def test_audit_flags_a_merged_slice_no_longer_on_the_spine(scored: Project) -> None:
    """Finding 5: a rewound spine does not still say merged / all holds. A spine only this
    clone moved back, while the remote's copy it fetched still holds the merges, is behind,
    not rewritten: a hold that brings it forward. Rewound wherever this clone looks, it is
    named."""
    assert scored.leap("audit").code == 0
    merged = scored.tip("main")
    first = git("rev-parse", "main^1", cwd=scored.work)
    while git("log", "-1", "--format=%(trailers:key=Leap-Slice,valueonly)", first,
              cwd=scored.work).strip() == "left":
        first = git("rev-parse", f"{first}^1", cwd=scored.work)
    copies = [r for r in git("for-each-ref", "--format=%(refname)", "refs/remotes/",
                             "refs/leap/remotes/", cwd=scored.work).split()
              if r.endswith("/main") and git("rev-parse", r, cwd=scored.work) == merged]
    assert copies  # the remote's copy this clone fetched
    git("update-ref", "refs/heads/main", first, merged, cwd=scored.work)
    try:
        behind = scored.leap("audit")
        assert behind.code == 3, behind
        assert "refs/heads/main is behind" in behind.err, behind.err
        for ref in copies:
            git("update-ref", ref, first, merged, cwd=scored.work)
        audit = scored.leap("audit")
        assert audit.code != 0, audit
        assert "not on the spine" in audit.out + audit.err
    finally:
        for ref in ["refs/heads/main", *copies]:
            git("update-ref", ref, merged, cwd=scored.work)


def _landed_unrecorded(p: Project, monkeypatch: pytest.MonkeyPatch,
                      holder: str = "integrator") -> str:
    """`leap merge left` by ``holder``, stopped (Ctrl-C) after its push landed and before
    its record was written; the spine tip it landed."""
    from leapgit.ledger.workspace import open_workspace
    from leapgit.scoring import merge as merging

    real = merging.write_merge

    def broken(*args: object, **kwargs: object) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(merging, "write_merge", broken)
    with pytest.raises(KeyboardInterrupt):
        merging.merge(open_workspace(p.work), "left", holder=holder, echo=lambda _: None)
    monkeypatch.setattr(merging, "write_merge", real)
    return p.tip("main")


def test_a_merge_stopped_after_the_push_gives_the_lease_back_and_resumes(
        left_passed: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """Finding 2: an error while recording a landed merge leaves no open lease (here or on
    the remote), and `leap merge` again writes the record of what landed."""
    p = left_passed
    landed = _landed_unrecorded(p, monkeypatch)
    assert p.remote_tip("refs/heads/main") == landed
    for where in (p.work, p.bare):
        leases = git("ls-tree", "-r", "--name-only", "leap/ledger", "spines/main/leases",
                     cwd=where).splitlines()
        assert sum(x.endswith("take.yaml") for x in leases) == \
            sum(x.endswith("release.yaml") for x in leases)
    again = p.leap("merge", "left")
    assert again.code == 0, again
    assert p.tip("main") == landed and p.remote_tip("refs/heads/main") == landed
    record = git("show", f"leap/ledger:{layout.merge_path('left')}", cwd=p.work)
    assert landed in record
    assert p.leap("audit").code == 0


def test_a_landed_merge_of_another_holder_names_the_merge_that_records_it(
        left_passed: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every hint leads on (blind review): the refusal named `leap merge S` "as" the holder,
    which no command line can say; it names `--holder`, and that merge records it."""
    p = left_passed
    landed = _landed_unrecorded(p, monkeypatch, "alice")
    other = p.leap("merge", "left")
    assert other.code == 2 and "`leap merge left --holder alice` records it" in other.err, \
        other
    assert not p.leap("log").out.count(layout.merge_path("left"))
    again = p.leap("merge", "left", "--holder", "alice")  # the hint, exactly
    assert again.code == 0, again
    record = git("show", f"leap/ledger:{layout.merge_path('left')}", cwd=p.work)
    assert landed in record


def test_a_spine_tracking_a_url_is_named_before_the_merge_takes_its_lease(
        left_passed: Project) -> None:
    """`git push -u URL main` leaves a URL as the spine's remote: the merge says so, naming
    the git setting, before it takes a lease or convenes its review (blind review: it said
    so only after both, naming an option `leap merge` does not have); the hint leads on."""
    p = left_passed
    url = git("remote", "get-url", "origin", cwd=p.work)
    git("config", "branch.main.remote", url, cwd=p.work)
    before = p.tip("leap/ledger")
    refused = p.leap("merge", "left")
    assert refused.code == 2, refused
    assert f"branch.main.remote: {url!r} is not a remote of this repository" in refused.err, \
        refused
    assert p.tip("leap/ledger") == before  # no lease, no review, nothing recorded
    hint = f"`git remote add NAME {url}`, then `git config branch.main.remote NAME`"
    assert hint in refused.err, refused
    git("remote", "add", "shared", url, cwd=p.work)  # the hint, NAME chosen
    git("config", "branch.main.remote", "shared", cwd=p.work)
    merged = p.leap("merge", "left")
    assert merged.code == 0, merged
    assert p.remote_tip("refs/heads/main") == p.tip("main") != p.base


def test_a_merge_with_no_declared_builder_leads_on_with_the_flag_it_names(
        left_passed: Project) -> None:
    """Every hint leads on (T4): with builder.identity gone from the config, `leap merge`
    names `--builder model=ID,family=F,session=S`; given so, the merge lands."""
    from tests.scoring.world import BUILDER_ID

    p = left_passed
    cfg_path = p.work / ".leap" / "config.yaml"
    cfg = yamlio.loads(cfg_path.read_bytes(), str(cfg_path))
    del cfg["builder"]["identity"]
    cfg_path.write_bytes(yamlio.dumps(cfg))
    refused = p.leap("merge", "left")
    assert refused.code == 2 and "builder.identity: the builder is not declared [T4]" in \
        refused.err, refused
    assert "pass --builder model=ID,family=F,session=S or set builder.identity" in \
        refused.err, refused
    merged = p.leap("merge", "left", "--builder", BUILDER_ID)  # the hint
    assert merged.code == 0, merged
    assert p.remote_tip("refs/heads/main") == p.tip("main") != p.base


def test_plan_rechecks_each_branch_holds_its_passed_candidate(
        scored: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """Finding 6: a branch that moved after its pass (and was not reopened) lands nothing."""
    from leapgit.errors import Hold
    from leapgit.ledger.workspace import open_workspace
    from leapgit.scoring import merge as merging
    from leapgit.scoring import reopen
    from tests.scoring.world import commit_files

    branch = "refs/heads/leap/ball/right/z"
    passed = scored.tip(branch)
    moved = commit_files(scored.work, passed, {"calc/z.py": "Z = 5\n"}, "after the pass")
    git("update-ref", branch, moved, passed, cwd=scored.work)
    monkeypatch.setattr(reopen, "scan", lambda *a, **k: [])
    try:
        ws = open_workspace(scored.work)
        with ws.ledger() as ledger, pytest.raises(merging.Incomplete) as held:
            merging.plan(ws, ledger, "right")
        said = held.value.hold(ws, ask=True)
        assert isinstance(said, Hold), said
        assert "z (branch moved off its passed candidate)" in str(said.lines()[0])
    finally:
        git("update-ref", branch, passed, moved, cwd=scored.work)


def test_audit_compares_each_merge_tree_with_its_candidate(scored: Project) -> None:
    """Finding 6: a merge whose bytes differ from the passed candidate is a violation. Since
    leapgit reads no replace objects (issue 18 F3), different bytes mean another commit:
    the audit names the forged merge as one no slice pass record names."""
    merged = git("rev-parse", "main", cwd=scored.work)
    first = merged
    while git("log", "-1", "--format=%(trailers:key=Leap-Ball,valueonly)", first,
              cwd=scored.work).strip() != "u":
        first = git("rev-parse", f"{first}^1", cwd=scored.work)
    parents = git("log", "-1", "--format=%P", first, cwd=scored.work).split()
    message = git("log", "-1", "--format=%B", first, cwd=scored.work)
    from tests.scoring.world import commit_files

    forged_commit = commit_files(scored.work, first, {"calc/u.py": "def value():\n"
                                                      "    return 99\n"}, "x")
    forged_tree = git("rev-parse", f"{forged_commit}^{{tree}}", cwd=scored.work)
    forged = git("commit-tree", forged_tree, "-p", parents[0], "-p", parents[1], "-m",
                 message, cwd=scored.work)
    # the spine rewritten locally with the forged merge in first's place (a replace ref
    # would do, but leapgit reads no replace objects since issue 18 F3)
    tip = forged
    for c in git("rev-list", "--first-parent", "--reverse", f"{first}..{merged}",
                 cwd=scored.work).split():
        others = git("log", "-1", "--format=%P", c, cwd=scored.work).split()[1:]
        args = [a for p in others for a in ("-p", p)]
        tip = git("commit-tree", f"{c}^{{tree}}", "-p", tip, *args, "-m",
                  git("log", "-1", "--format=%B", c, cwd=scored.work), cwd=scored.work)
    git("update-ref", "refs/heads/main", tip, merged, cwd=scored.work)
    try:
        audit = scored.leap("audit")
        assert audit.code != 0, audit
        assert f"an integration merge of left/u that no slice pass record names " \
            f"({forged[:12]})" in audit.out, audit.out
    finally:
        git("update-ref", "refs/heads/main", merged, tip, cwd=scored.work)


def test_a_merge_stopped_between_the_push_and_the_local_move_resumes(
        left_passed: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """Finding 2: pushed, then stopped before the local spine moved: `leap merge` again
    moves it to what landed, records the merge and gives the lease back."""
    from leapgit.ledger.workspace import open_workspace
    from leapgit.scoring import merge as merging

    p = left_passed
    before = p.tip("main")

    def stopped(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(merging, "_move", stopped)
    with pytest.raises(KeyboardInterrupt):
        merging.merge(open_workspace(p.work), "left", echo=lambda _: None)
    monkeypatch.undo()
    landed = p.remote_tip("refs/heads/main")
    assert landed != before and p.tip("main") == before
    again = p.leap("merge", "left")
    assert again.code == 0, again
    assert p.tip("main") == landed and p.remote_tip("refs/heads/main") == landed
    leases = git("ls-tree", "-r", "--name-only", "leap/ledger", "spines/main/leases",
                 cwd=p.work).splitlines()
    assert sum(x.endswith("take.yaml") for x in leases) == \
        sum(x.endswith("release.yaml") for x in leases)
    assert landed in git("show", f"leap/ledger:{layout.merge_path('left')}", cwd=p.work)
    assert p.leap("audit").code == 0


def test_a_passed_ball_whose_branch_is_gone_lands_from_the_commit_its_pass_names(
        left_passed: Project) -> None:
    """A dead-end hunt: with a passed ball's worktree and branch removed by hand, `leap merge`
    held with "first `leap score left u`", which said "throw it first", which refuses a
    passed ball. The branch only points at the commit the pass names (L7.1): the merge
    lands that commit, as the server judges it, and no command is needed in between."""
    p = left_passed
    branch = "leap/ball/left/u"
    passed = p.tip(branch)
    git("worktree", "remove", "--force", str(p.worktree("u", "left")), cwd=p.work)
    git("branch", "-D", branch, cwd=p.work)
    before = p.remote_tip("refs/heads/main")
    res = p.leap("merge", "left")
    assert res.code == 0, res
    tip = p.remote_tip("refs/heads/main")
    assert tip != before
    assert git("merge-base", "--is-ancestor", passed, tip, cwd=p.bare) == ""
    assert p.leap("audit").code == 0


def test_scoring_a_thrown_ball_whose_branch_is_gone_names_where_its_last_round_left_it(
        left_passed: Project) -> None:
    """The same hunt: `leap score` of a thrown ball whose branch was deleted said "throw it
    first", and `leap throw` refuses a ball in flight or passed (here: passed). The branch
    goes back where the ball's last recorded round left it, as printed; scored then, it
    stands as before. A fresh episode's case: test_refused_rewind."""
    p = left_passed
    branch = "leap/ball/left/u"
    was = p.tip(branch)
    git("worktree", "remove", "--force", str(p.worktree("u", "left")), cwd=p.work)
    git("branch", "-D", branch, cwd=p.work)
    stopped = p.leap("score", "left", "u")
    assert stopped.code == 2 and "throw it first" not in stopped.err, stopped
    [put_back] = re.findall(r"`(git [^`]*)`", stopped.err)
    assert put_back == f"git branch {branch} {was}", stopped.err
    git(*shlex.split(put_back)[1:], cwd=p.work)
    assert hinted_leap(stopped.err) == [["score", "left", "u"]], stopped.err
    scored = p.leap(*hinted_leap(stopped.err)[0])
    assert scored.code == 0, scored  # its pass stands: nothing new to grade
    assert p.leap("merge", "left").code == 0


@pytest.mark.parametrize("copy", ["on-the-remote", "nowhere"])
def test_a_passed_ball_whose_commit_is_gone_from_the_clone_names_the_way_back(
        left_passed: Project, copy: str) -> None:
    """A blind review: with the passed commit gone too (branch deleted, then pruned), the
    merge named a fetch from origin whether or not origin held the ball's branch (here it
    never does, unless pushed): followed, the fetch failed and the merge named it again.
    With the branch on the remote, the fetch and the merge, as printed, land the slice;
    with no copy anywhere the hint says the work is lost here, and its abandon (then a new
    cut), run as printed, is taken."""
    p = left_passed
    branch = "leap/ball/left/u"
    passed = p.tip(branch)
    if copy == "on-the-remote":  # the ledger first: the server judges a ball branch by it
        assert p.leap("sync", "origin").code == 0
        git("push", "-q", "--no-verify", "origin", branch, cwd=p.work)
    for held in git("for-each-ref", "--format=%(refname)", "--contains", passed,
                    cwd=p.work).splitlines():  # remote-tracking copies: gone as well
        if held.startswith(("refs/remotes/", "refs/leap/remotes/")):
            git("update-ref", "-d", held, cwd=p.work)
    git("worktree", "remove", "--force", str(p.worktree("u", "left")), cwd=p.work)
    git("branch", "-D", branch, cwd=p.work)
    git("reflog", "expire", "--expire=now", "--all", cwd=p.work)
    git("gc", "-q", "--prune=now", cwd=p.work)
    assert subprocess.run(["git", "cat-file", "-e", passed], cwd=p.work).returncode != 0
    trace = p.base_dir / f"trace-{copy}.log"  # every git command the merge ran
    held = p.leap("merge", "left", env={"GIT_TRACE": str(trace)})
    assert held.code == 3, held
    asked = [line for line in trace.read_text().splitlines()
             if "git ls-remote" in line and branch in line]
    assert len(asked) == 1, asked  # once, by the plan whose hold is said (it asked twice)
    if copy == "on-the-remote":
        [fetch] = re.findall(r"`(git fetch [^`]*)`", held.err)
        git(*shlex.split(fetch)[1:], cwd=p.work)
        [merge] = hinted_leap(held.err)
        assert p.leap(*merge).code == 0
        assert git("merge-base", "--is-ancestor", passed, "main", cwd=p.bare) == ""
        return
    assert "the spine's remote origin has no copy" in held.err, held.err
    assert "git fetch" not in held.err and "first no" not in held.err, held.err
    [merge, abandon, cut] = hinted_leap(held.err)  # restored, the merge; or given up
    assert (merge, abandon[:4], cut) == (["merge", "left"],
                                         ["slice", "abandon", "left", "--reason"],
                                         ["slice", "cut", "FILE"]), held.err
    gave_up = p.leap(*abandon[:4], "u's passed work is gone")
    assert gave_up.code == 0, gave_up
    assert "ABANDONED" in p.leap("status", "left").out


def test_scoring_a_passed_ball_whose_branch_and_commits_are_gone_puts_nothing_back(
        left_passed: Project) -> None:
    """A blind review: with the commits gone too, `leap score` named a `git branch` at the
    spine's tip as "the last commit the ledger recorded"; followed, the score recorded a
    reopen of the valid pass. It names no such branch now, and writes nothing."""
    p = left_passed
    branch = "leap/ball/left/u"
    passed = p.tip(branch)
    git("worktree", "remove", "--force", str(p.worktree("u", "left")), cwd=p.work)
    git("branch", "-D", branch, cwd=p.work)
    git("reflog", "expire", "--expire=now", "--all", cwd=p.work)
    git("gc", "-q", "--prune=now", cwd=p.work)
    assert subprocess.run(["git", "cat-file", "-e", passed], cwd=p.work).returncode != 0
    ledger = p.tip("leap/ledger")
    stopped = p.leap("score", "left", "u")
    assert stopped.code == 2 and "are not in this clone" in stopped.err, stopped
    assert "git branch" not in stopped.err, stopped.err
    assert p.tip("leap/ledger") == ledger
