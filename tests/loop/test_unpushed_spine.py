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
from leapgit.scoring import spine
from tests.loop.test_review_findings import duo, passed_not_merged
from tests.loop.world import jurors
from tests.scoring.world import ball_yaml
from tests.support import git
from tests.templates import Served
from tests.tribunal.jurors import JurorServer

KEEP = re.compile(r"`(git branch kept-[0-9a-f]{12} [0-9a-f]{40} && "
                  r"git reset --keep @\{upstream\})`")


def _note_on_main(work: Path) -> str:
    """A note committed to this clone's `main`, never pushed: its commit."""
    (work / "NOTES.md").write_text("a local note\n")
    git("add", "NOTES.md", cwd=work)
    git("commit", "-q", "-m", "a local note", cwd=work)
    return git("rev-parse", "HEAD", cwd=work)


def _keep_aside(work: Path, said: str, note: str) -> None:
    """Run the hint's commands exactly as printed, in the clone."""
    found = KEEP.search(said)
    assert found is not None, said[-3000:]
    assert note in found.group(1), (note, found.group(1))
    ran = subprocess.run(["sh", "-c", found.group(1)], cwd=work, capture_output=True,
                         text=True)
    assert ran.returncode == 0, ran
    assert git("show", f"kept-{note[:12]}:NOTES.md", cwd=work) == "a local note"
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

        stopped = p.leap("run", "up", "--heartbeat", "0")
        assert stopped.code == EXIT_RULE, stopped.out[-3000:]
        assert "its server refuses them on the spine" in stopped.out, stopped.out[-3000:]
        assert not server.chats(), "jurors were paid on a spine the remote refuses"
        assert not list((p.work / ".git" / "leap" / "logs").rglob("red-author.log")), \
            "the test author was paid on a spine the remote refuses"
        assert git("rev-parse", "--verify", "-q", "leap/ball/up/a", cwd=p.work,
                   check=False) == "", "a ball was thrown on a spine the remote refuses"

        _keep_aside(p.work, stopped.out, note)
        assert p.leap("slice", "check", str(draft)).code == 0  # the check's "again"
        ran = p.leap("run", "up", "--heartbeat", "0")  # "the leap command that stopped"
        assert ran.code == 0 and "landed" in ran.out, ran.out[-3000:]
        assert p.remote_tip("refs/heads/main") == p.tip("main")
        audit = p.leap("audit")
    assert audit.code == 0, audit.out[-3000:]


def test_a_merge_on_a_spine_holding_an_unpushed_commit_takes_no_lease_and_lands_after_the_hint(
        isolated: Path, served: Served) -> None:
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("unpushed-merge"), served.daemon, server.url, "um", ("a", "b"))
        passed_not_merged(p, "um")
        note = _note_on_main(p.work)

        # the spine push itself, as the merge makes it: this clone's pre-push refuses it,
        # and that is a refusal (nothing was sent), never a push that may have landed
        with pytest.raises(spine.PushRefused) as refused:
            spine.push(p.work, "origin", [f"{note}:refs/heads/main"])
        assert refused.value.exit_code == EXIT_RULE
        assert "nothing was sent" in refused.value.lines()[0], refused.value.lines()
        assert refused.value.problems[0].rule == "L8", refused.value.problems
        assert KEEP.search(refused.value.problems[0].hint or ""), refused.value.problems

        stopped = p.leap("merge", "um")
        assert stopped.code == EXIT_RULE, stopped
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


def test_a_remote_spine_that_moved_on_is_no_reason_and_the_unpushed_commit_still_is(
        tmp_path: Path) -> None:
    """The remote's spine moved on since this clone's note (fetched): the note is still
    what the server refuses, and the hint keeps it aside (not "fetch and merge onto its
    tip", which would add a merge no integration made)."""
    from tests.support import leap, make_repo

    bare = tmp_path / "origin.git"
    git("init", "-q", "--bare", "-b", "main", str(bare), cwd=tmp_path)
    assert leap("hooks", "install", "--server", cwd=bare).code == 0
    work = make_repo(tmp_path / "work", {"README.md": "# calc\n", "calc/__init__.py": ""})
    assert leap("init", cwd=work).code == 0
    git("remote", "add", "origin", str(bare), cwd=work)
    git("push", "-q", "-u", "origin", "main", "leap/ledger", cwd=work)
    moved = git("commit-tree", "main^{tree}", "-p", "main", "-m", "elsewhere", cwd=bare)
    git("update-ref", "refs/heads/main", moved, cwd=bare)  # as a landed merge would move it
    note = _note_on_main(work)
    git("fetch", "-q", "origin", cwd=work)
    draft = tmp_path / "next.yaml"
    draft.write_text("slice: next\nspine: integrator\nballs:\n"
                     + ball_yaml("x", ["calc/x.py", "tests/test_x.py"], "test_x")
                     + ball_yaml("y", ["calc/y.py", "tests/test_y.py"], "test_y"))
    checked = leap("slice", "check", str(draft), cwd=work)
    assert checked.code == EXIT_RULE, checked
    assert "[L8]" in checked.err and note[:12] in checked.err, checked.err
    assert "force-push" not in checked.err, checked.err
    _keep_aside(work, checked.err, note)
    assert git("rev-parse", "main", cwd=work) == moved
    assert leap("slice", "check", str(draft), cwd=work).code == 0
