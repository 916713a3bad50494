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
