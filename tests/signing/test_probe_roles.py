"""Issue 17 (S3): a tribunal probe record (`tribunal/probes/<probe>.yaml`) needs the scorer
or admin role on a server that requires signatures: a scorer's is taken, a builder's is
refused with the rule id and the refs unchanged."""

from __future__ import annotations

from leapgit.ledger import layout
from leapgit.records import yamlio
from leapgit.records.probe import ProbeRecord, RungProbe
from tests.hooks.world import remote_refs
from tests.signing.world import NOW, SignedWorld


def _probe(probe_id: str) -> dict[str, bytes]:
    entry = RungProbe("r1", "openai", "fam", "model http://127.0.0.1:9 m", True, "answered",
                      "refuse: refused with 1 finding(s)", 0.1, json=True, footer=True,
                      said="refuse", caught=True)
    rec = ProbeRecord(probe_id, NOW, "defect", (entry,))
    return {layout.probe_path(probe_id): yamlio.dumps(rec.to_dict())}


def test_a_scorer_records_a_probe_and_a_builder_may_not(fresh: SignedWorld) -> None:
    w = fresh
    before = remote_refs(w.bare)
    sha = w.append(_probe("20260101T000000Z-aaaaaa"), "bob", "probe")
    refused = w.push("leap/ledger")
    assert refused.returncode != 0 and remote_refs(w.bare) == before, refused.stderr
    assert f"[S3] refs/heads/leap/ledger {sha[:12]} " \
        f"{layout.probe_path('20260101T000000Z-aaaaaa')}: " in refused.stderr, refused.stderr
    w.reset()
    w.append(_probe("20260101T000001Z-bbbbbb"), "carol", "probe")
    landed = w.push("leap/ledger")
    assert landed.returncode == 0, landed.stderr
