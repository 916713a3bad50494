"""Bypasses a blind review found in S1-S6, each pinned against the real remote: a fresh
signed project per test, since the attacks land records in the ledger."""

from __future__ import annotations

import pytest

from leapgit.signing.policy import fingerprint
from tests.hooks.world import remote_refs
from tests.signing.world import PRINCIPALS, SLICE, SignedWorld
from tests.support import git
from tests.templates import Served


def fp(world: SignedWorld, name: str) -> str:
    import base64

    text = world.keys[name].with_suffix(".pub").read_text().split()[1]
    return fingerprint(base64.b64decode(text))


def refused(w: SignedWorld, *refs: str) -> str:
    before = remote_refs(w.bare)
    result = w.push(*refs)
    assert result.returncode != 0, result.stderr
    assert remote_refs(w.bare) == before, "a refused push moved a remote ref"
    return result.stderr


def test_rounds_reached_only_through_the_spine_merge_are_checked(fresh: SignedWorld) -> None:
    # alice (builder and scorer) builds a but never pushes its branch, grades it herself
    # (the server cannot see her round yet), then the merge brings her round to the spine.
    w = fresh
    tree = w.build("a", {"src/a.py": "A = 10\n"}, "alice")
    w.receipt("a", "bob", claim=True)  # the ledger links no alice key to the round
    w.grade("a", "alice", tree)
    assert w.push("leap/ledger").returncode == 0
    w.lease("ivan")
    w.merge("a", "ivan")
    round_sha = git("rev-parse", f"leap/ball/{SLICE}/a", cwd=w.work)
    err = refused(w, "leap/ledger", "main")
    assert f"[S4] refs/heads/main {round_sha[:12]}: a round for s1/a signed by key " \
        f"{fp(w, 'alice')} (alice), which signed the " in err


def test_an_unsigned_round_reached_only_through_the_spine_merge(fresh: SignedWorld) -> None:
    w = fresh
    tree = w.build("a", {"src/a.py": "A = 10\n"}, None)
    w.grade("a", "carol", tree)
    w.lease("ivan")
    w.merge("a", "ivan")
    round_sha = git("rev-parse", f"leap/ball/{SLICE}/a", cwd=w.work)
    err = refused(w, "leap/ledger", "main")
    assert f"[S1] refs/heads/main {round_sha[:12]}: the commit is not signed" in err
    assert "a ball round needs a key with role builder" in err


def _unplaced_pass(w: SignedWorld, ball: str, candidate: str) -> tuple[dict[str, bytes],
                                                                       dict[str, bytes]]:
    """A pass set whose tribunal records sit under ``tribunal/<run>/`` with no slice or ball:
    (the tribunal records, the score record citing them)."""
    from leapgit.records import yamlio
    from tests.support import pass_files

    tip = git("rev-parse", f"leap/ball/{SLICE}/{ball}", cwd=w.work)
    files = pass_files(SLICE, ball, candidate, tip, w.base, run_id=f"t-loose-{ball}")
    tribunal, score = {}, {}
    for path, data in files.items():
        if "/tribunal/" not in path:
            score[path] = data
            continue
        raw = yamlio.loads(data, path)
        raw.pop("slice", None)
        raw.pop("ball", None)
        tribunal["tribunal/" + path.split("/tribunal/", 1)[1]] = yamlio.dumps(raw)
    (path, data), = score.items()
    raw = yamlio.loads(data, path)
    prov = raw["provenance"]
    prov["verdicts"] = ["tribunal/" + p.split("/tribunal/", 1)[1] for p in prov["verdicts"]]
    prov["summary"] = "tribunal/" + prov["summary"].split("/tribunal/", 1)[1]
    return tribunal, {path: yamlio.dumps(raw)}


def test_a_builder_cannot_sign_the_verdicts_its_pass_cites(fresh: SignedWorld) -> None:
    # alice builds a, then signs the tribunal's verdicts and summary (no slice or ball in
    # them); carol signs only the score record that cites them.
    w = fresh
    tree = w.build("a", {"src/a.py": "A = 10\n"}, "alice")
    assert w.push(f"leap/ball/{SLICE}/a").returncode == 0
    tribunal, score = _unplaced_pass(w, "a", tree)
    w.append(tribunal, "alice", "tribunal a")
    sha = w.append(score, "carol", "score a")
    err = refused(w, "leap/ledger")
    assert f"[S4] refs/heads/leap/ledger {sha[:12]} " in err
    assert f"signed by key {fp(w, 'alice')} (alice), which signed round commit" in err


def _broken_policy(w: SignedWorld) -> tuple[str, int]:
    policy = (w.work / ".leap/allowed_signers").read_text()
    return policy + "builder:eve not-a-key\n", len(policy.splitlines()) + 1


def test_an_admin_cannot_merge_a_policy_that_does_not_parse(fresh: SignedWorld) -> None:
    w = fresh
    text, line = _broken_policy(w)
    tree = w.build("p", {".leap/allowed_signers": text}, "root")
    w.grade("p", "carol", tree)
    w.lease("root")
    merge = w.merge("p", "root")
    err = refused(w, f"leap/ball/{SLICE}/p", "leap/ledger", "main")
    assert f"[S6] refs/heads/main {merge[:12]} .leap/allowed_signers: the new policy does " \
        f"not parse: line {line}:" in err
    # and the spine still takes pushes: it is not bricked
    w.reset()
    w.receipt("b", "bob", claim=True, outcome=0)
    assert w.push("leap/ledger").returncode == 0


def test_a_ball_round_with_a_policy_that_does_not_parse(fresh: SignedWorld) -> None:
    w = fresh
    text, line = _broken_policy(w)
    w.build("p", {".leap/allowed_signers": text}, "root")
    err = refused(w, f"leap/ball/{SLICE}/p")
    assert "[S6] refs/heads/leap/ball/s1/p" in err
    assert f"the new policy does not parse: line {line}:" in err


def test_no_admin_in_force_is_not_a_takeover(served: Served,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # the policy's only admin (root) is retired: bob must not make himself admin by writing
    # a policy whose admins then approve it.
    from tests.signing.world import RETIRED, build_signed_world, policy_text

    monkeypatch.delenv("LEAP_SIGNING_KEY", raising=False)
    monkeypatch.setitem(RETIRED, "root", "20200101Z")
    # a world of its own, built here (its policy retires root), served by the run's daemon
    w = build_signed_world(served.folder("no-admin"), served.daemon)
    text = policy_text(w.keys, {**PRINCIPALS, "bob": ["builder:bob", "admin:bob"]})
    tree = w.build("p", {".leap/allowed_signers": text}, "bob")
    w.grade("p", "carol", tree)
    w.lease("ivan")
    merge = w.merge("p", "ivan")
    err = refused(w, f"leap/ball/{SLICE}/p", "leap/ledger", "main")
    assert f"[S6] refs/heads/main {merge[:12]} .leap/allowed_signers: no admin in force" in err


def test_a_red_record_for_a_ball_signed_by_its_builder(fresh: SignedWorld) -> None:
    from leapgit.ledger import layout
    from leapgit.records import yamlio

    w = fresh
    w.build("a", {"src/a.py": "A = 10\n"}, "alice")
    assert w.push(f"leap/ball/{SLICE}/a").returncode == 0
    tip = git("rev-parse", f"leap/ball/{SLICE}/a", cwd=w.work)
    red = {"kind": "red", "format": 1, "slice": SLICE, "ball": "a", "red": 1, "commit": tip,
           "base": w.base, "tests": [{"path": "src/a.py", "blob": "absent"}],
           "proof": {"type": "red", "command": "false", "exit_code": 1},
           "recorded_at": "2024-01-01T00:00:00Z"}
    path = layout.red_path(SLICE, "a", 1)
    sha = w.append({path: yamlio.dumps(red)}, "alice", "red a")
    err = refused(w, "leap/ledger")
    assert f"[S4] refs/heads/leap/ledger {sha[:12]} {path}: a red for s1/a signed by key " \
        f"{fp(w, 'alice')} (alice)" in err


def test_an_empty_ledger_commit_needs_an_admin(fresh: SignedWorld) -> None:
    w = fresh
    key = w.keys["bob"]
    sha = git("-c", "gpg.format=ssh", "-c", f"user.signingkey={key}", "commit-tree", "-S",
              "-p", "leap/ledger", "-m", "nothing", "leap/ledger^{tree}", cwd=w.work)
    git("update-ref", "refs/heads/leap/ledger", sha, cwd=w.work)
    err = refused(w, "leap/ledger")
    assert f"[S3] refs/heads/leap/ledger {sha[:12]}: a ledger commit signed by key " \
        f"{fp(w, 'bob')} (bob), which lacks role admin (holds: builder)" in err


def test_a_builder_cannot_grade_with_a_second_key_under_the_same_name(fresh: SignedWorld,
                                                                      ) -> None:
    # alice signs the round with one key and the pass with another: two fingerprints, one
    # principal name (S4 compares the person, not only the key).
    w = fresh
    tree = w.build("a", {"src/a.py": "A = 10\n"}, "alice")
    assert w.push(f"leap/ball/{SLICE}/a").returncode == 0
    sha = w.grade("a", "alice-2", tree)
    err = refused(w, "leap/ledger")
    assert f"[S4] refs/heads/leap/ledger {sha[:12]} " in err
    assert f"signed by key {fp(w, 'alice-2')} (alice), which is alice, as key " \
        f"{fp(w, 'alice')}, which signed round commit" in err


def test_a_grader_cannot_build_with_a_second_key_under_the_same_name(fresh: SignedWorld,
                                                                     ) -> None:
    w = fresh
    tree = w.build("b", {"src/b.py": "B = 20\n"}, "bob")
    w.grade("b", "alice-2", tree)  # alice's scorer-only key grades bob's ball: allowed
    assert w.push(f"leap/ball/{SLICE}/b", "leap/ledger").returncode == 0
    from tests.signing.world import round_message, signed_commit

    git("checkout", "-q", f"leap/ball/{SLICE}/b", cwd=w.work)
    sha = signed_commit(w.work, {"src/b.py": "B = 21\n"}, round_message("b: 2", 2, 1),
                        w.keys["alice"])
    git("checkout", "-q", "main", cwd=w.work)
    err = refused(w, f"leap/ball/{SLICE}/b")
    assert f"[S4] refs/heads/leap/ball/s1/b {sha[:12]}: a round for s1/b signed by key " \
        f"{fp(w, 'alice')} (alice), which is alice, as key {fp(w, 'alice-2')}, which " \
        "signed the " in err
