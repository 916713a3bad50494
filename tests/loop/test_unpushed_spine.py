"""A commit made on the spine outside an integration and never pushed (L8): a real project's
clone, a note committed to `main` before `leap run`. Before, every ball was red-tested,
built and scored on it, and only the merge's push was refused, by the clone's own
`pre-push`, which the merge read as a push that "may have landed" and sent the user to
`leap merge` again, which met the same refusal. Now the cut, the red, the throw and the
merge judge the spine's tip first, by the server's own rule, and name the commands that
keep the commit aside; followed as printed, the slice lands. Real git behind `git daemon`,
the server's `pre-receive`, scripted author, builder and jurors."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from leapgit.errors import EXIT_RULE
from leapgit.ledger import leases
from leapgit.ledger.store import Ledger
from leapgit.records.schema import validate
from leapgit.scoring import spine
from tests.loop.test_review_findings import duo, passed_not_merged
from tests.loop.world import events, jurors
from tests.scoring.world import ball_yaml
from tests.support import git
from tests.templates import Served
from tests.tribunal.jurors import JurorServer

KEEP = re.compile(r"`(\((?:git|git -C \S+) branch kept-[0-9a-f]{12} [0-9a-f]{40} [^`]+)`")


def _note_on_main(work: Path) -> str:
    """A note committed to this clone's `main`, never pushed: its commit."""
    (work / "NOTES.md").write_text("a local note\n")
    git("add", "NOTES.md", cwd=work)
    git("commit", "-q", "-m", "a local note", cwd=work)
    return git("rev-parse", "HEAD", cwd=work)


def _topic(work: Path) -> str:
    """A branch `topic` made from origin/main (so it tracks it), checked out, with a commit
    of its own: that commit."""
    git("checkout", "-q", "-b", "topic", "--track", "origin/main", cwd=work)
    (work / "TOPIC.md").write_text("topic work\n")
    git("add", "TOPIC.md", cwd=work)
    git("commit", "-q", "-m", "topic work", cwd=work)
    return git("rev-parse", "HEAD", cwd=work)


def _keep_aside(work: Path, said: str, note: str) -> None:
    """Run the hint's commands exactly as printed, in the clone: the note is kept on the
    branch they name, and the spine is the remote's again."""
    found = KEEP.search(said)
    assert found is not None, said[-3000:]
    ran = subprocess.run(["sh", "-c", found.group(1)], cwd=work, capture_output=True,
                         text=True)
    assert ran.returncode == 0, ran
    kept = re.search(r"kept-[0-9a-f]{12}", found.group(1))
    assert kept is not None
    git("merge-base", "--is-ancestor", note, kept.group(), cwd=work)  # fails when it is not
    assert git("show", f"{kept.group()}:NOTES.md", cwd=work) == "a local note"
    assert git("rev-parse", "main", cwd=work) == git("rev-parse", "origin/main", cwd=work)


def test_a_run_on_a_spine_holding_an_unpushed_commit_stops_before_any_work_and_lands_after_the_hint(
        isolated: Path, served: Served) -> None:
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("unpushed-run"), served.daemon, server.url, "up", ("a", "b"))
        note = _note_on_main(p.work)
        draft = p.base_dir / "next.yaml"
        draft.write_text("slice: next\nspine: integrator\nballs:\n"
                         + ball_yaml("x", ["calc/x.py", "tests/test_x.py"], "test_x")
                         + ball_yaml("y", ["calc/y.py", "tests/test_y.py"], "test_y"))
        checked = p.leap("slice", "check", str(draft))
        assert checked.code == EXIT_RULE, checked
        assert "[L8]" in checked.err and note[:12] in checked.err, checked.err
        assert f"then `leap slice check {draft}` again" in checked.err, checked.err

        stopped = p.leap("run", "up", "--heartbeat", "0", "--json")
        assert stopped.code == EXIT_RULE, stopped.out[-3000:]
        assert "the spine rule refuses 1 of them" in stopped.err, stopped.err
        assert "then `leap run up` again" in stopped.err, stopped.err
        # an agent reading --json learns it too, with the hint's commands (stop 37 left the
        # L8 preflight untested there)
        said = events(stopped.out)
        assert [e["event"] for e in said] == ["stop", "end"], stopped.out
        assert said[0]["rule"] == "L8" and "the spine rule refuses" in str(said[0]["reason"])
        assert "then `leap run up` again" in str(said[0]["hint"]), said[0]
        assert said[0]["exit_code"] == said[1]["exit_code"] == EXIT_RULE, said
        for event in said:
            validate(event, "run-event", "leap run --json")
        assert not server.chats(), "jurors were paid on a spine the remote refuses"
        assert not list((p.work / ".git" / "leap" / "logs").rglob("red-author.log")), \
            "the test author was paid on a spine the remote refuses"
        assert git("rev-parse", "--verify", "-q", "leap/ball/up/a", cwd=p.work,
                   check=False) == "", "a ball was thrown on a spine the remote refuses"

        thrown = p.leap("throw", "up", "--run")
        assert thrown.code == EXIT_RULE, thrown
        assert "then `leap throw up --run` again" in thrown.err, thrown.err  # as typed

        _keep_aside(p.work, str(said[0]["hint"]), note)  # as the agent read them
        assert p.leap("slice", "check", str(draft)).code == 0  # the check's "again"
        # the throw's "again" goes past the spine, to the next thing a throw asks (a red,
        # which `leap run` has its author write)
        again = p.leap("throw", "up", "--run")
        assert "[L8]" not in again.err and "[T7.1]" in again.err, again
        ran = p.leap("run", "up", "--heartbeat", "0")  # the hint's "again"
        assert ran.code == 0 and "landed" in ran.out, ran.out[-3000:]
        assert p.remote_tip("refs/heads/main") == p.tip("main")
        audit = p.leap("audit")
    assert audit.code == 0, audit.out[-3000:]


def test_a_merge_refused_by_this_clones_pre_push_is_a_refusal_that_leads_on(
        isolated: Path, served: Served) -> None:
    """`leap merge` keeps its own checks of the clone's spine (reopens, a parted spine); a
    commit they let through went to the push, which this clone's `pre-push` refused: the
    merge read that as a push that "may have landed" and sent the user to `leap merge`
    again, into the same refusal. It is a refusal now (nothing was sent), the lease is
    given back, and the hint keeps the commit aside before the merge again."""
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("unpushed-merge"), served.daemon, server.url, "um", ("a", "b"))
        passed_not_merged(p, "um")
        note = _note_on_main(p.work)

        # the spine push itself, as the merge makes it
        with pytest.raises(spine.PushRefused) as refused:
            spine.push(p.work, "origin", [f"{note}:refs/heads/main"], "`leap merge um` again")
        assert refused.value.exit_code == EXIT_RULE
        assert "nothing was sent" in refused.value.lines()[0], refused.value.lines()
        assert refused.value.problems[0].rule == "L8", refused.value.problems
        assert KEEP.search(refused.value.problems[0].hint or ""), refused.value.problems

        stopped = p.leap("merge", "um")
        assert stopped.code == EXIT_RULE, stopped
        assert "nothing was sent" in stopped.err and "may have landed" not in stopped.err, \
            stopped.err
        assert "[L8]" in stopped.err and "then `leap merge um` again" in stopped.err, \
            stopped.err
        with Ledger(p.work / ".git") as ledger:
            assert leases.active_lease(ledger.require(), "main") is None

        _keep_aside(p.work, stopped.err, note)
        merged = p.leap("merge", "um")  # the hint's "again"
        assert merged.code == 0, merged
        assert p.remote_tip("refs/heads/main") == p.tip("main")
        audit = p.leap("audit")
    assert audit.code == 0, audit.out[-3000:]


@pytest.fixture
def light(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A clone whose `main` tracks a remote with leapgit's server hook, level with it: the
    bare remote, the clone and a slice draft."""
    from tests.support import leap, make_repo

    bare = tmp_path / "origin.git"
    git("init", "-q", "--bare", "-b", "main", str(bare), cwd=tmp_path)
    assert leap("hooks", "install", "--server", cwd=bare).code == 0
    work = make_repo(tmp_path / "work", {"README.md": "# calc\n", "calc/__init__.py": ""})
    assert leap("init", cwd=work).code == 0
    git("remote", "add", "origin", str(bare), cwd=work)
    git("push", "-q", "-u", "origin", "main", "leap/ledger", cwd=work)
    draft = tmp_path / "next.yaml"
    draft.write_text("slice: next\nspine: integrator\nballs:\n"
                     + ball_yaml("x", ["calc/x.py", "tests/test_x.py"], "test_x")
                     + ball_yaml("y", ["calc/y.py", "tests/test_y.py"], "test_y"))
    return bare, work, draft


def _moved_on(bare: Path) -> str:
    """The remote's spine moves on, as a landed merge would move it (behind the hooks)."""
    moved = git("commit-tree", "main^{tree}", "-p", "main", "-m", "elsewhere", cwd=bare)
    git("update-ref", "refs/heads/main", moved, cwd=bare)
    return moved


def _check(work: Path, draft: Path, *more: str) -> tuple[int, str]:
    from tests.support import leap

    res = leap("slice", "check", str(draft), *more, cwd=work)
    return res.code, res.err


def test_a_remote_spine_that_moved_on_is_no_reason_and_the_unpushed_commit_still_is(
        light: tuple[Path, Path, Path]) -> None:
    """The remote's spine moved on since this clone's note (fetched): the note is still
    what the server refuses, and the hint keeps it aside (not "fetch and merge onto its
    tip", which would add a merge no integration made). The "again" keeps `--base`."""
    bare, work, draft = light
    moved = _moved_on(bare)
    note = _note_on_main(work)
    git("fetch", "-q", "origin", cwd=work)
    code, err = _check(work, draft, "--base", "main")
    assert code == EXIT_RULE, err
    assert "[L8]" in err and note[:12] in err, err
    assert "force-push" not in err, err
    assert f"then `leap slice check {draft} --base main` again" in err, err
    _keep_aside(work, err, note)
    assert git("rev-parse", "main", cwd=work) == moved
    assert _check(work, draft, "--base", "main")[0] == 0


def test_a_pulled_merge_over_the_note_is_kept_whole(light: tuple[Path, Path, Path]) -> None:
    """Blind review: `git pull` (a merge) after the remote moved on left the note under a
    merge whose first-parent line does not lead back to the remote's spine; the hint kept
    an old commit and the reset took the note off every branch. The tip is kept."""
    bare, work, draft = light
    _moved_on(bare)
    note = _note_on_main(work)
    git("pull", "-q", "--no-rebase", "--no-edit", "origin", "main", cwd=work)
    tip = git("rev-parse", "main", cwd=work)
    code, err = _check(work, draft)
    assert code == EXIT_RULE and "[L8]" in err, err
    _keep_aside(work, err, note)
    assert git("rev-parse", f"kept-{tip[:12]}", cwd=work) == tip
    assert _check(work, draft)[0] == 0


def test_a_local_merge_of_a_topic_branch_gets_the_keep_aside_commands(
        light: tuple[Path, Path, Path]) -> None:
    """Blind review: a `git merge --no-ff topic` on the spine was refused as a merge naming
    no ball, with the integrator's hint, which cannot take a commit off the spine: every
    command stopped on it again. Any refused commit of the clone's spine is kept aside."""
    _bare, work, draft = light
    git("checkout", "-q", "-b", "topic", cwd=work)
    note = _note_on_main(work)  # on topic
    git("checkout", "-q", "main", cwd=work)
    git("merge", "-q", "--no-ff", "--no-edit", "topic", cwd=work)
    code, err = _check(work, draft)
    assert code == EXIT_RULE and "[L8]" in err, err
    assert "names no ball" in err or "integration merge" in err, err
    _keep_aside(work, err, note)
    assert _check(work, draft)[0] == 0


def test_the_hint_runs_again_after_a_dirty_tree_stopped_it(
        light: tuple[Path, Path, Path]) -> None:
    """Blind review: with the note's file edited and not committed, `git reset --keep`
    refuses; the branch was made already, and the same line then failed at its first
    command for ever. It is safe to run again once the edit is stashed."""
    _bare, work, draft = light
    note = _note_on_main(work)
    (work / "NOTES.md").write_text("a local note\nand an edit\n")
    code, err = _check(work, draft)
    assert code == EXIT_RULE, err
    found = KEEP.search(err)
    assert found is not None and "git stash" in err, err
    first = subprocess.run(["sh", "-c", found.group(1)], cwd=work, capture_output=True)
    assert first.returncode != 0  # git refuses to reset over the edit
    git("stash", "-q", cwd=work)
    _keep_aside(work, err, note)
    assert _check(work, draft)[0] == 0


def test_the_spine_not_checked_out_is_moved_and_the_checked_out_branch_is_not(
        light: tuple[Path, Path, Path]) -> None:
    """Blind review: on a branch `topic` that tracks origin/main, `git reset --keep
    @{upstream}` moved `topic` and left `main` as it was."""
    _bare, work, draft = light
    note = _note_on_main(work)
    topic = _topic(work)
    code, err = _check(work, draft)
    assert code == EXIT_RULE, err
    _keep_aside(work, err, note)
    assert git("rev-parse", "topic", cwd=work) == topic
    assert _check(work, draft)[0] == 0


def test_the_spine_is_judged_against_the_remote_spine_not_another_upstream(
        light: tuple[Path, Path, Path]) -> None:
    """Blind review: `main` level with origin/main but tracking origin/develop had its
    landed commits refused as commits outside an integration."""
    _bare, work, draft = light
    git("push", "-q", "origin", "main~0:refs/heads/develop", cwd=work)
    git("checkout", "-q", "--orphan", "develop-base", cwd=work)
    git("commit", "-q", "--allow-empty", "-m", "develop's own root", cwd=work)
    git("push", "-q", "-f", "origin", "develop-base:refs/heads/develop", cwd=work)
    git("checkout", "-q", "main", cwd=work)
    git("fetch", "-q", "origin", cwd=work)
    git("branch", "-q", "-u", "origin/develop", "main", cwd=work)
    git("config", "branch.main.remote", "origin", cwd=work)
    assert _check(work, draft)[0] == 0


SHARE = re.compile(r"`(git config branch\.main\.remote origin && "
                   r"git config branch\.main\.merge refs/heads/main)`")


def _untrack(work: Path) -> None:
    """`git push origin main` without `-u`: the spine tracks no remote, the ledger is
    shared with origin all the same."""
    git("config", "--unset", "branch.main.remote", cwd=work)
    git("config", "--unset", "branch.main.merge", cwd=work)


def test_a_run_whose_spine_tracks_no_remote_of_a_shared_ledger_stops_first_and_lands_after(
        isolated: Path, served: Served) -> None:
    """Driven as a user would: the run merged in this clone only and said "landed"; the
    shared remote's spine never moved, and pushing it was refused for want of an open
    lease (L9), which no command takes again. Now the run stops before any work, names the
    config that makes the spine track the ledger's remote, and lands after it."""
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("untracked-run"), served.daemon, server.url, "ut", ("a", "b"))
        _untrack(p.work)
        stopped = p.leap("run", "ut", "--heartbeat", "0", "--json")
        assert stopped.code == 2, stopped
        assert "[L9]" in stopped.err and "tracks no remote" in stopped.err, stopped.err
        assert "then `leap run ut` again" in stopped.err, stopped.err
        # an agent reading --json learns it too (it got no line at all: stderr only)
        said = events(stopped.out)
        assert [e["event"] for e in said] == ["stop", "end"], stopped.out
        assert said[0]["rule"] == "L9" and "tracks no remote" in str(said[0]["reason"])
        assert "git config branch.main.remote" in str(said[0]["hint"]), said[0]
        assert said[0]["exit_code"] == said[1]["exit_code"] == 2, said
        for event in said:
            validate(event, "run-event", "leap run --json")
        assert not server.chats(), "jurors were paid for a merge that would land nowhere"
        found = SHARE.search(stopped.err)
        assert found is not None, stopped.err
        subprocess.run(["sh", "-c", found.group(1)], cwd=p.work, check=True)
        ran = p.leap("run", "ut", "--heartbeat", "0")  # the hint's "again"
        assert ran.code == 0 and "landed" in ran.out, ran.out[-3000:]
        assert p.remote_tip("refs/heads/main") == p.tip("main") != p.base
        audit = p.leap("audit")
    assert audit.code == 0, audit.out[-3000:]


def test_a_merge_whose_spine_tracks_no_remote_of_a_shared_ledger_takes_no_lease(
        isolated: Path, served: Served) -> None:
    """The hint names the remote the spine lives on, not a mirror of the ledger alone
    (blind review: `backup` came first, and the merge it led to "landed" there); a slice
    merged already is said to be, as before."""
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("untracked-merge"), served.daemon, server.url, "um", ("a", "b"))
        passed_not_merged(p, "um")
        backup = p.base_dir / "backup.git"
        git("init", "-q", "--bare", str(backup), cwd=p.base_dir)
        url = git("remote", "get-url", "origin", cwd=p.work)
        # origin listed after backup; removing it untracks main too (as `_untrack`)
        git("remote", "remove", "origin", cwd=p.work)
        git("remote", "add", "backup", str(backup), cwd=p.work)
        git("remote", "add", "origin", url, cwd=p.work)
        git("fetch", "-q", "origin", cwd=p.work)
        git("push", "-q", "backup", "leap/ledger", cwd=p.work)
        assert git("remote", cwd=p.work).split() == ["backup", "origin"]
        assert git("config", "--get", "branch.main.remote", cwd=p.work, check=False) == ""
        ledger_before = p.tip("leap/ledger")
        stopped = p.leap("merge", "um")
        assert stopped.code == 2 and "[L9]" in stopped.err, stopped
        assert "then `leap merge um` again" in stopped.err, stopped.err
        assert p.tip("leap/ledger") == ledger_before  # no lease taken, nothing written
        found = SHARE.search(stopped.err)
        assert found is not None, stopped.err
        subprocess.run(["sh", "-c", found.group(1)], cwd=p.work, check=True)
        merged = p.leap("merge", "um")
        assert merged.code == 0, merged
        assert p.remote_tip("refs/heads/main") == p.tip("main") != p.base
        _untrack(p.work)
        again = p.leap("merge", "um")
        assert again.code == 0 and "already merged" in again.out, again


def test_leapgits_config_committed_to_the_spine_comes_back_untracked(
        light: tuple[Path, Path, Path]) -> None:
    """Blind review: `.leap/config.yaml` committed to the spine and never pushed (the
    server refuses such a commit) was taken out of the work tree by the keep-aside reset,
    and every leap command after it ran on the defaults. The commands put it back,
    untracked, as it was before its commit."""
    _bare, work, draft = light
    config = (work / ".leap" / "config.yaml").read_bytes()
    git("add", "-f", ".leap/config.yaml", cwd=work)
    git("commit", "-q", "-m", "leap: the config", cwd=work)
    tip = git("rev-parse", "main", cwd=work)
    code, err = _check(work, draft)
    assert code == EXIT_RULE and "[L8]" in err, err
    found = KEEP.search(err)
    assert found is not None and "checkout kept-" in found.group(1), err
    # run from a subfolder (a review: the paths were read from where the user stood)
    subprocess.run(["sh", "-c", found.group(1)], cwd=work / "calc", check=True,
                   capture_output=True)
    assert (work / ".leap" / "config.yaml").read_bytes() == config
    assert git("ls-files", ".leap/config.yaml", cwd=work) == ""  # untracked again
    # run again, from shell history say, after an edit: the edit stays (a review)
    edited = config + b"# my edit\n"
    (work / ".leap" / "config.yaml").write_bytes(edited)
    subprocess.run(["sh", "-c", found.group(1)], cwd=work, check=True, capture_output=True)
    assert (work / ".leap" / "config.yaml").read_bytes() == edited
    assert git("rev-parse", f"kept-{tip[:12]}", cwd=work) == tip
    assert git("status", "--porcelain", "--untracked-files=no", cwd=work) == ""
    assert _check(work, draft)[0] == 0


def test_a_kept_branch_built_on_is_never_moved_back(light: tuple[Path, Path, Path]) -> None:
    """Blind review: `git branch -f kept-X X` in the commands, run again once the user had
    built on `kept-X` (the kept change lands later), moved it back to X: the commits on it
    were left in the reflog only. The branch is made, or found holding X, never moved."""
    _bare, work, draft = light
    note = _note_on_main(work)
    code, err = _check(work, draft)
    assert code == EXIT_RULE, err
    found = KEEP.search(err)
    assert found is not None, err
    subprocess.run(["sh", "-c", found.group(1)], cwd=work, check=True, capture_output=True)
    kept = f"kept-{note[:12]}"
    git("checkout", "-q", kept, cwd=work)
    (work / "MORE.md").write_text("built on the kept change\n")
    git("add", "MORE.md", cwd=work)
    git("commit", "-q", "-m", "more on the kept change", cwd=work)
    more = git("rev-parse", "HEAD", cwd=work)
    git("checkout", "-q", "main", cwd=work)
    again = subprocess.run(["sh", "-c", found.group(1)], cwd=work, capture_output=True)
    assert again.returncode == 0, again
    assert git("rev-parse", kept, cwd=work) == more


def test_a_remote_named_with_a_slash_is_judged_too(light: tuple[Path, Path, Path]) -> None:
    """Blind review: a remote named `team/origin` (git allows it) was read as a path, and
    the spine was not judged at all; the merge's push was refused at the end."""
    _bare, work, draft = light
    git("remote", "rename", "origin", "team/origin", cwd=work)
    assert git("config", "branch.main.remote", cwd=work) == "team/origin"
    note = _note_on_main(work)
    code, err = _check(work, draft)
    assert code == EXIT_RULE and note[:12] in err and "team/origin/main" in err, err


def test_the_servers_keep_aside_hint_moves_the_spine_not_the_branch_checked_out(
        light: tuple[Path, Path, Path]) -> None:
    """Stop 36's reversibility review: the keep-aside commands `pre-push` and `pre-receive`
    print reset whatever branch is checked out. Pushed from another branch (`git push
    origin main` while on `topic`, made from `origin/main`), they moved `topic` back to its
    upstream, its work left in the reflog. They switch
    to the spine first: `topic` stays, the note is kept, the spine is the remote's."""
    bare, work, _draft = light
    before = git("rev-parse", "main", cwd=work)
    note = _note_on_main(work)
    topic = _topic(work)
    pushed = subprocess.run(["git", "push", "--no-verify", "origin", "main"], cwd=work,
                            capture_output=True, text=True)  # the server's pre-receive says
    assert pushed.returncode != 0 and "leap pre-receive:   [L8]" in pushed.stderr, \
        pushed.stderr
    found = KEEP.search(pushed.stderr)
    assert found is not None, pushed.stderr
    ran = subprocess.run(["sh", "-c", found.group(1)], cwd=work, capture_output=True,
                         text=True)
    assert ran.returncode == 0, ran
    assert git("rev-parse", "topic", cwd=work) == topic  # untouched
    assert git("rev-parse", "main", cwd=work) == before == git("rev-parse", "main", cwd=bare)
    assert git("rev-parse", f"kept-{note[:12]}", cwd=work) == note


def test_the_keep_aside_hint_leaves_a_spine_alone_that_holds_what_it_does_not_keep(
        light: tuple[Path, Path, Path]) -> None:
    """Blind review: pushed from another branch (`git push origin topic:main`), the commands
    kept topic's commit and reset `main`, whose own unpushed commits were then on no
    branch. The spine is moved only when the kept branch holds all of it."""
    bare, work, _draft = light
    mine = _note_on_main(work)  # main's own, unpushed
    topic = _topic(work)
    pushed = subprocess.run(["git", "push", "origin", "topic:main"], cwd=work,
                            capture_output=True, text=True)
    assert pushed.returncode != 0 and "[L8]" in pushed.stderr, pushed.stderr
    found = KEEP.search(pushed.stderr)
    assert found is not None, pushed.stderr
    ran = subprocess.run(["sh", "-c", found.group(1)], cwd=work, capture_output=True)
    # the guard stops the commands once the branch is kept (the hint says a spine that
    # holds commits the kept branch does not is left as it is)
    assert ran.returncode == 1 and "is left as it is" in pushed.stderr, ran
    assert git("rev-parse", "main", cwd=work) == mine  # untouched: nothing of it lost
    assert git("rev-parse", f"kept-{topic[:12]}", cwd=work) == topic
    assert git("rev-parse", "topic", cwd=work) == topic


def test_two_refused_commits_are_kept_by_the_first_commands_printed(
        light: tuple[Path, Path, Path]) -> None:
    """Blind review: each refused commit had commands keeping only itself; followed for the
    first one listed (the oldest), the reset left the newer one on no branch."""
    bare, work, _draft = light
    before = git("rev-parse", "main", cwd=work)
    older = _note_on_main(work)
    (work / "MORE.md").write_text("more\n")
    git("add", "MORE.md", cwd=work)
    git("commit", "-q", "-m", "more", cwd=work)
    newer = git("rev-parse", "HEAD", cwd=work)
    pushed = subprocess.run(["git", "push", "origin", "main"], cwd=work, capture_output=True,
                            text=True)
    assert pushed.returncode != 0 and "2 violation" in pushed.stderr, pushed.stderr
    found = KEEP.search(pushed.stderr)  # the first printed
    assert found is not None, pushed.stderr
    ran = subprocess.run(["sh", "-c", found.group(1)], cwd=work, capture_output=True,
                         text=True)
    assert ran.returncode == 0, ran
    kept = f"kept-{newer[:12]}"
    assert git("rev-parse", kept, cwd=work) == newer
    git("merge-base", "--is-ancestor", older, kept, cwd=work)  # fails when it is not
    assert git("rev-parse", "main", cwd=work) == before == git("rev-parse", "main", cwd=bare)


def test_the_keep_aside_reset_goes_below_a_refused_merge_too(
        light: tuple[Path, Path, Path]) -> None:
    """Blind review: under the note, a local `git merge --no-ff side` (refused: it names no
    ball); the reset went to the note's parent, the refused merge, and the next push was
    refused again with no commands to take it off. It goes below the first refused commit
    of any kind."""
    bare, work, _draft = light
    before = git("rev-parse", "main", cwd=work)
    git("checkout", "-q", "-b", "side", cwd=work)
    (work / "SIDE.md").write_text("side\n")
    git("add", "SIDE.md", cwd=work)
    git("commit", "-q", "-m", "side", cwd=work)
    git("checkout", "-q", "main", cwd=work)
    git("merge", "-q", "--no-ff", "-m", "merge side", "side", cwd=work)
    note = _note_on_main(work)
    pushed = subprocess.run(["git", "push", "origin", "main"], cwd=work, capture_output=True,
                            text=True)
    assert pushed.returncode != 0, pushed.stderr
    found = KEEP.search(pushed.stderr)
    assert found is not None, pushed.stderr
    ran = subprocess.run(["sh", "-c", found.group(1)], cwd=work, capture_output=True,
                         text=True)
    assert ran.returncode == 0, ran
    assert git("rev-parse", "main", cwd=work) == before == git("rev-parse", "main", cwd=bare)
    assert git("rev-parse", f"kept-{note[:12]}", cwd=work) == note
