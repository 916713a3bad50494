"""Issue 18 F5, F6: rules the server claims, held on their own. Each attack is pushed past
the client (`--no-verify`) to a real bare remote with `leap hooks install --server` behind
`git daemon`, refused by its `pre-receive` with the rule id, and leaves the remote's refs
as they were; where an honest step sits next to the attack, it still lands."""

from __future__ import annotations

import subprocess

import pytest

from leapgit.ledger import layout
from leapgit.ledger.leases import take_lease
from leapgit.records import yamlio
from leapgit.records.types import BallRecord, StampedScope, ThrowRecord
from tests.hooks.world import NOW, SLICE, World, commit, remote_refs, round_message
from tests.support import git, write_pass

BALL_A = f"leap/ball/{SLICE}/a"
MERGE_A = "integrate s1/a\n\nLeap-Slice: s1\nLeap-Ball: a"


def refused(w: World, result: subprocess.CompletedProcess[str], before: dict[str, str],
            rule: str, *says: str) -> None:
    """The push failed with a ``[rule]`` line holding every one of ``says``; no ref moved."""
    assert result.returncode != 0, result.stdout + result.stderr
    lines = [ln for ln in result.stderr.splitlines() if f"leap pre-receive:   [{rule}]" in ln]
    assert any(all(s in ln for s in says) for ln in lines), result.stderr
    assert remote_refs(w.bare) == before


def red_record(w: World, ball: str, number: int, red_commit: str, tests: dict[str, str]
               ) -> dict[str, bytes]:
    """A red record as `leap red` writes it (T7.1), freezing ``tests`` (path -> blob)."""
    rec = {"kind": "red", "format": 1, "slice": SLICE, "ball": ball, "red": number,
           "commit": red_commit, "base": w.base,
           "tests": [{"path": p, "blob": b} for p, b in tests.items()],
           "proof": {"type": "red", "command": "false", "exit_code": 1},
           "recorded_at": NOW}
    return {layout.red_path(SLICE, ball, number): yamlio.dumps(rec)}


def blob(w: World, rev: str, path: str) -> str:
    return git("rev-parse", f"{rev}:{path}", cwd=w.work)


def rounds_on_a(w: World, count: int, start: int = 1) -> list[str]:
    """``count`` round commits on ball a's branch from its base, ``Leap-Round`` numbered
    from ``start`` (the branch is left checked out)."""
    git("checkout", "-q", "-B", BALL_A, w.base, cwd=w.work)
    return [commit(w.work, {"src/a.py": f"A = {n}\n"}, round_message(f"a {n}", n))
            for n in range(start, start + count)]


# F5.1 (L6, T7.1): a red precedes every round of the episode it belongs to


def test_a_red_naming_the_builders_fifth_commit_does_not_make_rounds_vanish(
        fresh_world: World) -> None:
    """Six commits, one with ``Leap-Round: 5``: a red record naming the fifth (which the
    server did not hold when the red landed) would make the first five "the red test", so
    the sixth were round one. The ball branch refuses the rounds the red would hide."""
    w = fresh_world
    made = rounds_on_a(w, 5)
    sixth = commit(w.work, {"src/a.py": "A = 6\n"}, round_message("a 6", 1))
    git("checkout", "-q", "main", cwd=w.work)
    w.append(red_record(w, "a", 1, made[4], {"tests/test_a.py": blob(w, made[4],
                                                                     "tests/test_a.py")}))
    assert w.push("leap/ledger").returncode == 0  # the red's commit is not on the server
    before = remote_refs(w.bare)
    result = w.push(f"{sixth}:refs/heads/{BALL_A}")
    refused(w, result, before, "L6", made[0][:12], "Leap-Round: 1",
            f"red 1 at {made[4][:12]}", "a red precedes every round of its episode")


def test_a_red_after_round_commits_the_server_holds_is_refused(fresh_world: World) -> None:
    """The four rounds are on the server's ball branch (no receipt records them): a red on
    top of them comes after the build (T7.1)."""
    w = fresh_world
    made = rounds_on_a(w, 4)
    git("checkout", "-q", "main", cwd=w.work)
    assert w.push(BALL_A).returncode == 0
    before = remote_refs(w.bare)
    w.append(red_record(w, "a", 1, made[3], {"src/a.py": blob(w, made[3], "src/a.py")}))
    result = w.push("leap/ledger")
    refused(w, result, before, "T7.1", layout.red_path(SLICE, "a", 1), made[0][:12],
            "Leap-Round: 1", "red comes first")


def test_an_honest_red_before_the_rounds_lands(fresh_world: World) -> None:
    w = fresh_world
    git("checkout", "-q", "-B", BALL_A, w.base, cwd=w.work)
    red = commit(w.work, {"tests/test_a.py": "def test_a():\n    assert A == 10\n"}, "red: a")
    w.append(red_record(w, "a", 1, red, {"tests/test_a.py": blob(w, red, "tests/test_a.py")}))
    rounds = [commit(w.work, {"src/a.py": f"A = {n}\n"}, round_message(f"a {n}", n))
              for n in range(1, 5)]
    git("checkout", "-q", "main", cwd=w.work)
    assert w.push("leap/ledger").returncode == 0
    pushed = w.push(BALL_A)
    assert pushed.returncode == 0, pushed.stderr
    assert remote_refs(w.bare)[f"refs/heads/{BALL_A}"] == rounds[-1]


# F5.2 (L2, L3, L4): the spec version thrown and passed, and respecs checked


def respec_record(w: World, ball: str, version: int, extra: tuple[str, ...]) -> dict[str, bytes]:
    """Spec version ``version`` of ``ball``: its first version's scope plus ``extra``, each
    stamped at the spine's tip, as `leap ball respec` writes it."""
    with w.ledger() as ledger:
        first = ledger.require().record(layout.ball_path(SLICE, ball), BallRecord)
    assert first is not None
    added = tuple(StampedScope(p, blob(w, "main", p) if p.startswith("src/") else "absent")
                  for p in extra)
    rec = first._replace(spec_version=version, scope=first.scope + added,
                         reason="repaired spec (L3)", recorded_at=NOW)
    return {layout.ball_path(SLICE, ball, version): yamlio.dumps(rec.to_dict())}


def refuse_round_one(w: World, ball: str = "a", episode: int = 1) -> None:
    """Round one of ``ball`` refused (-1): the ball is stuck, it may be respecced (L3)."""
    w.append(dict([w.receipt(ball, 1, -1, claim=True, episode=episode)]), f"{ball}: -1")


def test_a_respec_of_a_ball_in_flight_is_refused(fresh_world: World) -> None:
    w = fresh_world
    before = remote_refs(w.bare)
    w.append(respec_record(w, "a", 2, ("src/c.py",)))
    result = w.push("leap/ledger")
    refused(w, result, before, "L3", layout.ball_path(SLICE, "a", 2),
            "only a stuck ball (ended at 0, or refused -1) or one not thrown yet gets a "
            "repaired spec")


def test_a_respec_that_takes_another_balls_file_is_refused(fresh_world: World) -> None:
    w = fresh_world
    refuse_round_one(w)
    assert w.push("leap/ledger").returncode == 0
    before = remote_refs(w.bare)
    w.append(respec_record(w, "a", 2, ("src/b.py",)))
    result = w.push("leap/ledger")
    refused(w, result, before, "L4", layout.ball_path(SLICE, "a", 2), "'src/b.py'",
            "of ball 'b'")
    w.reset_ledger()
    w.append(respec_record(w, "a", 2, ("../outside.py",)))
    refused(w, w.push("leap/ledger"), before, "L2", "walks out of the repository")


def test_the_ball_branch_is_judged_by_the_spec_version_thrown(fresh_world: World) -> None:
    """A respec (here an honest one: the ball is stuck) widens the scope of spec version
    2; episode 1 was thrown with version 1, and its branch keeps version 1's scope."""
    w = fresh_world
    refuse_round_one(w)
    w.append(respec_record(w, "a", 2, ("src/c.py",)))
    landed = w.push("leap/ledger")
    assert landed.returncode == 0, landed.stderr
    git("checkout", "-q", "-B", BALL_A, w.base, cwd=w.work)
    sha = commit(w.work, {"src/c.py": "C = 30\n"}, round_message("a: c too", 2))
    git("checkout", "-q", "main", cwd=w.work)
    before = remote_refs(w.bare)
    result = w.push(BALL_A)
    refused(w, result, before, "L4", sha[:12], "src/c.py", "outside the scope of ball s1/a")


def test_the_spine_is_judged_by_the_spec_version_passed(fresh_world: World) -> None:
    """Episode 2 is thrown with spec version 1 and passes under it; spec version 2 (which
    landed while the ball was stuck) adds src/c.py. A merge bringing src/c.py is judged by
    the version that passed."""
    w = fresh_world
    refuse_round_one(w)
    w.append(respec_record(w, "a", 2, ("src/c.py",)))
    thrown = ThrowRecord(SLICE, "a", 2, 1, w.base, BALL_A, NOW)
    w.append({layout.throw_path(SLICE, "a", 2): yamlio.dumps(thrown.to_dict())}, "throw a 2")
    git("checkout", "-q", "-B", BALL_A, w.base, cwd=w.work)
    head = commit(w.work, {"src/a.py": "A = 10\n", "src/c.py": "C = 30\n"},
                  round_message("a: ten, and c", 1, 1))
    git("checkout", "-q", "main", cwd=w.work)
    tree = w.tip(f"{head}^{{tree}}")
    with w.ledger() as ledger:
        write_pass(ledger, SLICE, "a", tree, head, w.base, episode=2, spec_version=1)
        take_lease(ledger, "main", "integrator")
    landed = w.push("leap/ledger")
    assert landed.returncode == 0, landed.stderr
    merge = git("commit-tree", tree, "-p", w.base, "-p", head, "-m", MERGE_A, cwd=w.work)
    before = remote_refs(w.bare)
    result = w.push(f"{merge}:refs/heads/main")
    refused(w, result, before, "L4", "src/c.py", "outside the scope of ball s1/a",
            f"in the history of candidate {head[:12]}")


# F5.3 (T7.1): a pass names a red the ledger holds


def test_a_pass_naming_a_red_that_does_not_exist_is_refused(fresh_world: World) -> None:
    w = fresh_world
    git("checkout", "-q", "-B", BALL_A, w.base, cwd=w.work)
    head = commit(w.work, {"src/a.py": "A = 10\n"}, round_message("a: ten", 1, 1))
    git("checkout", "-q", "main", cwd=w.work)
    tree = w.tip(f"{head}^{{tree}}")
    from tests.support import claimed_round, pass_files

    with w.ledger() as ledger:
        files = claimed_round(ledger, SLICE, "a", tree, head, w.base, episode=1, rounds=1,
                              spec_version=1)
    files.update(pass_files(SLICE, "a", tree, head, w.base, red=7))
    w.append(files, "a passes, naming red 7")
    before = remote_refs(w.bare)
    result = w.push("leap/ledger")
    refused(w, result, before, "T7.1", layout.score_path(SLICE, "a", 1),
            "names red 7, which the ledger does not hold")


def _passed_a(w: World) -> tuple[str, str]:
    """Ball a's one round (A = 10), its full pass and the integrator's lease, on the
    server's ledger; returns the round's commit and tree."""
    git("checkout", "-q", "-B", BALL_A, w.base, cwd=w.work)
    head = commit(w.work, {"src/a.py": "A = 10\n"}, round_message("a: ten", 1, 1))
    git("checkout", "-q", "main", cwd=w.work)
    tree = w.tip(f"{head}^{{tree}}")
    with w.ledger() as ledger:
        write_pass(ledger, SLICE, "a", tree, head, w.base)
        take_lease(ledger, "main", "integrator")
    landed = w.push("leap/ledger")
    assert landed.returncode == 0, landed.stderr
    return head, tree


def test_a_spine_merge_of_a_candidate_beside_its_red_is_refused(fresh_world: World) -> None:
    """T7.1, T7.6 (``rules.balls.unheld_reds``, which the client's source step asks too): the
    red is a commit the builder never built on; a pass written for a candidate made from the
    base beside it (the client's source step would refuse to score it) cannot reach the
    spine. Before, the server judged the candidate's history only, and took it."""
    w = fresh_world
    git("checkout", "-q", "-B", "side", w.base, cwd=w.work)
    red = commit(w.work, {"tests/test_a.py": "assert False\n"}, "red: a's contract test")
    frozen = {"tests/test_a.py": blob(w, red, "tests/test_a.py")}
    w.append(red_record(w, "a", 1, red, frozen), "red of a")
    head, tree = _passed_a(w)
    merge = git("commit-tree", tree, "-p", w.base, "-p", head, "-m", MERGE_A, cwd=w.work)
    before = remote_refs(w.bare)
    result = w.push(f"{merge}:refs/heads/main")
    refused(w, result, before, "T7.1", f"the candidate does not hold the red commit {red[:12]}",
            f"s1/a, candidate {head[:12]}")


def _refused_then_thrown_afresh(w: World) -> str:
    """Ball a's round 1 pushed and refused (-1), the ball respecced (same scope), and thrown
    again as episode 2 on the same base: a fresh branch (L3), whose remote tip is still
    the refused round. Returns that tip."""
    git("checkout", "-q", "-B", BALL_A, w.base, cwd=w.work)
    old = commit(w.work, {"src/a.py": "A = 9\n"}, round_message("a: nine", 1, -1))
    w.append(dict([w.receipt("a", 1, -1, claim=False, commit=old)]), "a: -1")
    assert w.push("leap/ledger", BALL_A).returncode == 0
    w.append(respec_record(w, "a", 2, ()))
    thrown = ThrowRecord(SLICE, "a", 2, 2, w.base, BALL_A, NOW, resumed_from=1)
    w.append({layout.throw_path(SLICE, "a", 2): yamlio.dumps(thrown.to_dict())}, "throw a 2")
    assert w.push("leap/ledger").returncode == 0
    return old


def test_a_fresh_throw_on_the_same_base_replaces_the_refused_branch(fresh_world: World
                                                                     ) -> None:
    """L3, L6: a refused ball respecced and thrown again starts a fresh branch from the
    base; when the spine did not move, that base is the old branch's too. Before, the
    server took the replacement for a force-push of the current episode and refused it,
    so a published ball thrown afresh could never reach its workers."""
    w = fresh_world
    _refused_then_thrown_afresh(w)
    git("checkout", "-q", "-B", BALL_A, w.base, cwd=w.work)
    fresh = commit(w.work, {"src/a.py": "A = 10\n"}, round_message("a: ten", 1, 1))
    git("checkout", "-q", "main", cwd=w.work)
    result = w.push(f"+{BALL_A}")
    assert result.returncode == 0, result.stderr
    assert remote_refs(w.bare)[f"refs/heads/{BALL_A}"] == fresh


def test_a_fresh_throw_does_not_let_an_unrecorded_round_be_rewritten(fresh_world: World
                                                                     ) -> None:
    """The replacement is taken only off a tip the earlier episode recorded: a commit on
    top of it that no receipt records is a round (rewritten rounds are still rounds)."""
    w = fresh_world
    _refused_then_thrown_afresh(w)
    extra = commit(w.work, {"src/a.py": "A = 11\n"}, round_message("a: eleven", 1))
    assert w.push(BALL_A).returncode == 0, "a round of episode 2 on the old line"
    git("checkout", "-q", "-B", BALL_A, w.base, cwd=w.work)
    new = commit(w.work, {"src/a.py": "A = 10\n"}, round_message("a: ten", 1, 1))
    git("checkout", "-q", "main", cwd=w.work)
    before = remote_refs(w.bare)
    assert before[f"refs/heads/{BALL_A}"] == extra
    refused(w, w.push(f"+{BALL_A}"), before, "L6", new[:12], "a force-push")


@pytest.mark.parametrize("resumed_from", [2, 3])
def test_a_throw_that_resumes_itself_or_a_later_episode_is_refused(fresh_world: World,
                                                                   resumed_from: int) -> None:
    """L6: a throw resumes an earlier episode or none. One that named itself was taken,
    and every clone that synced it then hung walking ``resumed_from`` back (a blind
    review): `leap status` and `leap run` never ended."""
    w = fresh_world
    w.append(dict([w.receipt("a", n, 0, claim=False) for n in (1, 2, 3, 4)]
                  + [w.checkpoint("a", 4)]), "a: rounds 1-4, checkpoint")
    assert w.push("leap/ledger").returncode == 0
    before = remote_refs(w.bare)
    t = ThrowRecord(SLICE, "a", 2, 1, w.base, BALL_A, NOW, resumed_from=resumed_from)
    w.append({layout.throw_path(SLICE, "a", 2): yamlio.dumps(t.to_dict())}, "throw a 2")
    refused(w, w.push("leap/ledger"), before, "L6",
            f"says it resumes episode {resumed_from}", "resumes an earlier episode")


@pytest.mark.parametrize(("slice_id", "ball", "says"), [
    ("ghost", "a", "a record of slice ghost, which the ledger does not hold"),
    (SLICE, "zz", f"a record of ball zz, which the cut of slice {SLICE} does not name")],
    ids=["no-such-slice", "no-such-ball"])
def test_a_record_of_a_slice_or_ball_no_cut_made_is_refused(
        fresh_world: World, slice_id: str, ball: str, says: str) -> None:
    """L1 (a blind review of `leap sync --take-remote`): a red of a slice no cut made landed
    when the cut it was written on was left out, and every clone's `leap status` then stopped
    on "unknown slice". A slice's record needs its cut, a ball's its first spec."""
    w = fresh_world
    before = remote_refs(w.bare)
    [(path, data)] = red_record(w, ball, 1, w.base, {"tests/test_a.py": "0" * 40}).items()
    w.append({path.replace(f"slices/{SLICE}/", f"slices/{slice_id}/"):
              data.replace(f'"{SLICE}"'.encode(), f'"{slice_id}"'.encode())}, "a red, cut-less")
    refused(w, w.push("leap/ledger"), before, "L1", says)


# F5.4 (L4, L9): the spine judges each commit the merge brings from the ball's line


def test_an_out_of_scope_commit_reverted_later_cannot_reach_the_spine(fresh_world: World
                                                                       ) -> None:
    """Round one changes src/c.py (outside the scope), round two puts it back: the final
    tree is in scope, the history is not. Its ball branch refuses that history; so does
    the spine."""
    w = fresh_world
    git("checkout", "-q", "-B", BALL_A, w.base, cwd=w.work)
    stray = commit(w.work, {"src/a.py": "A = 10\n", "src/c.py": "C = 99\n"},
                   round_message("a: ten, and c", 1))
    head = commit(w.work, {"src/c.py": "C = 3\n"}, round_message("a: c back", 2, 1))
    git("checkout", "-q", "main", cwd=w.work)
    tree = w.tip(f"{head}^{{tree}}")
    with w.ledger() as ledger:
        write_pass(ledger, SLICE, "a", tree, head, w.base, rounds=2)
        take_lease(ledger, "main", "integrator")
    assert w.push("leap/ledger").returncode == 0
    before = remote_refs(w.bare)
    refused(w, w.push(BALL_A), before, "L4", stray[:12], "src/c.py")
    merge = git("commit-tree", tree, "-p", w.base, "-p", head, "-m", MERGE_A, cwd=w.work)
    result = w.push(f"{merge}:refs/heads/main")
    refused(w, result, before, "L4", stray[:12], "src/c.py", "outside the scope of ball s1/a",
            f"in the history of candidate {head[:12]}")


# F5.5 (L8): the spine compares a scope file's mode as well as its bytes


def _with_mode(w: World, tree: str, path: str, mode: str) -> str:
    """``tree`` with ``path``'s mode set to ``mode`` (same blob)."""
    import os

    index = w.base_dir / "mode.index"
    env = {"GIT_INDEX_FILE": str(index)}
    git("read-tree", tree, cwd=w.work, env=env)
    git("update-index", "--cacheinfo", f"{mode},{blob(w, tree, path)},{path}", cwd=w.work,
        env=env)
    out = git("write-tree", cwd=w.work, env=env)
    os.unlink(index)
    return out


def test_a_merge_that_flips_a_scope_files_mode_is_refused(fresh_world: World) -> None:
    w = fresh_world
    head, tree = _passed_a(w)
    before = remote_refs(w.bare)
    for path in ("src/a.py", "tests/test_a.py"):  # changed by the candidate, or not
        flipped = _with_mode(w, tree, path, "100755")
        merge = git("commit-tree", flipped, "-p", w.base, "-p", head, "-m", MERGE_A,
                    cwd=w.work)
        result = w.push(f"{merge}:refs/heads/main")
        refused(w, result, before, "L8", path, "100755", "100644",
                f"the passed candidate {tree[:12]}")
    honest = git("commit-tree", tree, "-p", w.base, "-p", head, "-m", MERGE_A, cwd=w.work)
    landed = w.push(f"{honest}:refs/heads/main")
    assert landed.returncode == 0, landed.stderr


# Issue 18, gaps in the tests (L6): the round trailer's range on a single commit


@pytest.mark.parametrize("number", [5, 0])
def test_a_single_round_commit_outside_one_to_four_is_refused(fresh_world: World,
                                                              number: int) -> None:
    """One commit is one round of four: the count cannot catch it, the range must."""
    w = fresh_world
    git("checkout", "-q", "-B", BALL_A, w.base, cwd=w.work)
    sha = commit(w.work, {"src/a.py": "A = 10\n"}, round_message("a", number))
    git("checkout", "-q", "main", cwd=w.work)
    before = remote_refs(w.bare)
    refused(w, w.push(BALL_A), before, "L6", sha[:12], f"Leap-Round: {number} is outside 1..4")
    one = git("commit-tree", f"{sha}^{{tree}}", "-p", w.base, "-m", round_message("a", 1),
              cwd=w.work)
    assert w.push(f"{one}:refs/heads/{BALL_A}").returncode == 0  # the same bytes, round 1


# superscript 2, fullwidth 3, Arabic-Indic 3
@pytest.mark.parametrize("number", ["\u00b2", "\uff13", "\u0663"])
def test_a_round_number_in_other_digits_is_no_receipt(fresh_world: World, number: str
                                                      ) -> None:
    """Blind review r2 (boundary condition): `Leap-Round: ²` crashed the hook (Python's
    str.isdigit takes it, int() does not: ValueError, fail closed as an internal error),
    and a fullwidth or Arabic-Indic 3 counted as round 3 although git and every reader
    see another text. A round number is ASCII digits; anything else is no receipt."""
    w = fresh_world
    git("checkout", "-q", "-B", BALL_A, w.base, cwd=w.work)
    sha = commit(w.work, {"src/a.py": "A = 10\n"},
                 f"a\n\nLeap-Round: {number}\nLeap-Outcome: 0\n")
    git("checkout", "-q", "main", cwd=w.work)
    before = remote_refs(w.bare)
    result = w.push(BALL_A)
    assert "internal error" not in result.stderr, result.stderr
    refused(w, result, before, "L6", sha[:12], "a round commit without its receipt trailers")


# F6 (L8, S3): a reopen names a real byte change; in signed mode, by a role that may


def _merged(w: World) -> dict[str, str]:
    """Balls a and b passed and merged (the lease, both merges, the slice pass record),
    all on the server; returns the candidate commits and the spine tip (``main``)."""
    from leapgit.records.scoring import Merged, MergeRecord

    heads = {}
    for ball, path, text in (("a", "src/a.py", "A = 10\n"), ("b", "src/b.py", "B = 20\n")):
        git("checkout", "-q", "-B", f"leap/ball/{SLICE}/{ball}", w.base, cwd=w.work)
        heads[ball] = commit(w.work, {path: text}, round_message(ball, 1, 1))
    git("checkout", "-q", "main", cwd=w.work)
    trees = {b: w.tip(f"{h}^{{tree}}") for b, h in heads.items()}
    with w.ledger() as ledger:
        for ball, head in heads.items():
            write_pass(ledger, SLICE, ball, trees[ball], head, w.base)
        take_lease(ledger, "main", "integrator")
    assert w.push("leap/ledger").returncode == 0
    first = git("commit-tree", trees["a"], "-p", w.base, "-p", heads["a"], "-m", MERGE_A,
                cwd=w.work)
    both = git("merge-tree", "--write-tree", first, heads["b"], cwd=w.work)
    second = git("commit-tree", both, "-p", first, "-p", heads["b"], "-m",
                 MERGE_A.replace("Ball: a", "Ball: b").replace("s1/a", "s1/b"), cwd=w.work)
    landed = w.push(f"{second}:refs/heads/main")
    assert landed.returncode == 0, landed.stderr
    git("fetch", "-q", str(w.bare), "main", cwd=w.work)
    git("reset", "-q", "--hard", second, cwd=w.work)
    rec = MergeRecord(SLICE, "main", 1, "integrator", w.base, second,
                      (Merged("a", first, trees["a"], heads["a"], "t-test-pass", 1),
                       Merged("b", second, trees["b"], heads["b"], "t-test-pass", 1)),
                      "t-aggregate", both, NOW)
    w.append({layout.merge_path(SLICE): yamlio.dumps(rec.to_dict())}, "merge s1")
    recorded = w.push("leap/ledger")
    assert recorded.returncode == 0, recorded.stderr
    return {**heads, "main": second, **{f"tree-{b}": t for b, t in trees.items()}}


def by_hand(w: World, files: dict[str, str]) -> str:
    """A commit on the spine made by the server's admin (moved there by hand: the hook
    never judged it), and the local spine with it."""
    hand = commit(w.work, files, "by hand")
    git("push", "-q", str(w.bare), f"{hand}:refs/heads/hand", cwd=w.work)
    git("update-ref", "refs/heads/main", hand, cwd=w.bare)
    git("update-ref", "-d", "refs/heads/hand", cwd=w.bare)
    return hand


def reopen_record(ball: str, candidate: str, where: str, commit: str | None,
                  found: str | None = None, paths: tuple[str, ...] = ()) -> dict[str, bytes]:
    from leapgit.records.scoring import ReopenRecord

    rec = ReopenRecord(SLICE, ball, 1, 1, candidate, found, where,  # type: ignore[arg-type]
                       commit, "a byte change", NOW, paths)
    return {layout.reopen_path(SLICE, ball, 1): yamlio.dumps(rec.to_dict())}


def test_a_reopen_that_names_no_byte_change_is_refused(fresh_world: World) -> None:
    """A builder of ball b voids ball a's pass: on the spine's account, naming the spine's
    own tip (which holds a's candidate bytes), a commit that is not on the spine, or a
    path outside a's scope; on the ball branch's, naming the passed candidate itself."""
    w = fresh_world
    at = _merged(w)
    readme = by_hand(w, {"README.md": "# by hand\n"})  # on the spine, none of a's files
    before = remote_refs(w.bare)
    attempts = [
        (reopen_record("a", at["tree-a"], "spine", readme, paths=("src/a.py",)),
         "holds the merged candidate's bytes of src/a.py: no byte change"),
        (reopen_record("a", at["tree-a"], "spine", readme),
         "holds the merged candidate's bytes of src/a.py, src/new.py, tests/test_a.py"),
        (reopen_record("a", at["tree-a"], "spine", at["main"], paths=("src/a.py",)),
         f"after the slice's merge {at['main'][:12]}"),
        (reopen_record("a", at["tree-a"], "spine", at["b"], paths=("src/a.py",)),
         f"spine commit {at['b'][:12]} is not on the spine the server stores"),
        (reopen_record("a", at["tree-a"], "spine", "1" * 40, paths=("src/a.py",)),
         "a change only in a clone, or before the merge, reopens nothing there"),
        (reopen_record("a", at["tree-a"], "spine", readme, paths=("src/b.py",)),
         "names src/b.py, no file of the scope of s1/a"),
        (reopen_record("a", at["tree-a"], "ball-branch", at["a"], found=at["tree-a"]),
         "no tree other than the passed candidate"),
        (reopen_record("a", at["tree-b"], "ball-branch", at["b"], found=at["tree-b"]),
         f"voids score 1 of s1/a, which is no pass of candidate {at['tree-b'][:12]}"),
    ]
    for record, says in attempts:
        w.append(record, "reopen a")
        refused(w, w.push("leap/ledger"), before, "L8", layout.reopen_path(SLICE, "a", 1),
                says)
        w.reset_ledger()


def test_a_reopen_naming_a_real_byte_change_on_the_spine_lands(fresh_world: World) -> None:
    """The server's admin changed src/a.py on the spine by hand (the hook never saw it):
    a reopen naming that commit and path is a real byte change, and lands."""
    w = fresh_world
    at = _merged(w)
    hand = by_hand(w, {"src/a.py": "A = 11\n"})
    w.append(reopen_record("a", at["tree-a"], "spine", hand, paths=("src/a.py",)), "reopen a")
    landed = w.push("leap/ledger")
    assert landed.returncode == 0, landed.stderr
