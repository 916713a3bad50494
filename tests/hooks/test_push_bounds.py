"""Red team round 2, resource bounds of `pre-receive`: a ledger commit of 10^5 records cost
the hook 95 s and 210 MB (each record parsed and schema-checked, each over-numbered round
refused on its own) and answered with 99,998 lines (22 MB) of refusals. A commit may add
at most ``layout.MAX_RECORDS``, counted before any is parsed, and a report shows the first
``push.MAX_SHOWN`` refusals with the count of the rest."""

from __future__ import annotations

import pytest

from leapgit.ledger import layout, leases
from leapgit.rules.push import MAX_SHOWN
from tests.hooks.world import SLICE, World, forge_ledger_commit, remote_refs


def _receipts(numbers: range) -> dict[str, bytes]:
    """Receipts of ball a's first episode, one a round number: every one past round four."""
    return {layout.receipt_path(SLICE, "a", 1, n): (
        f"kind: receipt\nformat: 1\nslice: {SLICE}\nball: a\nepisode: 1\nround: {n}\n"
        "outcome: 0\nevidence: x\nrecorded_at: '2024-01-01T00:00:00Z'\nclaim: true\n").encode()
        for n in numbers}


def test_a_ledger_commit_of_too_many_records_is_one_line(fresh_world: World) -> None:
    w = fresh_world
    forge_ledger_commit(w, _receipts(range(5, 6 + layout.MAX_RECORDS)), "bulk")
    before = remote_refs(w.bare)
    res = w.push("leap/ledger")
    assert res.returncode != 0 and remote_refs(w.bare) == before
    lines = [ln for ln in res.stderr.splitlines() if "leap pre-receive:   [" in ln]
    assert len(lines) == 1, res.stderr[:2000]
    assert "[L8] refs/heads/leap/ledger" in lines[0] and \
        f"changes {layout.MAX_RECORDS + 1} ledger files, more than the " \
        f"{layout.MAX_RECORDS} records one commit may add" in lines[0], lines


def test_a_report_shows_the_first_refusals_and_counts_the_rest(fresh_world: World) -> None:
    w = fresh_world
    forge_ledger_commit(w, _receipts(range(5, 5 + MAX_SHOWN + 10)), "sixty fifth rounds")
    before = remote_refs(w.bare)
    res = w.push("leap/ledger")
    assert res.returncode != 0 and remote_refs(w.bare) == before
    assert f"push refused, {MAX_SHOWN + 10} violations" in res.stderr
    lines = [ln for ln in res.stderr.splitlines() if "leap pre-receive:   [L6]" in ln]
    assert len(lines) == MAX_SHOWN, res.stderr[:2000]
    assert f"... and 10 more violations (the first {MAX_SHOWN} shown)" in res.stderr



def _lease_commits(w: World, first: int, count: int) -> None:
    """``count`` ledger commits, each a lease record: leases taken and given back in turn,
    from lease ``first``."""
    from leapgit.records import yamlio
    from leapgit.records.leases import LeaseRecord

    for i in range(count):
        number, action = first + i // 2, ("take", "release")[i % 2]
        rec = LeaseRecord("main", number, action, "integrator", "2024-01-01T00:00:00Z")
        forge_ledger_commit(w, {layout.lease_path("main", number, action):
                                yamlio.dumps(rec.to_dict())}, f"lease {number} {action}")


def test_a_push_of_many_lease_commits_is_judged_by_the_leases_each_names(
        fresh_world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each lease record's check read every lease of the spine, in a view the push kept for
    its commit: 10^4 lease commits in one push (a ~1 MB pack) ran the hook past 6 minutes
    and 6.5 GB before it was killed. A lease record's check reads that lease and the one
    before it, however many came before (counted, not timed: speed is measured in
    tests/benchmarks); a push of 1,200 lease commits is judged and taken."""
    w = fresh_world
    _lease_commits(w, 1, 1200)
    res = w.push("leap/ledger")
    assert res.returncode == 0, res.stderr[:2000]
    read: list[int] = []
    real = leases._read

    def counted(view: object, spine: str, number: int, action: str) -> object:
        read.append(number)
        return real(view, spine, number, action)  # type: ignore[arg-type]

    monkeypatch.setattr(leases, "_read", counted)
    with w.ledger() as ledger:
        view = ledger.require()
        assert leases.lease_problems(view, "main", 600) == []
        assert sorted(set(read)) == [599, 600], read
        read.clear()
        assert leases.lease_problems(view, "main") == []  # the audit: every lease
        assert len(set(read)) == 600, len(set(read))
