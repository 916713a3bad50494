"""A worker counts rounds by the server's cap (L6): a clone whose own config sets another
`round_limit` than the spine's, which the server judges by, would end episodes the server
still counts open, and its next throw would be refused for good. The worker says so before
it claims anything; set as the hint says, it builds."""

from __future__ import annotations

from leapgit.records import yamlio
from tests.loop import workers_world as ww
from tests.support import GitDaemon
from tests.tribunal.jurors import JurorServer


def test_a_worker_with_a_round_limit_of_its_own_claims_nothing_and_its_hint_leads_on(
        daemon: GitDaemon, jurors: JurorServer) -> None:
    w = ww.published(daemon, jurors, "worker-cap")
    clone = w.clone("capped")
    path = clone / ".leap" / "config.yaml"
    cfg = yamlio.loads(path.read_bytes(), str(path))
    path.write_bytes(yamlio.dumps({**cfg, "round_limit": 2}))
    refused = w.leap("worker", "--remote", "origin", "--name", "capped", "--once",
                     cwd=clone)
    assert refused.code == 2, refused
    assert "round_limit is 2 here, but the server judges rounds by the spine's config, " \
        "which gives 4 [L6]" in refused.err, refused
    assert ww.claim_files(w) == []  # nothing claimed
    path.write_bytes(yamlio.dumps({**cfg, "round_limit": 4}))  # the hint
    built = w.leap("worker", "--remote", "origin", "--name", "capped", "--once", cwd=clone)
    assert built.code == 0, built
    assert ww.claim_files(w), "claimed once set as the server judges"
