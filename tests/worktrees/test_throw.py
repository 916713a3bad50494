"""`leap throw`: waves (L5), isolated worktrees, one base per wave, throw records, refusals."""

from __future__ import annotations

from pathlib import Path

from leapgit.ledger import query
from leapgit.ledger.store import Ledger
from tests.reds import red_of, shell_red
from tests.support import (
    commit_all,
    git,
    hook_round_imports,
    leap,
    make_repo,
    ref,
    write_files,
)
from tests.worktrees.conftest import mark_passed, record, set_config, worktree_of


def _throw_record(repo: Path, ball: str, episode: int = 1):  # type: ignore[no-untyped-def]
    with Ledger(repo / ".git") as ledger:
        return query.throw(ledger.require(), "dia", ball, episode)


def test_first_wave_only_then_b_and_c_from_one_base(diamond: Path) -> None:
    r = leap("throw", "dia", cwd=diamond)
    assert r.code == 0, r
    assert "threw 1 ball(s)" in r.out
    assert "not thrown: D: dia/D is waiting: dependency B has not passed (1) yet [L5]" in r.out
    a = _throw_record(diamond, "A")
    spine = ref(diamond, "main")
    assert a is not None and a.base == spine and a.wave == 0 and a.spec_version == 1
    assert a.branch == "leap/ball/dia/A"
    wt = Path(a.worktree or "")
    assert wt == worktree_of(diamond, "A") and (wt / "src/a.py").read_text() == "A = 1\n"
    assert not wt.is_relative_to(diamond)  # outside the user's checkout
    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=wt) == "leap/ball/dia/A"

    # L5: a claim is not a pass, so B and C still wait
    record(diamond, "A", 1)
    assert leap("throw", "dia", "--ball", "B", cwd=diamond).code == 3

    passed = mark_passed(diamond, "A")
    write_files(diamond, {"src/a.py": "A = 2\n"})  # the spine moves on
    tip = commit_all(diamond, "a spine commit")
    r = leap("throw", "dia", cwd=diamond)
    assert r.code == 0, r
    b, c = _throw_record(diamond, "B"), _throw_record(diamond, "C")
    assert b is not None and c is not None
    assert b.base == c.base != tip and b.wave == c.wave == 1  # one base per wave
    # L5 (issue 14): a dependent ball builds on its stack base, which holds A's passed
    # candidate, not on whatever the spine's tip holds
    assert [(e.ball, e.commit) for e in b.stack] == [("A", passed.receipt.commit)]
    assert b.stack == c.stack
    assert "D is waiting" in r.out


def test_a_claim_whose_pass_was_reopened_waits_for_a_score(diamond: Path) -> None:
    """A reopen voids the pass that graded the last round (L8): that round's claim waits for
    `leap score` again, and the refusals say so (review r7 F4), on the last round too."""
    from leapgit.ledger import layout
    from leapgit.records import yamlio
    from leapgit.records.scoring import ReopenRecord

    assert leap("throw", "dia", cwd=diamond).code == 0
    for _ in range(3):
        record(diamond, "A", 0)
    done = mark_passed(diamond, "A")  # round four claims, and its pass is recorded
    assert done.receipt.round == 4
    r = leap("round", "dia", "A", "--outcome", "0", "--evidence", "after the pass", cwd=diamond)
    assert r.code == 1 and "dia/A passed (score 1) and takes no further round" in r.err, r
    with Ledger(diamond / ".git") as ledger:
        voided = ReopenRecord("dia", "A", 1, 1, done.receipt.candidate or "0" * 40, "f" * 40,
                              "ball-branch", None, "bytes changed", "2024-01-01T00:00:00Z")
        ledger.append({layout.reopen_path("dia", "A", 1): yamlio.dumps(voided.to_dict())},
                      "reopen A")
    for cmd in (("throw", "dia", "--ball", "A", "--resume"),
                ("round", "dia", "A", "--outcome", "0", "--evidence", "a fifth")):
        r = leap(*cmd, cwd=diamond)
        assert r.code == 1 and "`leap score dia A` grades round 4's claim" in r.err, (cmd, r)


def test_rethrow_in_flight_refused(diamond: Path) -> None:
    assert leap("throw", "dia", cwd=diamond).code == 0
    r = leap("throw", "dia", "--ball", "A", cwd=diamond)
    assert r.code == 1
    assert "dia/A is in flight: episode 1, 0 round(s) used" in r.err
    assert "re-throwing a ball in flight is refused [L3]" in r.err
    r = leap("throw", "dia", cwd=diamond)
    assert r.code == 3 and "nothing to throw in slice dia [L5]" in r.err


def test_refused_ancestor_blocks_and_held_ancestor_checkpoints(diamond: Path) -> None:
    leap("throw", "dia", cwd=diamond)
    mark_passed(diamond, "A")
    assert leap("throw", "dia", cwd=diamond).code == 0
    for _ in range(4):
        record(diamond, "C", 0)  # round four without a pass: 0 with a checkpoint (L6)
    r = leap("throw", "dia", "--ball", "D", cwd=diamond)
    assert r.code == 3
    assert "dia/D is held: its ancestor C ended at 0 with a checkpoint [L5]" in r.err
    record(diamond, "B", -1)
    r = leap("throw", "dia", "--ball", "D", cwd=diamond)
    assert r.code == 1
    assert "dia/D is blocked: its ancestor B was refused (-1) [L5]" in r.err
    status = leap("status", "dia", cwd=diamond)
    assert "D  blocked" in status.out and "blocked: its ancestor B was refused (-1)" in status.out
    assert "checkpoint after 4 rounds" in status.out


def test_worktree_root_inside_the_checkout_is_refused(diamond: Path) -> None:
    set_config(diamond, root="wt")
    r = leap("throw", "dia", cwd=diamond)
    assert r.code == 1
    assert ".leap/config.yaml: worktrees.root: worktree" in r.err and "[L5]" in r.err
    assert ref(diamond, "leap/ball/dia/A") is None  # nothing half-made
    with Ledger(diamond / ".git") as ledger:
        assert query.episodes(ledger.require(), "dia", "A") == []


def test_configured_root_outside(diamond: Path, tmp_path: Path) -> None:
    set_config(diamond, root=str(tmp_path / "elsewhere"))
    assert leap("throw", "dia", cwd=diamond).code == 0
    assert (tmp_path / "elsewhere" / "dia" / "A" / "src" / "a.py").exists()


def test_bad_input(diamond: Path) -> None:
    r = leap("throw", "nope", cwd=diamond)
    assert r.code == 2 and "unknown slice 'nope'" in r.err
    r = leap("throw", "dia", "--ball", "Z", cwd=diamond)
    assert r.code == 2 and "slice 'dia' has no ball 'Z'" in r.err
    assert "Traceback" not in r.err


def test_a_throw_readies_the_hooks_cache_so_round_one_is_quick(diamond: Path) -> None:
    """The post-commit hook's first round reads what `leap throw` already parsed: none of
    the hook's heavy imports (a YAML parser, a schema validator...) is loaded (issue 3)."""
    assert leap("throw", "dia", cwd=diamond).code == 0
    wt = worktree_of(diamond, "A")
    write_files(wt, {"src/a.py": "A = 10\n"})
    git("add", "-A", cwd=wt)
    git("-c", "core.hooksPath=/dev/null", "commit", "-q", "-m",
        "a: ten\n\nLeap-Round: 1\nLeap-Outcome: 0\n", cwd=wt)
    err, heavy = hook_round_imports(diamond / ".git" / "hooks" / "post-commit", wt)
    assert "recorded round 1 of dia/A: outcome 0" in err, err
    assert heavy == []


def test_a_worktree_whose_config_the_hook_cannot_read_is_named_at_throw(
        tmp_path: Path) -> None:
    """The base commit holds a config that does not validate (fixed since, uncommitted):
    the throw stands, and says now what the hook would only say at the first round."""
    repo = make_repo(tmp_path / "repo", {"src/a.py": "A = 1\n", "src/b.py": "B = 1\n"})
    assert leap("init", cwd=repo).code == 0
    config = repo / ".leap" / "config.yaml"
    good = config.read_text()
    config.write_text(good.replace("round_limit: 4", "round_limit: nine"))
    commit_all(repo, "a broken config")
    config.write_text(good)
    (tmp_path / "one.yaml").write_text(
        "slice: one\nspine: integrator\nballs:\n"
        + "".join(f"  - {{id: {b.upper()}, goal: {b}, spec: change {b}, "
                  f"scope: [src/{b}.py, tests/{b}.sh], proof: sh tests/{b}.sh, "
                  f"tests: 'test ! -e tests/{b}.sh || sh tests/{b}.sh', "
                  "rollback: restore-scope}\n" for b in "ab"))
    assert leap("slice", "cut", str(tmp_path / "one.yaml"), cwd=repo).code == 0
    for b in "AB":  # T7.1: red first
        red_of(repo, "one", b, shell_red(b, f"src/{b.lower()}.py", f"{b} = 2"))
    r = leap("throw", "one", cwd=repo)
    assert r.code == 0, r.err
    assert ref(repo, "leap/ball/one/A") is not None
    wt = worktree_of(repo, "A", "one")  # names its own file
    assert (f"leap throw: warning: the config of A's worktree ({wt / '.leap' / 'config.yaml'}"
            in r.err), r.err
    assert "round_limit" in r.err and "records no round there until it validates" in r.err
    assert "Traceback" not in r.err
