"""Red team round 2: every rule's ancestry (``Objects.is_ancestor``) answers as git does,
whatever the commit dates say."""

from __future__ import annotations

from tests.hooks.world import World, forge_ledger_commit, remote_refs


def test_ledger_commits_dated_before_the_servers_tip_are_a_fast_forward(
        fresh_world: World) -> None:
    """A clock behind the server's (another machine, five minutes off): two ledger commits
    dated before the stored tip. dulwich's ``can_fast_forward`` skips every commit dated
    before the old tip on its way down, so the server called the push "not a fast-forward"
    (L8) while git, and `leap sync`, called it one: no replay could land it. ``Objects
    .is_ancestor`` (every rule's ancestry) answers as git does."""
    w = fresh_world
    first, data = w.receipt("a", 1, 0, claim=True)
    forge_ledger_commit(w, {first: data}, "round 1")  # dated 2023, the tip is dated now
    second, data = w.receipt("a", 2, 0, claim=True)
    tip = forge_ledger_commit(w, {second: data}, "round 2")
    res = w.push("leap/ledger")
    assert res.returncode == 0, res.stderr
    assert remote_refs(w.bare)["refs/heads/leap/ledger"] == tip
