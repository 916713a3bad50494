"""Issue 16 item 4, blind review (lens: the server is the authority): "with signing on, a
claim names the worker's key and pre-receive checks the round commits and receipts are
signed by it". Before, the role table (``signing.roles``) had no ``claim`` kind, so a
claim needed ``admin`` (no builder could claim a published ball under signing), and no
S-rule bound a claim's ``key`` to the key that signs its receipts. Round commits on the
ball branch are bound to it too. Real signed pushes to a real bare repository
with the real ``pre-receive``."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from leapgit.ledger import layout
from leapgit.records import yamlio
from leapgit.records.claims import ClaimRecord
from leapgit.records.types import Receipt, ThrowRecord
from leapgit.timeutil import iso_at, now_iso
from tests.signing.world import NOW, SLICE, SignedWorld, signed_world
from tests.support import leap
from tests.templates import Served

BALL = "b"


@pytest.fixture
def sw(served: Served, monkeypatch: pytest.MonkeyPatch) -> Iterator[SignedWorld]:
    """The signed project with ball b not thrown yet; the integrator publishes it here."""
    monkeypatch.delenv("LEAP_SIGNING_KEY", raising=False)
    with signed_world(served, key="signed-claims", balls=("a", "p")) as w:
        rec = ThrowRecord(SLICE, BALL, 1, 1, w.base, f"leap/ball/{SLICE}/{BALL}", NOW,
                          published=True)
        w.append({layout.throw_path(SLICE, BALL, 1): yamlio.dumps(rec.to_dict())}, "ivan",
                 "publish b")
        res = w.push("leap/ledger")
        assert res.returncode == 0, res.stderr
        yield w


def fingerprint(key: Path) -> str:
    out = subprocess.run(["ssh-keygen", "-lf", f"{key}.pub"], capture_output=True, text=True,
                         check=True).stdout
    return out.split()[1]


def take(w: SignedWorld, holder: str, signer: str, claim: int = 1
         ) -> subprocess.CompletedProcess[str]:
    rec = ClaimRecord(SLICE, BALL, 1, claim, "take", holder, now_iso(),
                      claimed_until=iso_at(time.time() + 60),
                      key=fingerprint(w.keys[signer]))
    w.append({layout.claim_path(SLICE, BALL, 1, claim, "take"): yamlio.dumps(rec.to_dict())},
             signer, "claim b")
    return w.push("leap/ledger")


def test_a_builder_claims_a_published_ball_with_its_own_key(sw: SignedWorld) -> None:
    res = take(sw, "bob", "bob")
    assert res.returncode == 0, res.stderr


def test_a_claim_naming_another_key_or_renewed_by_another_key_is_refused(
        sw: SignedWorld) -> None:
    rec = ClaimRecord(SLICE, BALL, 1, 1, "take", "bob", now_iso(),
                      claimed_until=iso_at(time.time() + 60), key=fingerprint(sw.keys["alice"]))
    sw.append({layout.claim_path(SLICE, BALL, 1, 1, "take"): yamlio.dumps(rec.to_dict())},
              "bob", "claim b")
    res = sw.push("leap/ledger")
    assert res.returncode == 1 and "[S3]" in res.stderr and "names key" in res.stderr, \
        res.stderr
    sw.reset()
    assert take(sw, "bob", "bob").returncode == 0
    renew = ClaimRecord(SLICE, BALL, 1, 1, "renew", "bob", now_iso(),
                        claimed_until=iso_at(time.time() + 60), renewal=1)
    sw.append({layout.claim_path(SLICE, BALL, 1, 1, "renew", 1):
               yamlio.dumps(renew.to_dict())}, "alice", "renew b")
    res = sw.push("leap/ledger")
    assert res.returncode == 1 and "was taken by key" in res.stderr, res.stderr


def test_a_receipt_in_the_holder_s_name_signed_by_another_builder_is_refused(
        sw: SignedWorld) -> None:
    res = take(sw, "root", "root")  # root holds admin (and builder): its claim lands today
    assert res.returncode == 0, res.stderr
    rec = Receipt(SLICE, BALL, 1, 1, 0, "tried", NOW, claim=True, worker="root")
    sw.append({layout.receipt_path(SLICE, BALL, 1, 1): yamlio.dumps(rec.to_dict())}, "alice",
              "round 1 of b")
    res = sw.push("leap/ledger")
    assert res.returncode == 1 and "claim" in res.stderr, res.stderr


def test_a_round_commit_signed_by_another_builder_than_the_claim_s_is_refused(
        sw: SignedWorld) -> None:
    res = take(sw, "bob", "bob")
    assert res.returncode == 0, res.stderr
    sw.build(BALL, {"src/b.py": "B = 20\n"}, "alice")
    res = sw.push(f"leap/ball/{SLICE}/{BALL}")
    assert res.returncode == 1 and "[S3]" in res.stderr and "claim 1" in res.stderr \
        and "held by 'bob'" in res.stderr, res.stderr


def test_a_round_commit_signed_by_the_claim_s_key_is_accepted(sw: SignedWorld) -> None:
    res = take(sw, "bob", "bob")
    assert res.returncode == 0, res.stderr
    sw.build(BALL, {"src/b.py": "B = 20\n"}, "bob")
    res = sw.push(f"leap/ball/{SLICE}/{BALL}")
    assert res.returncode == 0, res.stderr


def test_the_audit_keeps_a_round_made_under_an_earlier_claim_once_another_holds_the_ball(
        sw: SignedWorld) -> None:
    """Blind review: bob's round, signed under his claim 1, stays his once he gave the ball
    back and alice holds claim 2; the audit judges it by the claim it was made under (the
    server did, at its push), not by the claim live at the end of history."""
    assert take(sw, "bob", "bob").returncode == 0
    sw.build(BALL, {"src/b.py": "B = 20\n"}, "bob")
    res = sw.push(f"leap/ball/{SLICE}/{BALL}")
    assert res.returncode == 0, res.stderr
    rel = ClaimRecord(SLICE, BALL, 1, 1, "release", "bob", now_iso(), reason="done")
    sw.append({layout.claim_path(SLICE, BALL, 1, 1, "release"): yamlio.dumps(rel.to_dict())},
              "bob", "give b back")
    assert sw.push("leap/ledger").returncode == 0
    res = take(sw, "alice", "alice", claim=2)
    assert res.returncode == 0, res.stderr
    audited = leap("audit-signatures", cwd=sw.work)
    assert "a round of" not in audited.out + audited.err, audited
    assert audited.code == 0, audited
