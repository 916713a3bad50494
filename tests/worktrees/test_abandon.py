"""Slices end (issue 14 item 7): `leap slice abandon SLICE --reason TEXT` writes an abandon
record; the slice's balls refuse throws (L3), its worktrees become prunable, `leap status`
and `leap audit` show it abandoned; an open slice owns its scope files (L4)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from leapgit.ledger import layout, query
from leapgit.ledger.store import Ledger
from tests.support import git, leap, ref
from tests.worktrees.conftest import set_config, worktree_of

OTHER = """\
slice: other
spine: integrator
balls:
  - {id: X, goal: x, spec: change x, scope: [src/x.py, src/a.py], proof: "true",
     tests: "true", rollback: restore-scope}
  - {id: Y, goal: y, spec: change y, scope: [src/y.py], proof: "true", tests: "true",
     rollback: restore-scope, depends_on: [X]}
"""


def test_an_abandoned_slice_is_thrown_no_more_and_its_worktrees_are_pruned(
        diamond: Path, builder: Callable[..., str]) -> None:
    set_config(diamond, builder=builder("""
        pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 0\\nevidence: no\\n")
    """))
    assert leap("throw", "dia", "--ball", "A", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    assert wt.is_dir()
    r = leap("slice", "abandon", "dia", "--reason", "the wrong approach", cwd=diamond)
    assert r.code == 0, r
    assert "slice dia abandoned: the wrong approach" in r.out
    assert "`leap worktree prune dia`" in r.out
    with Ledger(diamond / ".git") as ledger:
        rec = query.abandoned(ledger.require(), "dia")
    assert rec is not None and rec.reason == "the wrong approach"

    r = leap("throw", "dia", cwd=diamond)
    assert r.code == 1 and "slice dia was abandoned" in r.err and "[L3]" in r.err, r
    assert "the wrong approach" in r.err and "`leap worktree prune dia`" in r.err
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond)
    assert r.code == 1 and "abandoned" in r.err, r

    # the hint leads on: the worktree and branch of the abandoned slice's ball go
    r = leap("worktree", "prune", "dia", cwd=diamond)
    assert r.code == 0 and "dia/A: removed: slice abandoned (the wrong approach)" in r.out, r
    assert not wt.exists() and ref(diamond, "leap/ball/dia/A") is None

    r = leap("status", cwd=diamond)
    assert r.code == 0 and "slice dia  spine integrator" in r.out and "ABANDONED" in r.out
    assert "abandoned at " in r.out and "the wrong approach" in r.out
    data = json.loads(leap("status", "--json", cwd=diamond).out)
    assert data["slices"][0]["abandoned"]["reason"] == "the wrong approach"
    r = leap("audit", cwd=diamond)
    assert r.code == 0 and "slice dia: abandoned" in r.out, r

    r = leap("slice", "abandon", "dia", "--reason", "again", cwd=diamond)
    assert r.code == 1 and "slice dia was abandoned at" in r.err and "[L8]" in r.err, r


def test_abandon_names_an_unknown_slice_and_an_empty_reason(diamond: Path) -> None:
    r = leap("slice", "abandon", "nope", "--reason", "x", cwd=diamond)
    assert r.code == 2 and "unknown slice 'nope' (known: dia)" in r.err, r
    r = leap("slice", "abandon", "dia", "--reason", "  ", cwd=diamond)
    assert r.code == 2 and "--reason is empty" in r.err and "Traceback" not in r.err, r
    r = leap("slice", "abandon", "dia", cwd=diamond)
    assert r.code == 2 and "--reason" in r.err, r
    with Ledger(diamond / ".git") as ledger:
        assert not ledger.require().exists(layout.abandon_path("dia"))
    # the hint of the empty reason, with a reason: it is recorded
    r = leap("slice", "abandon", "dia", "--reason", "TEXT", cwd=diamond)
    assert r.code == 0 and "slice dia abandoned: TEXT" in r.out, r
    with Ledger(diamond / ".git") as ledger:
        assert ledger.require().exists(layout.abandon_path("dia"))


def test_an_open_slice_owns_its_files_until_it_is_abandoned(
        diamond: Path, tmp_path: Path) -> None:
    draft = tmp_path / "other.yaml"
    draft.write_text(OTHER)
    r = leap("slice", "cut", str(draft), cwd=diamond)
    assert r.code == 1, r
    assert (f"{draft}: balls[0].scope[1]: 'src/a.py' belongs to ball 'A' of open slice 'dia' "
            "[L4]") in r.err, r
    assert "`leap slice abandon dia --reason TEXT`" in r.err
    assert "src/x.py" not in r.err  # a file no open slice holds is free
    with Ledger(diamond / ".git") as ledger:
        assert query.slice_ids(ledger.require()) == ["dia"]
    # the hint leads on: once dia is abandoned, its files are free
    assert leap("slice", "abandon", "dia", "--reason", "superseded", cwd=diamond).code == 0
    r = leap("slice", "cut", str(draft), cwd=diamond)
    assert r.code == 0, r
    with Ledger(diamond / ".git") as ledger:
        assert query.slice_ids(ledger.require()) == ["dia", "other"]


def test_prune_of_an_abandoned_slice_keeps_a_commit_no_round_records(diamond: Path) -> None:
    """A blind review: the prune `leap red` and the merge now name for an abandoned slice
    deleted a ball branch holding a commit made by hand, which no receipt records (nothing
    lost, L6). The branch goes, its tip is kept under refs/leap/kept/, and it says so."""
    assert leap("throw", "dia", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    (wt / "src/a.py").write_text("A = 99\n")
    git("-c", "core.hooksPath=/dev/null", "commit", "-qam", "unrecorded work", cwd=wt)
    mine = git("rev-parse", "HEAD", cwd=wt)
    assert leap("slice", "abandon", "dia", "--reason", "x", cwd=diamond).code == 0
    pruned = leap("worktree", "prune", "dia", cwd=diamond)
    assert pruned.code == 0, pruned
    assert f"its commit {mine[:12]}, which no round records, is kept as refs/leap/kept/" \
        in pruned.out, pruned.out
    assert ref(diamond, "refs/heads/leap/ball/dia/A") is None
    held = git("for-each-ref", "--format=%(refname)", "--contains", mine, cwd=diamond)
    assert held.startswith("refs/leap/kept/dia/A/"), held
