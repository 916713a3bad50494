"""A restack (L5, L8): a dependent ball stands on its dependency's passed candidate; the
dependency is reopened and passes again with other bytes. Before, the dependent stayed held
for good: `leap merge` and `leap throw` sent the user to the dependency's score, which
answered "already passed", and a respec refused a passed ball. Now the dependent is thrown
again on a fresh stack of the passes that stand: its red goes first, its frozen tests
carried onto the fresh stack base byte for byte (`leap red --carry`), then a fresh episode
(`leap throw`), whose pass supersedes the old one. The server asks the same rules
(``rules.stack``): a carry that changes a frozen test, or a new episode after a pass whose
stack stands, is refused. Real repositories, the real hook behind `git daemon`, the scripted
juror of ``test_stacked``."""

from __future__ import annotations

import json
from pathlib import Path

from leapgit.ledger import layout
from leapgit.ledger.store import Ledger
from leapgit.records import yamlio
from leapgit.records.scoring import RedRecord
from tests.hooks.world import run_git
from tests.scoring.conftest import isolated  # noqa: E402
from tests.scoring.world import Project
from tests.support import git
from tests.templates import Served
from tests.worktrees.test_stacked import SLICE, fmt_world, juror_url, ok, ops_world, record

__all__ = ["fmt_world", "isolated", "juror_url", "ops_world"]  # the fixtures, shared

MORE = "# ops, one more byte\n"


def ops_passes_again_with_other_bytes(p: Project) -> str:
    """ops's branch gets a commit after its pass (reopened, L8), and passes again: fmt's
    stack no longer stands. The new ops.py text."""
    wt = p.worktree("ops")
    target = wt / "calc" / "ops.py"
    target.write_text(target.read_text() + MORE)
    git("commit", "-qam", "ops: one more byte\n\nLeap-Round: 2\nLeap-Outcome: 1", cwd=wt)
    assert "score 2 of calc/ops: 1 (pass)" in ok(p, "score", SLICE, "ops")
    return target.read_text()


def standing(p: Project, ball: str) -> dict[str, object]:
    status = json.loads(ok(p, "status", SLICE, "--json"))
    found: dict[str, object] = next(b for w in status["slices"][0]["waves"] for b in w
                                    if b["ball"] == ball)
    return found


def test_a_dependent_ball_is_restacked_on_its_dependencys_new_pass_and_lands(
        fmt_world: Project) -> None:
    p = fmt_world
    new_ops = ops_passes_again_with_other_bytes(p)
    assert "ops passed again: fmt is thrown again on its new candidate (a restack)" in \
        ok(p, "status", SLICE)
    held = p.leap("merge", SLICE)
    assert held.code == 3 and "nothing lands" in held.err, held
    hint = (f"`leap red {SLICE} fmt --carry`, then `leap throw {SLICE} --ball fmt --run` and "
            f"`leap score {SLICE} fmt`")
    assert hint in held.err, held.err
    # `leap ball base` and a `leap red` without a commit name the carry, not a new red
    assert f"`leap red {SLICE} fmt --carry` carries its red there" in \
        ok(p, "ball", "base", SLICE, "fmt")
    bare = p.leap("red", SLICE, "fmt")
    assert bare.code == 2 and f"`leap red {SLICE} fmt --carry`" in bare.err, bare
    # the throw alone says the red goes first, and names the command
    early = p.leap("throw", SLICE, "--ball", "fmt")
    assert early.code == 3 and f"`leap red {SLICE} fmt --carry` carries it there" in early.err
    # the hint, exactly
    carried = p.leap("red", SLICE, "fmt", "--carry")
    assert carried.code == 0 and "carries red 1 onto the fresh stack base" in carried.out, \
        carried
    red2 = RedRecord.from_dict(record(p, layout.red_path(SLICE, "fmt", 2)))
    red1 = RedRecord.from_dict(record(p, layout.red_path(SLICE, "fmt", 1)))
    assert red2.carries == 1 and red2.tests == red1.tests and red2.base != red1.base
    # its commit, made by leapgit, has a ref of its own until a throw builds on it (a
    # reversibility review: `git gc` could take an unreferenced commit the ledger names)
    assert git("rev-parse", f"refs/leap/carried/{SLICE}/fmt/2", cwd=p.work) == red2.commit
    assert git("show", f"{red2.base}:calc/ops.py", cwd=p.work) == new_ops.rstrip("\n")
    again = p.leap("red", SLICE, "fmt", "--carry")  # carried already: nothing written
    assert again.code == 0 and git("rev-parse", "leap/ledger", cwd=p.work) == \
        p.tip("leap/ledger")
    ok(p, "throw", SLICE, "--ball", "fmt", "--run")
    throw2 = record(p, layout.throw_path(SLICE, "fmt", 2))
    assert throw2["base"] == red2.base and throw2["resumed_from"] == 1
    assert standing(p, "fmt")["readiness"] != "passed"  # the old pass stands no more
    assert "score 2 of calc/fmt: 1 (pass)" in ok(p, "score", SLICE, "fmt")
    merged = p.leap("merge", SLICE)
    assert merged.code == 0, merged
    spine = p.remote_tip("refs/heads/main")
    assert spine == p.tip("main")
    assert git("show", f"{spine}:calc/ops.py", cwd=p.work) == new_ops.rstrip("\n")
    assert "show_diff" in git("show", f"{spine}:calc/fmt.py", cwd=p.work)
    audit = p.leap("audit")
    assert audit.code == 0, audit.out[-3000:]
    # the old episode's tip is kept: nothing lost
    assert git("for-each-ref", "--format=%(refname)", "refs/leap/kept/calc/fmt/", cwd=p.work)


def test_leap_run_restacks_the_dependent_by_itself(fmt_world: Project) -> None:
    p = fmt_world
    new_ops = ops_passes_again_with_other_bytes(p)
    ran = p.leap("run", SLICE, "--heartbeat", "0")
    assert ran.code == 0 and "landed" in ran.out, ran.out[-3000:]
    assert "carried" in ran.out, ran.out[-3000:]
    spine = p.remote_tip("refs/heads/main")
    assert git("show", f"{spine}:calc/ops.py", cwd=p.work) == new_ops.rstrip("\n")


def _forge(p: Project, rec: RedRecord) -> str:
    with Ledger(p.work / ".git") as ledger:
        ledger.append({layout.red_path(SLICE, "fmt", rec.red): yamlio.dumps(rec.to_dict())},
                      "forged red", [("Leap-Slice", SLICE), ("Leap-Ball", "fmt")])
    pushed = run_git("push", "--no-verify", "origin", "refs/heads/leap/ledger", cwd=p.work)
    return pushed.stderr if pushed.returncode != 0 else ""


def test_the_server_refuses_a_carry_that_changes_a_frozen_test(fmt_world: Project,
                                                               tmp_path: Path) -> None:
    p = fmt_world
    ops_passes_again_with_other_bytes(p)
    assert p.leap("sync", "origin").code == 0
    before = p.tip("leap/ledger")
    carried = p.leap("red", SLICE, "fmt", "--carry")
    assert carried.code == 0, carried
    good = RedRecord.from_dict(record(p, layout.red_path(SLICE, "fmt", 2)))
    git("update-ref", "refs/heads/leap/ledger", before, cwd=p.work)  # not pushed: forge it
    from tests.scoring.world import commit_files

    path, text = next((t.path, git("show", f"{good.commit}:{t.path}", cwd=p.work))
                      for t in good.tests)
    weaker = commit_files(p.work, good.base, {path: text + "\n# weakened\n"}, "red: weaker")
    blob = git("rev-parse", f"{weaker}:{path}", cwd=p.work)
    from leapgit.records.scoring import FileBlob

    forged = RedRecord(good.slice, good.ball, good.red, weaker, good.base,
                       (FileBlob(path, blob),), good.proof, good.recorded_at, carries=1)
    said = _forge(p, forged)
    assert "[T7.1]" in said and f"changes {path}, frozen by red 1" in said, said


def test_the_server_refuses_a_red_that_carries_itself(fmt_world: Project) -> None:
    """A boundary review: a red 2 that `carries: 2` was its own "carried red", and a weakened
    test passed every byte check against itself."""
    from leapgit.records.scoring import FileBlob
    from tests.scoring.world import commit_files

    p = fmt_world
    ops_passes_again_with_other_bytes(p)
    assert p.leap("sync", "origin").code == 0
    before = p.tip("leap/ledger")
    assert p.leap("red", SLICE, "fmt", "--carry").code == 0
    good = RedRecord.from_dict(record(p, layout.red_path(SLICE, "fmt", 2)))
    git("update-ref", "refs/heads/leap/ledger", before, cwd=p.work)  # not pushed: forge it
    path = good.tests[0].path
    weaker = commit_files(p.work, good.base, {path: "def test_nothing():\n    assert True\n"},
                          "red: weaker")
    forged = RedRecord(good.slice, good.ball, good.red, weaker, good.base,
                       (FileBlob(path, git("rev-parse", f"{weaker}:{path}", cwd=p.work)),),
                       good.proof, good.recorded_at, carries=good.red)
    said = _forge(p, forged)
    assert "[T7.1]" in said and "is not the contract red of calc/fmt before it" in said, said


def test_the_server_refuses_a_carry_while_the_stack_stands(fmt_world: Project) -> None:
    p = fmt_world
    red1 = RedRecord.from_dict(record(p, layout.red_path(SLICE, "fmt", 1)))
    forged = RedRecord(SLICE, "fmt", 2, red1.commit, red1.base, red1.tests, red1.proof,
                       red1.recorded_at, carries=1)
    said = _forge(p, forged)
    assert "[T7.1]" in said and "is not restacking" in said, said


def test_a_restack_never_drops_a_worktree_a_builder_works_in(fmt_world: Project) -> None:
    """A blind review: a throw that starts the ball afresh dropped the worktree a builder of
    another process was still building in. The drive lock says so, and the throw holds."""
    from leapgit.ledger.workspace import open_workspace
    from leapgit.worktrees.closeround import admin_dir
    from leapgit.worktrees.drivelock import DriveLock

    p = fmt_world
    ops_passes_again_with_other_bytes(p)
    assert p.leap("red", SLICE, "fmt", "--carry").code == 0
    wt = p.worktree("fmt")
    admin = admin_dir(open_workspace(p.work).paths.common_dir, wt)
    assert admin is not None
    with DriveLock(admin / "leap", wt, f"{SLICE}/fmt"):  # a builder works in it now
        busy = p.leap("throw", SLICE, "--ball", "fmt")
        assert busy.code != 0 and "a builder is still running in" in busy.err, busy
        assert (wt / "calc" / "fmt.py").exists()  # nothing dropped
    ok(p, "throw", SLICE, "--ball", "fmt")  # once it is free


def test_a_ball_whose_pass_landed_is_not_restacked(fmt_world: Project) -> None:
    """A blind review: restacking a ball whose pass is on the spine could never merge (its
    fresh branch conflicts with its own landed bytes). A dependency that passes again after
    the slice landed lands beside it (the re-merge's aggregate review judges the two)."""
    p = fmt_world
    assert p.leap("merge", SLICE).code == 0
    new_ops = ops_passes_again_with_other_bytes(p)
    assert "a restack" not in ok(p, "status", SLICE)
    ran = p.leap("run", SLICE, "--heartbeat", "0")
    assert ran.code == 0, ran.out[-3000:]
    spine = p.remote_tip("refs/heads/main")
    assert git("show", f"{spine}:calc/ops.py", cwd=p.work) == new_ops.rstrip("\n")
    assert not git("ls-tree", "--name-only", "leap/ledger",
                   f"slices/{SLICE}/balls/fmt/episodes/2", cwd=p.work)


def test_the_server_refuses_a_restack_throw_without_its_carried_red(fmt_world: Project
                                                                    ) -> None:
    from leapgit.records.types import StackEntry, ThrowRecord

    p = fmt_world
    ops_passes_again_with_other_bytes(p)
    assert p.leap("sync", "origin").code == 0
    score = yamlio.loads(git("show", f"leap/ledger:{layout.score_path(SLICE, 'ops', 2)}",
                             cwd=p.work).encode(), "score")
    first = ThrowRecord.from_dict(record(p, layout.throw_path(SLICE, "fmt", 1)))
    forged = first._replace(episode=2, resumed_from=1, base=p.base, stack=(StackEntry(
        "ops", 2, str(score["candidate"]), str(score["commit"])),), published=True,
        worktree=None)
    with Ledger(p.work / ".git") as ledger:
        ledger.append({layout.throw_path(SLICE, "fmt", 2): yamlio.dumps(forged.to_dict())},
                      "forged throw", [("Leap-Slice", SLICE), ("Leap-Ball", "fmt")])
    pushed = run_git("push", "--no-verify", "origin", "refs/heads/leap/ledger", cwd=p.work)
    assert pushed.returncode != 0 and "episode 1 of calc/fmt already passed" in \
        pushed.stderr, pushed.stderr


def test_a_red_its_stack_moved_past_before_the_first_throw_is_written_again(
        ops_world: Project) -> None:
    """A blind review: fmt's red on the stack of ops's first pass, ops passes again before
    fmt is thrown: the throw started on the fresh stack without the red. It holds now and
    names where to write it again, which leads on."""
    from tests.scoring.world import commit_files
    from tests.worktrees.test_stacked import FMT_RED, stack_of

    p = ops_world
    old = commit_files(p.work, stack_of(p), {FMT_RED[0]: FMT_RED[1]}, "red: fmt")
    ok(p, "red", SLICE, "fmt", old)
    ops_passes_again_with_other_bytes(p)
    held = p.leap("throw", SLICE, "--ball", "fmt")
    assert held.code == 3 and "calc/fmt's red 1 stands on" in held.err, held
    assert f"`leap ball base {SLICE} fmt` names it), then `leap red {SLICE} fmt COMMIT`" in \
        held.err, held.err
    new = commit_files(p.work, stack_of(p), {FMT_RED[0]: FMT_RED[1]}, "red: fmt again")
    ok(p, "red", SLICE, "fmt", new)  # the hint, exactly
    ok(p, "throw", SLICE, "--ball", "fmt")
    assert git("merge-base", "--is-ancestor", new, f"leap/ball/{SLICE}/fmt", cwd=p.work) == ""


def test_a_restack_carries_the_tests_written_for_the_findings_too(
        isolated: Path, served: Served) -> None:
    """A blind review: a restack carried only the contract red, so the tests the test author
    wrote for the tribunal's findings (T7.6) left the ball's branch. c depends on a; c's
    first candidate is refused on a finding, which becomes a further red; c passes; a passes
    again with other bytes: c's carried red freezes the finding's test too, on the branch
    its restacked episode builds on."""
    from tests.loop.test_review_findings import (
        BUGGY_GC,
        FIXED_GC,
        _finding_author,
        duo,
        passed_not_merged,
    )
    from tests.loop.world import CODE, jurors
    from tests.tribunal.jurors import JurorServer

    plan = {"a": {"calc/a.py": CODE["a"]}, "c": {"calc/c.py": BUGGY_GC},
            "c+fixed": {"calc/c.py": FIXED_GC}}
    with JurorServer("openai", jurors) as server:
        p = duo(served.folder("restack-finding"), served.daemon, server.url, "fr", ("a", "c"),
                plan, scope={"c": ["tests/test_c_finding.py"]},
                proof={"c": "python -m unittest discover -q -s tests -t . -p 'test_c*.py'"})
        (p.base_dir / "author.py").write_text(_finding_author())
        passed_not_merged(p, "fr")
        wt = p.worktree("a", "fr")
        (wt / "calc" / "a.py").write_text(CODE["a"] + "# a, once more\n")
        git("commit", "-qam", "a: once more\n\nLeap-Round: 2\nLeap-Outcome: 1", cwd=wt)
        assert p.leap("score", "fr", "a").code == 0
        carried = p.leap("red", "fr", "c", "--carry")
        assert carried.code == 0, carried
        assert "frozen: tests/test_c_finding.py" in carried.out, carried.out
        # the restacked episode's branch holds the finding's test, and it holds the builder
        # to it: this scripted builder forgets the finding, and the test refuses its round
        held = p.leap("run", "fr", "--heartbeat", "0")
    assert git("show", "leap/ball/fr/c:tests/test_c_finding.py", cwd=p.work)
    assert held.code == 1 and "fr/c  score" in held.out, held.out[-3000:]
    assert "tests: proof `python -m unittest discover" in held.out, held.out[-3000:]


def test_a_carried_red_is_refused_for_an_abandoned_slice(fmt_world: Project) -> None:
    """A blind review: `leap red` refused an abandoned slice's balls, but `leap red --carry`
    (a restack's red) still wrote one."""
    p = fmt_world
    ops_passes_again_with_other_bytes(p)
    assert p.leap("slice", "abandon", SLICE, "--reason", "gone").code == 0
    ledger = p.tip("leap/ledger")
    carried = p.leap("red", SLICE, "fmt", "--carry")
    assert carried.code == 1 and "its balls take no red [L3]" in carried.err, carried
    assert p.tip("leap/ledger") == ledger
