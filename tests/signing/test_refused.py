"""What the server refuses when the spine's config requires signatures (S1-S6). Each test
pushes to the real remote behind `git daemon` and checks the refusal names the rule, the
commit, the key's fingerprint and the role it lacked; the remote's refs never move."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from leapgit.ledger import layout
from leapgit.signing.policy import fingerprint
from tests.hooks.world import remote_refs
from tests.signing.world import SLICE, SignedWorld
from tests.support import git


def fp(world: SignedWorld, name: str) -> str:
    import base64

    text = world.keys[name].with_suffix(".pub").read_text().split()[1]
    return fingerprint(base64.b64decode(text))


@pytest.fixture
def w(world: SignedWorld) -> Iterator[SignedWorld]:
    yield world
    world.reset()


def refused(w: SignedWorld, *refs: str) -> str:
    before = remote_refs(w.bare)
    result = w.push(*refs)
    assert result.returncode != 0, result.stderr
    assert remote_refs(w.bare) == before, "a refused push moved a remote ref"
    return result.stderr


def test_unsigned_ledger_commit(w: SignedWorld) -> None:
    sha = w.receipt("a", None, claim=True, outcome=0)
    err = refused(w, "leap/ledger")
    assert f"[S1] refs/heads/leap/ledger {sha[:12]}" in err
    assert "the commit is not signed" in err


def test_record_signed_by_a_key_outside_the_policy(w: SignedWorld) -> None:
    sha = w.receipt("a", "mallory", claim=True, outcome=0)
    err = refused(w, "leap/ledger")
    assert f"[S2] refs/heads/leap/ledger {sha[:12]}" in err
    assert f"key {fp(w, 'mallory')} is not in the policy" in err


def test_a_record_needs_its_role(w: SignedWorld) -> None:
    sha = w.lease("bob")
    err = refused(w, "leap/ledger")
    assert f"[S3] refs/heads/leap/ledger {sha[:12]} {layout.lease_path('main', 1, 'take')}" in err
    assert f"key {fp(w, 'bob')} (bob), which lacks role integrator (holds: builder)" in err


def test_a_builder_key_cannot_grade_even_before_its_round_is_pushed(w: SignedWorld) -> None:
    w.build("a", {"src/a.py": "A = 11\n"}, "alice")
    tree = git("rev-parse", f"leap/ball/{SLICE}/a^{{tree}}", cwd=w.work)
    w.grade("a", "alice", tree)
    err = refused(w, f"leap/ball/{SLICE}/a", "leap/ledger")
    assert "[S4]" in err and fp(w, "alice") in err


def test_a_pass_for_a_ball_signed_by_its_builder(w: SignedWorld) -> None:
    # alice holds builder and scorer: she may grade bob's ball, never her own (S4).
    tree = w.build("a", {"src/a.py": "A = 10\n"}, "alice")
    assert w.push(f"leap/ball/{SLICE}/a").returncode == 0
    sha = w.grade("a", "alice", tree)
    err = refused(w, "leap/ledger")
    assert f"[S4] refs/heads/leap/ledger {sha[:12]}" in err
    assert f"signed by key {fp(w, 'alice')} (alice), which signed round commit" in err
    assert "lacks the role of an independent scorer" in err


def test_a_spine_merge_signed_by_a_non_integrator(w: SignedWorld) -> None:
    tree = w.build("b", {"src/b.py": "B = 20\n"}, "bob")
    w.grade("b", "carol", tree)
    w.lease("ivan")
    merge = w.merge("b", "bob")
    err = refused(w, f"leap/ball/{SLICE}/b", "leap/ledger", "main")
    assert f"[S3] refs/heads/main {merge[:12]}: a spine merge signed by key {fp(w, 'bob')}" in err
    assert "lacks role integrator" in err


def test_lease_and_merge_by_different_integrators(w: SignedWorld) -> None:
    tree = w.build("b", {"src/b.py": "B = 21\n"}, "bob")
    w.grade("b", "carol", tree)
    w.lease("ivan")
    merge = w.merge("b", "irene")
    # the ledger first: the server judges the spine against the ledger it
    # stores (F1)
    assert w.push("leap/ledger").returncode == 0
    err = refused(w, f"leap/ball/{SLICE}/b", "main")
    assert f"[S5] refs/heads/main {merge[:12]}: a spine merge signed by key {fp(w, 'irene')}" \
        in err
    assert f"lease 1 was taken by key {fp(w, 'ivan')}" in err
    assert err.count("[S") == 1, err


def test_an_unsigned_spine_merge(w: SignedWorld) -> None:
    tree = w.build("b", {"src/b.py": "B = 22\n"}, "bob")
    w.grade("b", "carol", tree)
    w.lease("ivan")
    merge = w.merge("b", None)
    err = refused(w, f"leap/ball/{SLICE}/b", "leap/ledger", "main")
    assert f"[S1] refs/heads/main {merge[:12]}: the commit is not signed" in err
    assert "needs a key with role integrator" in err


def test_a_policy_change_signed_by_a_non_admin(w: SignedWorld) -> None:
    policy = (w.work / ".leap/allowed_signers").read_text()
    tree = w.build("p", {".leap/allowed_signers": policy + "# bob was here\n"}, "bob")
    w.grade("p", "carol", tree)
    w.lease("ivan")
    merge = w.merge("p", "ivan")
    err = refused(w, f"leap/ball/{SLICE}/p", "leap/ledger", "main")
    assert f"[S6] refs/heads/main {merge[:12]} .leap/allowed_signers: a policy change not " \
        "signed by an admin key" in err
    assert f"signed by key {fp(w, 'ivan')} (ivan), which lacks role admin" in err
    assert f"signed by key {fp(w, 'bob')} (bob), which lacks role admin" in err
    assert err.count("[S") == 1, err


def test_a_key_past_its_valid_before(w: SignedWorld) -> None:
    sha = w.receipt("b", "olga", claim=True, outcome=0)
    err = refused(w, "leap/ledger")
    assert f"[S2] refs/heads/leap/ledger {sha[:12]}" in err
    assert f"key {fp(w, 'olga')} is not valid at" in err


def test_content_altered_after_signing(w: SignedWorld) -> None:
    from dulwich.objects import Commit
    from dulwich.repo import Repo

    signed = w.receipt("b", "bob", claim=True, outcome=0)
    with Repo(str(w.work / ".git")) as repo:
        good: Commit = repo[signed.encode()]  # type: ignore[assignment]
        forged = good.copy()
        forged.message = good.message.replace(b"receipt b", b"receipt b (pass!)")
        repo.object_store.add_object(forged)
        repo.refs[b"refs/heads/leap/ledger"] = forged.id
    err = refused(w, "leap/ledger")
    sha = forged.id.decode()
    assert f"[S1] refs/heads/leap/ledger {sha[:12]}" in err
    assert f"the signature by {fp(w, 'bob')} does not match the commit's bytes: its content " \
        "was altered after signing" in err


def test_an_unsigned_ball_round(w: SignedWorld) -> None:
    w.build("b", {"src/b.py": "B = 23\n"}, None)
    err = refused(w, f"leap/ball/{SLICE}/b")
    assert "[S1] refs/heads/leap/ball/s1/b" in err and "needs a key with role builder" in err


def test_a_grader_cannot_build_the_ball_afterwards(w: SignedWorld) -> None:
    # alice grades bob's candidate of b (allowed alone), then pushes a round of b herself.
    tree = w.build("b", {"src/b.py": "B = 24\n"}, "bob")
    w.grade("b", "alice", tree)
    assert w.push(f"leap/ball/{SLICE}/b", "leap/ledger").returncode == 0
    git("checkout", "-q", f"leap/ball/{SLICE}/b", cwd=w.work)
    from tests.signing.world import round_message, signed_commit

    sha = signed_commit(w.work, {"src/b.py": "B = 25\n"}, round_message("b: 2", 2, 1),
                        w.keys["alice"])
    git("checkout", "-q", "main", cwd=w.work)
    err = refused(w, f"leap/ball/{SLICE}/b")
    assert f"[S4] refs/heads/leap/ball/s1/b {sha[:12]}: a round for s1/b signed by key " \
        f"{fp(w, 'alice')} (alice), which signed the " in err
    assert "lacks the role of an independent builder" in err
