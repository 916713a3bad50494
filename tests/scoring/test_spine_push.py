"""What a refused spine push says (a dead-end hunt: it quoted the last 300 characters of
git's advice, cut mid-word). A refusal with no server line says git's own status of the
ref, and what leads on."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import threading
from pathlib import Path

import pytest

from leapgit.scoring.spine import PushRefused, push
from leapgit.tribunal.demo import canned
from tests.scoring.test_merge_refusals import left_passed
from tests.scoring.world import Project
from tests.support import git, hinted_leap, make_repo
from tests.tribunal.jurors import Call, JurorServer, Reply

__all__ = ["left_passed"]  # the fixture, shared


def test_a_push_git_refuses_as_no_fast_forward_says_so_in_one_line(tmp_path: Path) -> None:
    work = make_repo(tmp_path / "work", {"f.txt": "one\n"})
    bare = tmp_path / "origin.git"
    git("clone", "-q", "--bare", str(work), str(bare), cwd=tmp_path)
    other = tmp_path / "other"
    git("clone", "-q", str(bare), str(other), cwd=tmp_path)
    (other / "f.txt").write_text("theirs\n")
    git("-c", "user.name=o", "-c", "user.email=o@x", "commit", "-qam", "theirs", cwd=other)
    git("push", "-q", "origin", "HEAD:main", cwd=other)
    git("remote", "add", "origin", str(bare), cwd=work)
    (work / "f.txt").write_text("ours\n")
    git("-c", "user.name=o", "-c", "user.email=o@x", "commit", "-qam", "ours", cwd=work)
    with pytest.raises(PushRefused) as refused:
        push(work, "origin", ["HEAD:refs/heads/main"], then="`leap merge s1` again")
    line = refused.value.lines()[0]
    assert "refused the spine push; nothing landed" in line, line
    assert "git said: [rejected] (fetch first)" in line or \
        "git said: [rejected] (non-fast-forward)" in line, line
    # the command as it runs: `leap merge` alone is a usage error (SLICE is required)
    assert "`leap merge s1` again builds on the spine the remote holds" in line, line
    assert "\\n" not in line and "hint:" not in line, line


def test_a_spine_parted_from_the_remotes_names_how_to_keep_it_and_follow_which_leads_on(
        left_passed: Project) -> None:
    p = left_passed
    there = git("commit-tree", f"{p.remote_tip('refs/heads/main')}^{{tree}}", "-p",
                "refs/heads/main", "-m", "an admin's commit on the server", cwd=p.bare)
    git("update-ref", "refs/heads/main", there, cwd=p.bare)
    git("-c", "user.name=o", "-c", "user.email=o@x", "commit", "-q", "--allow-empty",
        "--no-verify", "-m", "this clone's own", cwd=p.work)
    mine = p.tip("main")
    parted = p.leap("merge", "left")
    assert parted.code == 1 and "have parted: nothing landed [L9]" in parted.err, parted
    assert p.remote_tip("refs/heads/main") == there
    commands = re.findall(r"`(git -C [^`]+)`", parted.err)
    assert len(commands) == 2, parted.err
    for command in commands:  # the hint, exactly
        subprocess.run(shlex.split(command), check=True, capture_output=True)
    assert git("rev-parse", f"main-here-{mine[:8]}", cwd=p.work) == mine  # kept
    again = hinted_leap(parted.err)
    assert again == [["merge", "left"]], parted.err  # as printed, it runs
    landed = p.leap(*again[0])
    assert landed.code == 0, landed
    tip = p.remote_tip("refs/heads/main")
    assert tip != there and git("merge-base", "--is-ancestor", there, tip, cwd=p.bare) == ""


def test_the_servers_round_cap_is_read_from_the_remotes_spine_in_a_clone_without_one(
        tmp_path: Path) -> None:
    """A blind review: a fresh clone whose spine is not its default branch has no local
    spine: the check read the defaults and refused a right config."""
    from leapgit.errors import UsageError
    from leapgit.records.types import Config
    from leapgit.scoring.spine import require_round_cap_of_server

    work = make_repo(tmp_path / "work", {"f.txt": "one\n"})
    git("checkout", "-q", "-b", "integrator", cwd=work)
    (work / ".leap").mkdir()
    (work / ".leap" / "config.yaml").write_text(
        "version: 1\nspine: integrator\nledger_ref: refs/heads/leap/ledger\nround_limit: 3\n")
    git("add", ".leap/config.yaml", cwd=work)
    git("-c", "user.name=o", "-c", "user.email=o@x", "commit", "-qm", "config", cwd=work)
    git("checkout", "-q", "main", cwd=work)
    clone = tmp_path / "clone"
    git("clone", "-q", str(work), str(clone), cwd=tmp_path)
    assert git("branch", "--list", "integrator", cwd=clone) == ""
    require_round_cap_of_server(clone, "integrator", Config(spine="integrator", round_limit=3),
                                "origin")
    with pytest.raises(UsageError) as wrong:
        require_round_cap_of_server(clone, "integrator", Config(spine="integrator"), "origin")
    assert "which gives 3" in wrong.value.lines()[0]


def test_a_spine_config_that_does_not_parse_is_not_guessed_at(tmp_path: Path) -> None:
    """A boundary review: the check read the defaults for a spine config that does not
    parse, where the server judges by an older one, and advised a wrong round_limit."""
    from leapgit.records.types import Config
    from leapgit.scoring.spine import judged_by, require_round_cap_of_server

    work = make_repo(tmp_path / "work", {".leap/config.yaml": "version: [\n"})
    assert judged_by(work, "main") is None
    require_round_cap_of_server(work, "main", Config(round_limit=2))  # no guess, no refusal


def test_a_spine_here_that_is_behind_follows_the_remotes_and_says_so(
        left_passed: Project) -> None:
    """A reversibility review: the merge moved this clone's spine (and its checkout) to the
    remote's without a word, and it stayed moved when the merge then stopped."""
    p = left_passed
    there = git("commit-tree", f"{p.remote_tip('refs/heads/main')}^{{tree}}", "-p",
                "refs/heads/main", "-m", "an admin's commit on the server", cwd=p.bare)
    git("update-ref", "refs/heads/main", there, cwd=p.bare)
    mine = p.tip("main")
    landed = p.leap("merge", "left")
    assert landed.code == 0, landed
    assert f"the spine 'main' here followed origin's from {mine[:12]} to {there[:12]}" in \
        landed.out + landed.err, landed


def test_a_remote_spine_that_cannot_be_read_stops_the_merge_and_the_hint_leads_on(
        left_passed: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reversibility review: a failed fetch of the remote's spine was ignored, and the merge
    was built on the copy here: a paid review, then a push the remote may refuse."""
    from leapgit.ledger import leases
    from leapgit.ledger.workspace import open_workspace
    from leapgit.scoring.merge import merge
    from tests.support import leap

    p = left_passed
    real = leases.take_lease_on
    away = p.bare.with_name(p.bare.name + ".away")

    def taken_then_cut_off(*args: object, **kwargs: object) -> leases.Lease:
        lease = real(*args, **kwargs)  # type: ignore[arg-type]
        p.bare.rename(away)  # the remote goes out of reach before its spine is read
        return lease

    monkeypatch.setattr(leases, "take_lease_on", taken_then_cut_off)
    from leapgit.git import RemoteUnavailable

    with pytest.raises(RemoteUnavailable) as held:  # a hold (exit 3): `leap run` waits
        merge(open_workspace(p.work), "left", echo=lambda _line: None)
    monkeypatch.undo()
    away.rename(p.bare)
    line = held.value.lines()[0]
    assert "could not read the spine 'main' on origin" in line and "nothing landed" in line, \
        line
    assert "`leap merge left` again once origin answers" in line, line
    landed = leap("merge", "left", cwd=p.work, timeout=300)  # the hint, exactly
    assert landed.code == 0, landed


def test_a_lock_file_in_the_way_of_following_the_remotes_spine_is_named(
        left_passed: Project) -> None:
    """A blind review: a lock file a killed git left on the remote-tracking ref failed the
    fetch of the remote's spine, and the merge named `leap merge` again "once origin
    answers": origin had answered, and every try failed alike."""
    from tests.support import leap

    p = left_passed
    there = git("commit-tree", f"{p.remote_tip('refs/heads/main')}^{{tree}}", "-p",
                "refs/heads/main", "-m", "an admin's commit on the server", cwd=p.bare)
    git("update-ref", "refs/heads/main", there, cwd=p.bare)
    lock = p.work / ".git" / "refs" / "remotes" / "origin" / "main.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("")
    stopped = leap("merge", "left", cwd=p.work)
    assert stopped.code != 0, stopped
    assert f"a lock file is in the way here: {lock}" in stopped.err, stopped
    assert "once origin answers" not in stopped.err, stopped
    assert f"delete {lock}, then run the command again" in stopped.err, stopped
    lock.unlink()  # the hint, exactly
    landed = leap("merge", "left", cwd=p.work)
    assert landed.code == 0, landed


def test_untracked_files_the_merge_would_overwrite_stop_it_and_the_hint_leads_on(
        left_passed: Project) -> None:
    """A spine checkout holding an untracked file where the merge brings a ball's file:
    nothing lands, and the hint's command, run as printed once the file is moved away,
    lands the slice (it named `leap merge` without its slice: a usage error)."""
    p = left_passed
    before = p.remote_tip("refs/heads/main")
    (p.work / "calc" / "u.py").write_text("scratch of my own\n")
    stopped = p.leap("merge", "left")
    assert stopped.code == 2, stopped
    assert "untracked file(s) the merge would overwrite: calc/u.py; nothing landed" \
        in stopped.err, stopped.err
    assert p.remote_tip("refs/heads/main") == before
    (p.work / "calc" / "u.py").unlink()  # "move or delete them"
    again = hinted_leap(stopped.err)
    assert again == [["merge", "left"]], stopped.err
    landed = p.leap(*again[0])
    assert landed.code == 0, landed
    assert p.remote_tip("refs/heads/main") != before
    assert (p.work / "calc" / "u.py").is_file()  # the checkout followed


def test_a_spine_tracking_no_remote_s_name_names_the_one_remote_there_is(
        left_passed: Project) -> None:
    """The spine tracks `nosuch`, which is no remote: the merge stops before its lease with
    the `git config` that tracks the clone's one remote by name (it said NAME), and run as
    printed, the merge lands."""
    p = left_passed
    git("config", "branch.main.remote", "nosuch", cwd=p.work)
    stopped = p.leap("merge", "left")
    assert stopped.code == 2 and "'nosuch' is not a remote of this repository" in stopped.err, \
        stopped
    [track] = re.findall(r"`(git config [^`]*)`", stopped.err)
    assert track == "git config branch.main.remote origin", stopped.err
    subprocess.run(shlex.split(track), cwd=p.work, check=True)
    landed = p.leap("merge", "left")
    assert landed.code == 0, landed
    assert p.remote_tip("refs/heads/main") == p.tip("main")


def test_a_spine_that_moves_under_the_merge_lands_nothing_and_the_hints_lead_on(
        left_passed: Project) -> None:
    """Someone commits on the spine's checkout while the merge's aggregate review sits: the
    merge lands nothing ("moved under the merge", L9) and names `leap merge left` again,
    which refuses that commit (made outside an integration, L8) with the commands that keep
    it aside; run as printed, the slice lands and the commit is kept on its branch."""
    p = left_passed
    moved: list[str] = []
    lock = threading.Lock()

    def commits_once(call: Call) -> Reply:
        with lock:
            if not moved:
                (p.work / "NOTES.md").write_text("written during the review\n")
                git("add", "NOTES.md", cwd=p.work)
                git("commit", "-qm", "a note, mid-merge", cwd=p.work)
                moved.append(p.tip("main"))
        prompt = "\n".join(m.get("content", "") for m in call.body.get("messages", []))
        return Reply(json.dumps(canned(prompt)))

    before = p.remote_tip("refs/heads/main")
    with JurorServer("openai", commits_once) as server:
        config = p.work / ".leap" / "config.yaml"
        config.write_text(config.read_text().replace(p.juror_url, server.url))
        stopped = p.leap("merge", "left")
        assert stopped.code == 1 and "moved under the merge; nothing landed [L9]" in \
            stopped.err, stopped
        assert moved and p.remote_tip("refs/heads/main") == before
        [again] = hinted_leap(stopped.err)
        refused = p.leap(*again)
        assert refused.code == 1 and "[L8]" in refused.err, refused
        [keep] = re.findall(r"`(\(git [^`]*)`", refused.err)
        subprocess.run(keep, shell=True, cwd=p.work, check=True, capture_output=True)
        landed = p.leap(*hinted_leap(refused.err)[-1])
    assert landed.code == 0, landed
    assert p.remote_tip("refs/heads/main") != before
    [kept] = re.findall(r"git branch (kept-[0-9a-f]+) ", keep)  # the note, kept on it
    assert git("merge-base", "--is-ancestor", moved[0], kept, cwd=p.work) == ""
    assert subprocess.run(["git", "merge-base", "--is-ancestor", moved[0], "main"],
                          cwd=p.work).returncode == 1  # and off the spine that landed
