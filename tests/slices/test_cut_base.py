"""A slice's base is a commit of the project, never one of the ledger's own (an orphan
branch of records): `leap slice cut --base leap/ledger` was recorded, and `leap ball base`
then handed the ledger commit out as the base to build on."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.slices.drafts import base_draft, draft_repo, write
from tests.support import git, leap, ref


@pytest.mark.parametrize("rev", ["leap/ledger", "refs/heads/leap/ledger", "LEDGER_ROOT"])
def test_a_ledger_commit_as_base_is_refused_naming_base(tmp_path: Path, rev: str) -> None:
    root = draft_repo(tmp_path / "repo")
    assert leap("init", cwd=root).code == 0
    first = leap("slice", "cut", str(write(tmp_path / "s0.yaml", base_draft() | {
        "slice": "s0", "balls": [b | {"scope": [f"x/{b['id']}.py"]}
                                 for b in base_draft()["balls"]]})), cwd=root)
    assert first.code == 0, first  # the ledger has history: its root is an ancestor
    ledger = ref(root, "leap/ledger")
    assert ledger is not None
    if rev == "LEDGER_ROOT":
        rev = git("rev-list", "--max-parents=0", "leap/ledger", cwd=root)
    sha = git("rev-parse", rev, cwd=root)
    path = write(tmp_path / "slice.yaml", base_draft())
    r = leap("slice", "cut", str(path), "--base", rev, cwd=root)
    assert (r.code, r.out) == (2, ""), r
    assert r.err == (f"leap: --base: {sha[:12]} is a commit of the ledger "
                     "(refs/heads/leap/ledger), not of the project; cut from a commit of "
                     "the project, e.g. the spine's tip (the default is HEAD)\n"), r
    assert ref(root, "leap/ledger") == ledger  # nothing recorded
    assert leap("ball", "base", "s1", "a", cwd=root).code == 2


def test_a_project_commit_as_base_is_still_taken(tmp_path: Path) -> None:
    root = draft_repo(tmp_path / "repo")
    assert leap("init", cwd=root).code == 0
    r = leap("slice", "cut", str(write(tmp_path / "slice.yaml", base_draft())), "--base",
             "main", cwd=root)
    assert r.code == 0, r


@pytest.mark.parametrize("command", ["check", "cut"])
def test_a_base_behind_the_spine_with_other_scope_files_is_refused_and_the_hint_cuts(
        tmp_path: Path, command: str) -> None:
    """A checkout behind the spine (a worktree not pulled): its HEAD is the default base,
    and the balls are thrown from the spine's tip. Where a scope file differs there, every
    such ball's first round was refused as a stale map (L2). Check and cut say so before
    anything is recorded, and the command they name stamps the scope at the tip."""
    root = draft_repo(tmp_path / "repo")
    assert leap("init", cwd=root).code == 0
    behind = tmp_path / "behind"
    git("worktree", "add", "-q", "--detach", str(behind), "main", cwd=root)
    (root / "src" / "a.py").write_text("A = 'moved on'\n")
    git("commit", "-q", "-am", "the spine moves on", cwd=root)
    ledger = ref(root, "leap/ledger")
    path = write(tmp_path / "slice.yaml", base_draft())
    r = leap("slice", command, str(path), cwd=behind)
    assert (r.code, r.out) == (2, ""), r
    head, tip = git("rev-parse", "HEAD", cwd=behind), ref(root, "main")
    assert r.err.startswith(
        f"leap: {path}: base: 1 scope file(s) differ between the base {head[:12]} and main's "
        f"tip {tip[:12]}, where the balls are thrown: src/a.py; each such ball would be "
        f"refused at its throw (stale map) [L2]; stamp the scope at the spine's tip: "
        f"`leap slice {command} {path} --base main`"), r.err
    assert ref(root, "leap/ledger") == ledger  # nothing recorded
    hint = r.err.split("`")[1].split()
    assert hint[:2] == ["leap", "slice"]
    followed = leap(*hint[1:], cwd=behind)
    assert followed.code == 0, followed
    if command == "cut":  # stamped as the tip holds it, where the ball's map is checked
        ball = git("show", "leap/ledger:slices/s1/balls/a/ball.yaml", cwd=root)
        assert git("rev-parse", "main:src/a.py", cwd=root) in ball
    git("checkout", "-q", "--detach", tip, cwd=behind)
    (root / "src" / "c.py").write_text("C = 'out of every scope'\n")
    git("commit", "-q", "-am", "the spine moves on elsewhere", cwd=root)
    again = leap("slice", "check", str(path), cwd=behind)
    if command == "check":
        assert again.code == 0, again  # scope files alike
    else:  # cut: the check says what a second cut would, and no stale map
        assert again.code == 1 and "already cut [L8]" in again.err, again
        assert "differ between" not in again.err, again


def test_a_tag_named_like_the_spine_does_not_send_the_hint_back_to_the_old_base(
        tmp_path: Path) -> None:
    """git reads `main` as the tag refs/tags/main before the branch: a hint of `--base main`
    then cut from the tag's commit, behind the spine, and was refused again, naming itself.
    The hint names the spine so that it reads as the spine's tip."""
    root = draft_repo(tmp_path / "repo")
    assert leap("init", cwd=root).code == 0
    git("tag", "main", "HEAD", cwd=root)  # a release tag, or a mirror's leftover
    behind = tmp_path / "behind"
    git("worktree", "add", "-q", "--detach", str(behind), "main", cwd=root)
    (root / "src" / "a.py").write_text("A = 'moved on'\n")
    git("commit", "-q", "-am", "the spine moves on", cwd=root)
    path = write(tmp_path / "slice.yaml", base_draft())
    r = leap("slice", "cut", str(path), cwd=behind)
    assert r.code == 2, r
    hint = r.err.split("`")[1].split()
    assert hint[-2:] == ["--base", "refs/heads/main"], r.err
    followed = leap(*hint[1:], cwd=behind)
    assert followed.code == 0, followed
    ball = git("show", "leap/ledger:slices/s1/balls/a/ball.yaml", cwd=root)
    assert git("rev-parse", "refs/heads/main:src/a.py", cwd=root) in ball


def test_check_says_what_the_cut_says_against_the_ledger(tmp_path: Path) -> None:
    """`leap slice check` said ok to drafts the cut then refused: a slice id already cut, a
    file an open slice holds, a ledger commit as the base (a bad-input hunt). It runs the
    cut's own ledger checks now, and writes nothing."""
    root = draft_repo(tmp_path / "repo")
    assert leap("init", cwd=root).code == 0
    path = write(tmp_path / "slice.yaml", base_draft())
    assert leap("slice", "cut", str(path), cwd=root).code == 0
    ledger = ref(root, "leap/ledger")
    other = base_draft()
    other["slice"] = "s2"
    taken = write(tmp_path / "s2.yaml", other)
    cases = [([str(path)], "slice 's1' is already cut [L8]"),
             ([str(taken)], "belongs to ball 'a' of open slice 's1' [L4]"),
             ([str(taken), "--base", "leap/ledger"], "is a commit of the ledger")]
    for args, said in cases:
        check, cut = (leap("slice", c, *args, cwd=root) for c in ("check", "cut"))
        assert check.code == cut.code != 0, (args, check, cut)
        assert said in check.err and said in cut.err, (args, check.err, cut.err)
        assert check.err == cut.err, (check.err, cut.err)
    assert ref(root, "leap/ledger") == ledger  # nothing recorded


def test_the_audit_names_a_cut_over_an_open_slice_s_file_as_the_cut_does(
        tmp_path: Path) -> None:
    """L4, one rule for the clone, the server and the audit (a walk-away hunt: a stale
    clone's cut over an open slice's file was taken by the server, and `leap audit` said
    every cut "passes the cut's own check"). Written past the cut, as an older server took
    it, the audit names it as the cut would."""
    from leapgit.ledger.store import Ledger

    root = draft_repo(tmp_path / "repo")
    assert leap("init", cwd=root).code == 0
    assert leap("slice", "cut", str(write(tmp_path / "s1.yaml", base_draft())),
                cwd=root).code == 0
    s1 = git("ls-tree", "-r", "--name-only", "leap/ledger", "slices/s1", cwd=root).split()
    with Ledger(root / ".git") as ledger:  # s2: the same balls, files and base, another id
        ledger.append({p.replace("slices/s1/", "slices/s2/"): git(
            "show", f"leap/ledger:{p}", cwd=root).replace('"s1"', '"s2"').encode() + b"\n"
            for p in s1}, "cut slice s2 over s1's files")
    audited = leap("audit", cwd=root)
    assert audited.code == 1, audited
    assert "[L4]" in audited.out and "belongs to ball 'a' of open slice 's1'" in \
        audited.out, audited.out


def test_a_revision_that_is_no_commit_is_said_with_its_field_and_rule(tmp_path: Path) -> None:
    """`--base nope` (L2) and `leap red S B nocommit` (T7.1): one line with the field and
    the rule, as every user mistake (they named none: a bad-input hunt)."""
    root = draft_repo(tmp_path / "repo")
    assert leap("init", cwd=root).code == 0
    path = write(tmp_path / "slice.yaml", base_draft())
    r = leap("slice", "check", str(path), "--base", "nope", cwd=root)
    assert (r.code, r.out) == (2, ""), r
    assert r.err.startswith("leap: --base: base 'nope' is not a commit in this repository "
                            "[L2]; "), r.err
    assert leap("slice", "cut", str(path), cwd=root).code == 0
    ledger = ref(root, "leap/ledger")
    r = leap("red", "s1", "a", "nocommit", cwd=root)
    assert (r.code, r.out) == (2, ""), r
    assert r.err.startswith("leap: COMMIT: no commit 'nocommit' [T7.1]; "), r.err
    assert ref(root, "leap/ledger") == ledger
