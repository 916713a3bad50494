"""Every hint leads on (helper h3): hints of ordinary failures of cut, throw, red and status
that no test followed before. Each test provokes the message on a real repository, takes
the command exactly as printed (a capital placeholder filled the way a user would), runs
it, and shows the state moved on."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from leapgit.ledger import history
from leapgit.ledger.store import Ledger
from tests.scoring.tiny import SLICE, SUB_TEST, make_tiny
from tests.support import git, hinted_leap, leap, make_repo, ref
from tests.worktrees.conftest import DIAMOND


def _git_hinted(text: str) -> list[list[str]]:
    return [shlex.split(found)[1:] for found in re.findall(r"`(git [^`]*)`", text)]


def _fill(words: list[str], **values: str) -> list[str]:
    return [values.get(w, w) for w in words]


def test_status_with_no_slices_names_the_cut_that_makes_one(tmp_path: Path) -> None:
    """report.py: "no slices yet: write a draft and run `leap slice cut FILE`"."""
    repo = make_repo(tmp_path / "repo", {"src/a.py": "A = 1\n", "src/b.py": "B = 1\n",
                                         "src/c.py": "C = 1\n", "src/d.py": "D = 1\n"})
    assert leap("init", cwd=repo).code == 0
    empty = leap("status", cwd=repo)
    assert empty.code == 0 and empty.out.startswith("no slices yet"), empty
    [cut] = hinted_leap(empty.out)
    assert cut == ["slice", "cut", "FILE"], empty.out
    draft = tmp_path / "dia.yaml"
    draft.write_text(DIAMOND)
    done = leap(*_fill(cut, FILE=str(draft)), cwd=repo)
    assert done.code == 0, done
    after = leap("status", cwd=repo)
    assert after.code == 0 and "slice dia" in after.out and "no slices yet" not in after.out


def test_a_red_written_by_hand_as_status_and_ball_base_say_lets_the_ball_be_thrown(
        tmp_path: Path) -> None:
    """status: "ready to throw once its red is recorded (T7.1): its failing test committed
    on its base (`leap ball base S B`), then `leap red S B COMMIT`"; `leap ball base`:
    "build the red on it (`git worktree add PATH REF`), commit the failing test, then
    `leap red S B COMMIT`". Followed as printed, the red is recorded and the throw goes."""
    repo = make_tiny(tmp_path)
    status = leap("status", cwd=repo)
    [line] = [x for x in status.out.splitlines() if "ready to throw once its red" in x
              and "ball base tiny sub" in x]
    named = hinted_leap(line)
    assert named == [["ball", "base", SLICE, "sub"], ["red", SLICE, "sub", "COMMIT"]], line
    based = leap(*named[0], cwd=repo)
    assert based.code == 0, based
    [add] = _git_hinted(based.out)
    assert add[:3] == ["worktree", "add", "PATH"], based.out
    where = tmp_path / "red-wt"
    git(*_fill(add, PATH=str(where)), cwd=repo)
    (where / "tests" / "test_sub.py").write_text(SUB_TEST)
    git("add", "tests/test_sub.py", cwd=where)
    git("commit", "-q", "-m", "red: sub", cwd=where)
    commit = git("rev-parse", "HEAD", cwd=where)
    # the `leap red` that `leap ball base` names, as printed
    red = hinted_leap(based.out)[-1]
    assert red == ["red", SLICE, "sub", "COMMIT"], based.out
    recorded = leap(*_fill(red, COMMIT=commit), cwd=repo)
    assert recorded.code == 0, recorded
    with Ledger(repo / ".git") as ledger:
        got = history.latest_red(ledger.require(), SLICE, "sub")
    assert got is not None and got.commit == commit
    thrown = leap("throw", SLICE, "--ball", "sub", cwd=repo)
    assert thrown.code == 0, thrown


def test_red_without_commit_or_carry_names_commands_that_lead_on(tmp_path: Path) -> None:
    """cli.py: `leap red S B` alone names `leap red S B COMMIT` (a red before the build)
    and `leap ball base S B`; followed, the red is recorded."""
    repo = make_tiny(tmp_path)
    bare = leap("red", SLICE, "sub", cwd=repo)
    assert bare.code == 2, bare
    named = hinted_leap(bare.err)
    assert ["ball", "base", SLICE, "sub"] in named and ["red", SLICE, "sub", "COMMIT"] in named
    based = leap("ball", "base", SLICE, "sub", cwd=repo)
    assert based.code == 0, based
    base = based.out.split()[0]
    from tests.scoring.world import commit_files
    commit = commit_files(repo, base, {"tests/test_sub.py": SUB_TEST}, "red: sub")
    done = leap(*_fill(["red", SLICE, "sub", "COMMIT"], COMMIT=commit), cwd=repo)
    assert done.code == 0, done


def test_red_carry_of_a_ball_not_restacking_names_status_which_says_where_it_stands(
        diamond: Path) -> None:
    """red.py: "`leap status S` says where it stands"."""
    said = leap("red", "dia", "A", "--carry", cwd=diamond)
    assert said.code == 1 and "is not restacking" in said.err, said
    [status] = hinted_leap(said.err)
    assert status == ["status", "dia"], said.err
    shown = leap(*status, cwd=diamond)
    assert shown.code == 0, shown
    [a] = [x for x in shown.out.splitlines() if x.strip().startswith("A ")]
    assert "ready" in a, shown.out
    # what the status says of A leads on: its throw goes
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0


def test_a_spine_branch_that_does_not_exist_names_the_branch_that_makes_it(
        diamond: Path) -> None:
    """stack.py: the spine renamed away (`git branch -m`): "name a branch of this
    repository in `spine:` (`git branch` lists them), or make it: `git branch SPINE
    COMMIT`". Followed as printed (COMMIT: the renamed branch's tip), the throw goes."""
    git("branch", "-m", "main", "trunk", cwd=diamond)
    refused = leap("throw", "dia", "--ball", "A", cwd=diamond)
    assert refused.code == 2 and "spine branch 'main' does not exist" in refused.err, refused
    named = _git_hinted(refused.err)
    assert ["branch"] in named, refused.err
    listed = git(*named[0], cwd=diamond)
    assert "trunk" in listed
    [make] = [n for n in named if n != ["branch"]]
    assert make == ["branch", "main", "COMMIT"], refused.err
    git(*_fill(make, COMMIT=ref(diamond, "trunk") or ""), cwd=diamond)
    thrown = leap("throw", "dia", "--ball", "A", cwd=diamond)
    assert thrown.code == 0, thrown


def test_status_s_unsigned_records_are_all_listed_by_the_command_it_names(
        diamond: Path) -> None:
    """report.py: "signatures: N of N ledger commits are UNSIGNED; unsigned records: 5
    named and K more (`leap audit-signatures --json` lists them)". Run as printed, it
    lists every one: the five named and the K more."""
    import json

    status = leap("status", cwd=diamond)
    [line] = [x for x in status.out.splitlines() if x.startswith("signatures:")]
    [command] = hinted_leap(line)
    assert command == ["audit-signatures", "--json"], line
    found = re.search(r"unsigned records: (.*) and (\d+) more", line)
    assert found is not None, line
    named, more = found.group(1).split(", "), int(found.group(2))
    listed = leap(*command, cwd=diamond)
    assert listed.code == 0, listed
    data = json.loads(listed.out)
    paths = {p for f in data["findings"] if f["kind"] == "unsigned" and f["branch"] == "ledger"
             for p in f["paths"]}
    assert set(named) <= paths and len(paths) == len(named) + more, (line, sorted(paths))
