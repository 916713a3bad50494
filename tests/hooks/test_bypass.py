"""The bypass matrix: every attempt is pushed past the client (`--no-verify`) to a real
remote served by `git daemon`, refused by its `pre-receive` with the named rule, and
leaves the remote's refs exactly as they were."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

from leapgit.ledger import layout
from tests.hooks.world import (
    SLICE,
    World,
    commit,
    forge_ledger_commit,
    remote_refs,
    round_message,
)
from tests.support import git


@pytest.fixture
def w(world: World) -> Iterator[World]:
    before = remote_refs(world.bare)
    yield world
    assert remote_refs(world.bare) == before, "a refused push changed the remote"
    git("checkout", "-q", "-f", "main", cwd=world.work)
    git("reset", "-q", "--hard", world.base, cwd=world.work)
    world.reset_ledger()


def refused(w: World, result: subprocess.CompletedProcess[str], *rules: str) -> None:
    assert result.returncode != 0, result.stdout + result.stderr
    assert "pre-receive hook declined" in result.stdout, result.stdout + result.stderr
    for rule in rules:
        assert f"remote: leap pre-receive:   [{rule}]" in result.stderr, result.stderr


def ball_branch(w: World, ball: str, start: str | None = None) -> None:
    git("checkout", "-q", "-B", f"leap/ball/{SLICE}/{ball}", start or w.base, cwd=w.work)


# the spine


def test_spine_commit_without_pass_record(w: World) -> None:
    sha = commit(w.work, {"README.md": "# changed on the spine\n"}, "straight to main")
    result = w.push("main")
    refused(w, result, "L8")
    assert sha[:12] in result.stderr and "not an integration merge" in result.stderr


def test_spine_merge_with_forged_pass_trailers(w: World) -> None:
    ball_branch(w, "a")
    commit(w.work, {"src/a.py": "A = 10\n"}, round_message("a: ten", 1, 1))
    git("checkout", "-q", "main", cwd=w.work)
    git("merge", "-q", "--no-ff", "-m", "integrate a\n\nLeap-Slice: s1\nLeap-Ball: a\n"
        "Leap-Outcome: 1\nLeap-Pass: yes", f"leap/ball/{SLICE}/a", cwd=w.work)
    result = w.push("main")
    refused(w, result, "L7", "L9")
    assert "holds no pass" in result.stderr


def test_spine_merge_naming_no_ball_is_told_the_integrator_s_way_and_the_lease(
        w: World) -> None:
    """A review: a merge whose trailers were left out is an integrator's merge gone wrong,
    not a change made outside an integration: its refusal says how a merge must look, not
    to take it off the spine, and the missing lease (L9) is said with it, so fixing the
    trailers alone does not meet a second refusal. A plain commit is told to take it off
    (tests/scoring/test_end_to_end.py)."""
    ball_branch(w, "a")
    commit(w.work, {"src/a.py": "A = 10\n"}, round_message("a: ten", 1, 1))
    git("checkout", "-q", "main", cwd=w.work)
    git("merge", "-q", "--no-ff", "-m", "integrate a", f"leap/ball/{SLICE}/a", cwd=w.work)
    result = w.push("main")
    refused(w, result, "L8", "L9")
    [line] = [ln for ln in result.stderr.splitlines() if "[L8]" in ln]
    assert "the merge names no ball" in line and "do: merge one passed ball per commit" in \
        line and "git reset --keep" not in line, line


def test_spine_merge_of_a_claimed_pass(w: World) -> None:
    ball_branch(w, "a")
    commit(w.work, {"src/a.py": "A = 10\n"}, round_message("a: ten", 1, 1))
    tree = w.tip(f"leap/ball/{SLICE}/a^{{tree}}")
    w.append(dict([w.receipt("a", 1, 1, claim=True, candidate=tree), w.lease(1, "take", "me")]))
    git("checkout", "-q", "main", cwd=w.work)
    git("merge", "-q", "--no-ff", "-m", "integrate a\n\nLeap-Slice: s1\nLeap-Ball: a",
        f"leap/ball/{SLICE}/a", cwd=w.work)
    result = w.push("main", "leap/ledger", f"leap/ball/{SLICE}/a")
    refused(w, result, "L7")
    assert "claim" in result.stderr


def test_spine_force_push(w: World) -> None:
    result = w.push(f"+{w.base}~1:refs/heads/main")
    refused(w, result, "L8")
    assert "force-push" in result.stderr


def test_spine_deletion(w: World) -> None:
    refused(w, w.push(":refs/heads/main"), "L8")


# the ledger


def test_ledger_deletion(w: World) -> None:
    result = w.push(":refs/heads/leap/ledger")
    refused(w, result, "L8")
    assert "cannot be deleted" in result.stderr


def test_ledger_rewrite(w: World) -> None:
    rewritten = git("commit-tree", "-p", "leap/ledger~1", "-m", "rewritten",
                    "leap/ledger^{tree}", cwd=w.work)
    result = w.push(f"+{rewritten}:refs/heads/leap/ledger")
    refused(w, result, "L8")
    assert "not a fast-forward" in result.stderr


def test_ledger_record_edited(w: World) -> None:
    path = layout.slice_path(SLICE)
    forge_ledger_commit(w, {path: b"kind: slice\n"})
    result = w.push("leap/ledger")
    refused(w, result, "L8")
    assert f"{path}: the commit edits an existing record" in result.stderr


def test_ledger_record_deleted(w: World) -> None:
    path = layout.throw_path(SLICE, "b", 1)
    forge_ledger_commit(w, {path: None})
    result = w.push("leap/ledger")
    refused(w, result, "L8")
    assert f"{path}: the commit deletes an existing record" in result.stderr


def test_ledger_fifth_round(w: World) -> None:
    rounds = [w.receipt("a", n, 0, claim=True) for n in range(1, 5)]
    w.append(dict(rounds))
    path, data = w.receipt("a", 4, 0, claim=True)
    fifth = data.replace(b"round: 4", b"round: 5")
    forge_ledger_commit(w, {path.replace("/4.yaml", "/5.yaml"): fifth})
    result = w.push("leap/ledger")
    refused(w, result, "L6")
    assert "no fifth round" in result.stderr


def test_ledger_record_at_the_wrong_path(w: World) -> None:
    _, data = w.receipt("a", 1, 0, claim=True)
    forge_ledger_commit(w, {"slices/s1/balls/b/episodes/1/receipts/1.yaml": data})
    result = w.push("leap/ledger")
    refused(w, result, "L8")
    assert "the record says it belongs at slices/s1/balls/a/" in result.stderr


def test_ledger_record_breaking_its_schema(w: World) -> None:
    forge_ledger_commit(w, {layout.throw_path(SLICE, "a", 2): b"kind: throw\nformat: 1\n"})
    result = w.push("leap/ledger")
    refused(w, result, "L8")
    assert "missing required field(s)" in result.stderr


def test_a_receipt_is_never_a_pass(w: World) -> None:
    tree = w.tip(f"{w.base}^{{tree}}")
    w.append(dict([w.receipt("a", 1, 1, claim=False, candidate=tree, provenance=False)]))
    result = w.push("leap/ledger")
    refused(w, result, "L7")
    assert "a receipt that is no claim says 1" in result.stderr


def test_pass_record_of_a_claim_never_recorded(w: World) -> None:
    """A pass grades a recorded claim of the episode, by its commit and candidate, as
    `leap score` writes it (L7): whole provenance alone is not enough."""
    from tests.support import pass_files

    tree = w.tip(f"{w.base}^{{tree}}")
    files = pass_files(SLICE, "a", tree, w.base, w.base)  # episode 1 is thrown, no round yet
    w.append(files)
    result = w.push("leap/ledger")
    refused(w, result, "L7")
    assert "the score grades round 1, but episode 1 of s1/a holds 0 recorded" in result.stderr
    assert "[L7.5]" not in result.stderr, result.stderr  # the chain itself is whole
    w.reset_ledger()
    other = "d" * 40  # a claim of another commit
    w.append(dict([w.receipt("a", 1, 1, claim=True, candidate="e" * 40, commit=other,
                             provenance=False)]))
    w.append(files)
    result = w.push("leap/ledger")
    refused(w, result, "L7")
    assert f"the score grades commit {w.base[:12]}, round 1 recorded {other[:12]}" \
        in result.stderr, result.stderr
    assert "the score grades candidate" in result.stderr, result.stderr


def test_pass_under_another_spec_version_than_thrown(w: World) -> None:
    """A score names the spec version its episode was thrown with: a pass under another one
    would skip the live-proof duty of the spec the candidate was built to (L7, review r8
    F2)."""
    from tests.support import pass_files

    w.append(dict([w.receipt("a", 1, 1, claim=True, provenance=False)]))
    w.append(pass_files(SLICE, "a", w.tip(f"{w.base}^{{tree}}"), w.base, w.base,
                        spec_version=2))
    result = w.push("leap/ledger")
    refused(w, result, "L7")
    assert "the score names spec version 2, episode 1 of s1/a was thrown with version 1" \
        in result.stderr, result.stderr
    assert "the score grades commit" not in result.stderr, result.stderr


def test_pass_record_without_its_linked_records(w: World) -> None:
    from leapgit.records import yamlio
    from tests.support import write_pass

    tree = w.tip(f"{w.base}^{{tree}}")
    with w.ledger() as ledger:
        write_pass(ledger, SLICE, "a", tree, w.base, w.base)
    path = layout.score_path(SLICE, "a", 1)
    data = yamlio.loads(w.ledger().view().read(path) or b"", path)
    w.reset_ledger()
    data["provenance"]["candidate"] = "f" * 40
    w.append({path: yamlio.dumps(data)})
    result = w.push("leap/ledger")
    refused(w, result, "L7.5")
    assert "the linked summary record" in result.stderr and "same hash" in result.stderr


def test_pass_reviewed_only_by_the_builders_family(w: World) -> None:
    """L7.3: at least two reviewers sit from families other than the builder's; a pass whose
    reviewers share the builder's family is no pass, however whole its chain (L7.5)."""
    from leapgit.records import yamlio
    from tests.support import claimed_round, pass_files

    tree, path = w.tip(f"{w.base}^{{tree}}"), layout.score_path(SLICE, "a", 1)
    with w.ledger() as ledger:
        files = claimed_round(ledger, SLICE, "a", tree, w.base, w.base, episode=1, rounds=1,
                              spec_version=1)
    files.update(pass_files(SLICE, "a", tree, w.base, w.base))
    data = yamlio.loads(files[path], path)
    for reviewer in data["provenance"]["reviewers"]:
        reviewer["family"] = "BuildFam"  # the builder's family, however it is spelled
    files[path] = yamlio.dumps(data)
    w.append(files)
    result = w.push("leap/ledger")
    refused(w, result, "L7.5")
    assert "0 reviewer(s) from families other than the builder's; at least 2 must sit " \
        "(L7.3)" in result.stderr, result.stderr


def test_second_concurrent_lease(w: World) -> None:
    w.append(dict([w.lease(1, "take", "alice")]))
    w.append(dict([w.lease(2, "take", "bob")]))
    result = w.push("leap/ledger")
    refused(w, result, "L9")
    assert "a second concurrent integrator lease" in result.stderr


# ball branches


def test_ball_file_out_of_scope(w: World) -> None:
    ball_branch(w, "a")
    commit(w.work, {"src/a.py": "A = 10\n", "src/b.py": "B = 0\n"}, round_message("a", 1))
    result = w.push(f"leap/ball/{SLICE}/a")
    refused(w, result, "L4")
    assert "src/b.py: outside the scope of ball s1/a" in result.stderr
    assert "src/a.py" not in result.stderr


def test_ball_out_of_scope_hidden_in_a_rename(w: World) -> None:
    ball_branch(w, "a")
    git("mv", "src/c.py", "src/new.py", cwd=w.work)  # src/new.py is in scope; src/c.py is not
    commit(w.work, {}, round_message("a: move", 1))
    result = w.push(f"leap/ball/{SLICE}/a")
    refused(w, result, "L4")
    assert "src/c.py: outside the scope" in result.stderr
    assert "src/new.py:" not in result.stderr


def test_ball_fifth_round_commit(w: World) -> None:
    ball_branch(w, "a")
    for n in range(1, 6):
        commit(w.work, {"src/a.py": f"A = {n}\n"}, round_message(f"a {n}", min(n, 4)))
    result = w.push(f"leap/ball/{SLICE}/a")
    refused(w, result, "L6")
    assert "round 4 cannot create round 5" in result.stderr


def test_ball_not_on_the_recorded_base(w: World) -> None:
    ball_branch(w, "a", start=f"{w.base}~1")
    commit(w.work, {"src/a.py": "A = 10\n"}, round_message("a", 1))
    result = w.push(f"leap/ball/{SLICE}/a")
    refused(w, result, "L5")
    assert f"does not descend from the base of throw episode 1, {w.base[:12]}" in result.stderr


def test_ball_merge_commit(w: World) -> None:
    ball_branch(w, "a")
    commit(w.work, {"src/a.py": "A = 10\n"}, round_message("a", 1))
    git("checkout", "-q", "-B", "side", w.base, cwd=w.work)
    commit(w.work, {"tests/test_a.py": "# side\n"}, "side")
    git("checkout", "-q", f"leap/ball/{SLICE}/a", cwd=w.work)
    git("merge", "-q", "--no-ff", "-m", round_message("a: merge", 2), "side", cwd=w.work)
    result = w.push(f"leap/ball/{SLICE}/a")
    refused(w, result, "L9")
    assert "merge only on the spine" in result.stderr


def test_branch_for_an_unknown_ball(w: World) -> None:
    ball_branch(w, "zzz")
    commit(w.work, {"src/a.py": "A = 10\n"}, round_message("zzz", 1))
    refused(w, w.push(f"leap/ball/{SLICE}/zzz"), "L4")


def test_commit_pushed_with_no_verify(w: World) -> None:
    ball_branch(w, "b")
    commit(w.work, {"src/b.py": "B = 20\n"}, "b: twenty, no receipt trailers")
    client = w.push(f"leap/ball/{SLICE}/b", verify=True)
    assert client.returncode != 0
    assert "leap pre-push:   [L6]" in client.stderr and "remote:" not in client.stderr
    result = w.push(f"leap/ball/{SLICE}/b")  # --no-verify: the client hook is skipped
    refused(w, result, "L6")
    assert "without its receipt trailers" in result.stderr


def test_one_violation_refuses_the_whole_push_and_lists_each(w: World) -> None:
    ball_branch(w, "b")
    commit(w.work, {"src/b.py": "B = 20\n"}, round_message("b", 1))  # fine on its own
    git("checkout", "-q", "-B", f"leap/ball/{SLICE}/a", w.base, cwd=w.work)
    commit(w.work, {"README.md": "x\n"}, round_message("a", 1))
    result = w.push(f"leap/ball/{SLICE}/b", f"leap/ball/{SLICE}/a", ":refs/heads/leap/ledger")
    refused(w, result, "L4", "L8")
    assert "push refused, 2 violations" in result.stderr
    assert f"refs/heads/leap/ball/{SLICE}/b" not in remote_refs(w.bare)


# the server's own settings


def test_config_on_the_head_branch_cannot_unprotect_the_spine(master_world: World) -> None:
    w = master_world
    assert git("symbolic-ref", "HEAD", cwd=w.bare) == "refs/heads/master"
    git("checkout", "-q", "-b", "master", w.base, cwd=w.work)
    commit(w.work, {".leap/config.yaml": "version: 1\nspine: other\n"
                    "ledger_ref: refs/heads/other-ledger\n"}, "a config naming other refs")
    assert w.push("master").returncode == 0  # an ordinary branch: any pusher may write it
    before = remote_refs(w.bare)
    result = w.push(f"+{w.base}~1:refs/heads/main", ":refs/heads/leap/ledger")
    refused(w, result, "L8")
    assert "force-push" in result.stderr and "the ledger branch cannot be deleted" in \
        result.stderr
    assert remote_refs(w.bare) == before


def test_lease_released_and_taken_in_someone_elses_name(fresh_world: World) -> None:
    w = fresh_world
    w.append(dict([w.lease(1, "take", "alice")]))
    as_alice = w.push("leap/ledger", url=str(w.bare), env={"REMOTE_USER": "alice"})
    assert as_alice.returncode == 0, as_alice.stderr
    ball_branch(w, "a")
    commit(w.work, {"src/a.py": "A = 10\n"}, round_message("a: ten", 1, 1))
    tree = w.tip(f"leap/ball/{SLICE}/a^{{tree}}")
    w.append(dict([w.receipt("a", 1, 1, claim=False, candidate=tree)]), "scored: a passes")
    w.append(dict([w.lease(1, "release", "alice"), w.lease(2, "take", "mallory")]))
    git("checkout", "-q", "main", cwd=w.work)
    git("merge", "-q", "--no-ff", "-m", "integrate s1/a\n\nLeap-Slice: s1\nLeap-Ball: a",
        f"leap/ball/{SLICE}/a", cwd=w.work)
    before = remote_refs(w.bare)
    result = w.push("leap/ledger", f"leap/ball/{SLICE}/a", "main", url=str(w.bare),
                    env={"REMOTE_USER": "mallory"})
    refused(w, result, "L9")
    release = layout.lease_path("main", 1, "release")
    assert f"{release}: pushed by 'mallory' (from REMOTE_USER), but the record names " \
        "holder 'alice'" in result.stderr, result.stderr
    assert remote_refs(w.bare) == before
    w.reset_ledger()
    w.append(dict([w.lease(1, "release", "mallory")]))
    result = w.push("leap/ledger", url=str(w.bare), env={"REMOTE_USER": "mallory"})
    refused(w, result, "L9")
    assert "lease 1 is held by 'alice'" in result.stderr, result.stderr
    assert remote_refs(w.bare) == before


# symlinks and gitlinks on scope paths


def commit_entry(w: World, path: str, mode: str, target: str, message: str) -> str:
    """Commit ``path`` as a raw tree entry: a symlink (120000) to ``target``, or a gitlink
    (160000) to the commit ``target``."""
    sha = git("hash-object", "-w", "--stdin", cwd=w.work, input=target.encode()) \
        if mode == "120000" else target
    git("update-index", "--add", "--cacheinfo", f"{mode},{sha},{path}", cwd=w.work)
    git("-c", f"core.hooksPath={w.work / '.no-hooks'}", "commit", "-q", "-m", message,
        cwd=w.work)
    return git("rev-parse", "HEAD", cwd=w.work)


@pytest.mark.parametrize(("mode", "target", "rule", "says"), [
    ("120000", "../../../../etc/passwd", "L2", "symlink 'src/new.py' leads outside the "
                                               "repository (../../../../etc/passwd)"),
    ("120000", "/etc/passwd", "L2", "symlink 'src/new.py' points outside the repository"),
    ("120000", "b.py", "L4", "a symlink to src/b.py, outside the scope of ball s1/a"),
    ("160000", "base", "L2", "a gitlink (submodule)"),
])
def test_ball_scope_path_as_symlink_or_gitlink(w: World, mode: str, target: str, rule: str,
                                               says: str) -> None:
    ball_branch(w, "a")
    commit_entry(w, "src/new.py", mode, w.base if target == "base" else target,
                 round_message("a: new", 1))
    result = w.push(f"leap/ball/{SLICE}/a")
    refused(w, result, rule)
    assert f"src/new.py: {says}" in result.stderr, result.stderr


def test_ball_symlink_inside_its_own_scope_is_accepted(fresh_world: World) -> None:
    w = fresh_world
    ball_branch(w, "a")
    sha = commit_entry(w, "src/new.py", "120000", "a.py", round_message("a: alias", 1))
    result = w.push(f"leap/ball/{SLICE}/a")
    assert result.returncode == 0, result.stderr
    assert remote_refs(w.bare)[f"refs/heads/leap/ball/{SLICE}/a"] == sha


def test_spine_merge_of_a_candidate_with_an_escaping_symlink(fresh_world: World) -> None:
    w = fresh_world
    ball_branch(w, "a")
    from tests.support import write_pass

    commit_entry(w, "src/new.py", "120000", "../../../../etc/passwd", round_message("a", 1, 1))
    tree = w.tip(f"leap/ball/{SLICE}/a^{{tree}}")
    w.append(dict([w.lease(1, "take", "me")]))
    with w.ledger() as ledger:  # even a full pass record cannot carry an escaping symlink
        write_pass(ledger, SLICE, "a", tree, w.tip(f"leap/ball/{SLICE}/a"), w.base)
    git("checkout", "-q", "main", cwd=w.work)
    git("merge", "-q", "--no-ff", "-m", "integrate a\n\nLeap-Slice: s1\nLeap-Ball: a",
        f"leap/ball/{SLICE}/a", cwd=w.work)
    assert w.push("leap/ledger").returncode == 0  # the proof is stored first (F1)
    before = remote_refs(w.bare)
    result = w.push("main")
    refused(w, result, "L2")
    assert "refs/heads/main" in result.stderr and "src/new.py: symlink" in result.stderr
    assert remote_refs(w.bare) == before


# round counting survives a rewritten ball branch (L6)


def four_rounds(w: World, ball: str = "a") -> list[str]:
    ball_branch(w, ball)
    return [commit(w.work, {"src/a.py": f"A = {n}\n"}, round_message(f"a {n}", n))
            for n in range(1, 5)]


def test_ball_branch_force_push_to_reset_its_rounds(fresh_world: World) -> None:
    w = fresh_world
    four_rounds(w)
    assert w.push(f"leap/ball/{SLICE}/a").returncode == 0
    ball_branch(w, "a")
    commit(w.work, {"src/a.py": "A = 5\n"}, round_message("a: a fifth try", 1))
    before = remote_refs(w.bare)
    result = w.push(f"+leap/ball/{SLICE}/a")
    refused(w, result, "L6")
    assert "a force-push" in result.stderr, result.stderr
    assert remote_refs(w.bare) == before


def test_ball_branch_deleted_and_recreated_to_reset_its_rounds(fresh_world: World) -> None:
    w = fresh_world
    rounds = four_rounds(w)
    w.append(dict(w.receipt("a", n, 0, claim=True, commit=sha)
                  for n, sha in enumerate(rounds, start=1)))
    assert w.push("leap/ledger", f"leap/ball/{SLICE}/a").returncode == 0
    assert w.push(f":refs/heads/leap/ball/{SLICE}/a").returncode == 0  # deletion stays allowed
    git("branch", "-q", "-m", f"leap/ball/{SLICE}/a", "recorded", cwd=w.work)
    ball_branch(w, "a")
    commit(w.work, {"src/a.py": "A = 5\n"}, round_message("a: a fifth try", 1))
    before = remote_refs(w.bare)
    result = w.push(f"leap/ball/{SLICE}/a")
    refused(w, result, "L6")
    assert "round 4 cannot create round 5" in result.stderr, result.stderr
    assert "4 recorded in the ledger" in result.stderr
    assert remote_refs(w.bare) == before
    again = w.push(f"recorded:refs/heads/leap/ball/{SLICE}/a")  # the recorded rounds: fine
    assert again.returncode == 0, again.stderr


def test_ball_branch_with_unrecorded_rounds_deleted_to_reset_them(fresh_world: World
                                                                   ) -> None:
    """Blind review r2 (reversibility): the force-push above is refused, but deleting the
    branch and creating it again did the same: the four rounds no receipt records were
    forgotten with the branch, and four new ones landed (eight in one episode). Deleting a
    ball branch that holds rounds the ledger does not record is refused; once the ledger
    that records them is pushed (`leap sync`, as the hint says), the deletion loses nothing."""
    from tests.support import leap

    w = fresh_world
    rounds = four_rounds(w)
    assert w.push(f"leap/ball/{SLICE}/a").returncode == 0
    before = remote_refs(w.bare)
    result = w.push(f":refs/heads/leap/ball/{SLICE}/a")
    refused(w, result, "L6")
    assert "4 round commit(s) no receipt records" in result.stderr, result.stderr
    assert "push the ledger that records them (`leap sync`)" in result.stderr, result.stderr
    assert remote_refs(w.bare) == before
    w.append(dict(w.receipt("a", n, 0, claim=True, commit=sha)
                  for n, sha in enumerate(rounds, start=1)))
    synced = leap("sync", cwd=w.work)
    assert synced.code == 0, synced
    assert w.push(f":refs/heads/leap/ball/{SLICE}/a").returncode == 0


def test_resumed_episode_counts_only_its_own_rounds(fresh_world: World) -> None:
    w = fresh_world
    rounds = four_rounds(w)
    w.append(dict([*(w.receipt("a", n, 0, claim=True, commit=sha)
                     for n, sha in enumerate(rounds, start=1)), w.checkpoint("a", 4)]))
    w.throw("a", episode=2)
    fifth = commit(w.work, {"src/a.py": "A = 5\n"}, round_message("a: episode 2", 1))
    assert w.push("leap/ledger").returncode == 0  # episode 2 is stored first (F1)
    result = w.push(f"leap/ball/{SLICE}/a")
    assert result.returncode == 0, result.stderr
    assert remote_refs(w.bare)[f"refs/heads/leap/ball/{SLICE}/a"] == fifth


# episodes (L3, L6)


def test_new_episode_thrown_while_the_previous_is_open(w: World) -> None:
    w.append(dict([w.receipt("a", 1, 0, claim=True)]))
    w.throw("a", episode=2)
    result = w.push("leap/ledger")
    refused(w, result, "L3")
    assert "episode 1 of s1/a is still in flight" in result.stderr, result.stderr


def test_round_after_a_refuse_in_the_same_commit(w: World) -> None:
    w.append(dict([w.receipt("a", 1, -1, claim=True), w.receipt("a", 2, 0, claim=True)]))
    result = w.push("leap/ledger")
    refused(w, result, "L6")
    assert "episode 1 of s1/a ended with a refuse (-1)" in result.stderr, result.stderr


def test_checkpoint_forged_to_close_an_episode_early(w: World) -> None:
    w.append(dict([w.receipt("a", 1, 0, claim=True), w.receipt("a", 2, 0, claim=True),
                   w.checkpoint("a", 1)]))
    w.throw("a", episode=2)
    result = w.push("leap/ledger")
    refused(w, result, "L6")
    assert "episode 1 of s1/a already ended with a checkpoint" in result.stderr, result.stderr
    assert "a checkpoint after round 1 of 2" in result.stderr, result.stderr


def test_a_stuck_builder_ends_its_episode_early_only_after_two_holds(w: World) -> None:
    """Issue 14 item 9 (L6): the same failure twice ends the episode at 0 (``STUCK``);
    after one hold, the round before it a claim, it is still an early close, refused."""
    from leapgit.records.types import STUCK

    w.append(dict([w.receipt("a", 1, 1, claim=True), w.receipt("a", 2, 0, claim=True),
                   w.checkpoint("a", 2, reason=STUCK)]))
    result = w.push("leap/ledger")
    refused(w, result, "L6")
    assert "a checkpoint after round 2 of 2" in result.stderr, result.stderr


def test_a_stuck_checkpoint_over_a_gap_is_refused_not_a_crash(w: World) -> None:
    """Blind review r3: a STUCK checkpoint whose episode holds only its last receipt is
    refused with the rule id, never an internal error."""
    from leapgit.records.types import STUCK

    w.append(dict([w.receipt("a", 2, 0, claim=True), w.checkpoint("a", 2, reason=STUCK)]))
    result = w.push("leap/ledger")
    refused(w, result, "L6")
    assert "internal error" not in result.stderr.lower(), result.stderr
    assert "a checkpoint after round 2 of 1" in result.stderr, result.stderr


def test_a_stuck_builders_early_checkpoint_is_taken(fresh_world: World) -> None:
    """After two holds the same failure's checkpoint ends the episode at round 2, and the
    next episode is thrown from it (issue 14 item 9)."""
    from leapgit.records.types import STUCK

    w = fresh_world
    w.append(dict([w.receipt("a", 1, 0, claim=True), w.receipt("a", 2, 0, claim=True),
                   w.checkpoint("a", 2, reason=STUCK)]))
    w.throw("a", episode=2)
    result = w.push("leap/ledger")
    assert result.returncode == 0, result.stderr


# refs pointed at something other than a commit


@pytest.mark.parametrize("ref", ["refs/heads/main", "refs/heads/leap/ledger",
                                 f"refs/heads/leap/ball/{SLICE}/a"])
@pytest.mark.parametrize("kind", ["blob", "tag"])
def test_protected_ref_pointed_at_a_non_commit(w: World, ref: str, kind: str) -> None:
    if kind == "blob":
        sha = git("hash-object", "-w", "--stdin", cwd=w.work, input=b"not a commit\n")
    else:
        git("tag", "-f", "-a", "-m", "an annotated tag", "t1", w.base, cwd=w.work)
        sha = w.tip("t1")
    result = w.push(f"+{sha}:{ref}")
    git("tag", "-d", "t1", cwd=w.work, check=False)
    rule = "L4" if "/ball/" in ref else "L8"
    refused(w, result, rule)
    assert f"[{rule}] {ref} {sha[:12]}: points at a {kind}, not a commit" in result.stderr, \
        result.stderr
    assert "internal error" not in result.stderr


def test_pass_record_without_a_red(w: World) -> None:
    """Issue 6, finding 3: a pass with no red commit is no pass (T7.1)."""
    from leapgit.records import yamlio
    from tests.support import write_pass

    tree = w.tip(f"{w.base}^{{tree}}")
    with w.ledger() as ledger:
        write_pass(ledger, SLICE, "a", tree, w.base, w.base)
    path = layout.score_path(SLICE, "a", 1)
    data = yamlio.loads(w.ledger().view().read(path) or b"", path)
    w.reset_ledger()
    data["provenance"]["red"] = None
    w.append({path: yamlio.dumps(data)})
    result = w.push("leap/ledger")
    refused(w, result, "L7.5")
    assert "names no red commit" in result.stderr


def test_ball_branch_of_an_abandoned_slice_deletes_with_unrecorded_rounds(fresh_world: World
                                                                          ) -> None:
    """Once the slice is given up no round of it counts: its branches may go."""
    from tests.support import leap

    w = fresh_world
    four_rounds(w)
    assert w.push(f"leap/ball/{SLICE}/a").returncode == 0
    git("checkout", "-q", "main", cwd=w.work)
    given_up = leap("slice", "abandon", SLICE, "--reason", "superseded", cwd=w.work)
    assert given_up.code == 0, given_up
    assert w.push("leap/ledger").returncode == 0
    result = w.push(f":refs/heads/leap/ball/{SLICE}/a")
    assert result.returncode == 0, result.stderr
    assert f"refs/heads/leap/ball/{SLICE}/a" not in remote_refs(w.bare)
