"""Issue 18 F1 in signed mode: an unsigned round reached the signed spine by being named as
the ``<old>`` of a ball branch. The server judged only the rounds after that ``<old>`` (S1),
and the spine merge took the pushed ball tip as judged; git's compare-and-swap then refused
the ball branch (the server never held that ``<old>``) while the merge landed, bringing the
unsigned round into the spine's history. A raw receive-pack client sends that push."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.hooks.rawpush import Command, raw_push
from tests.hooks.world import remote_refs, round_message
from tests.signing.world import SLICE, SignedWorld, signed_commit, signed_world
from tests.support import git
from tests.templates import Served

BALL_B = f"leap/ball/{SLICE}/b"


@pytest.fixture
def w(served: Served, monkeypatch: pytest.MonkeyPatch) -> Iterator[SignedWorld]:
    monkeypatch.delenv("LEAP_SIGNING_KEY", raising=False)
    with signed_world(served) as copy:
        yield copy


def _round(w: SignedWorld, n: int, key: str | None) -> str:
    git("checkout", "-q", BALL_B, cwd=w.work)
    sha = signed_commit(w.work, {"src/b.py": f"B = {20 + n}\n"},
                        round_message(f"b: round {n}", n, 1 if n == 3 else 0),
                        w.keys[key] if key else None)
    git("checkout", "-q", "main", cwd=w.work)
    return sha


def test_an_unsigned_round_named_as_the_old_tip_never_reaches_the_spine(w: SignedWorld
                                                                       ) -> None:
    w.build("b", {"src/b.py": "B = 20\n"}, "bob")  # round 1, bob's
    w.receipt("b", "bob", claim=True, round_no=1, outcome=0)
    unsigned = _round(w, 2, None)  # round 2: signed by no one (S1)
    w.receipt("b", "bob", claim=True, round_no=2, outcome=0)
    _round(w, 3, "bob")  # round 3, bob's again, the candidate
    tree = git("rev-parse", f"{BALL_B}^{{tree}}", cwd=w.work)
    w.grade("b", "carol", tree, round_no=3)
    w.lease("ivan")
    stored = w.push("leap/ledger")  # the proof is stored: a pass, the lease
    assert stored.returncode == 0, stored.stderr
    merge = w.merge("b", "ivan")
    spine = remote_refs(w.bare)["refs/heads/main"]
    before = remote_refs(w.bare)
    result = raw_push(w.work, w.bare, [
        Command(f"refs/heads/{BALL_B}", unsigned, git("rev-parse", BALL_B, cwd=w.work)),
        Command("refs/heads/main", spine, merge)])
    assert remote_refs(w.bare) == before, result.stderr
    assert f"[L8] refs/heads/{BALL_B}" in result.stderr and "names its old tip " \
        f"{unsigned[:12]}" in result.stderr, result.stderr
    # pushed as git pushes it, the unsigned round is judged and refused
    honest = w.push(BALL_B, "main")
    assert honest.returncode != 0
    assert f"[S1] refs/heads/{BALL_B} {unsigned[:12]}" in honest.stderr, honest.stderr
    assert remote_refs(w.bare) == before
