"""Bypasses a blind review found in S1-S6, each pinned against the real remote: a fresh
signed project per test, since the attacks land records in the ledger."""

from __future__ import annotations

from leapgit.signing.policy import fingerprint
from tests.hooks.world import remote_refs
from tests.signing.world import SLICE, SignedWorld
from tests.support import git


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
