"""Blind review (issue 17, lens correctness; T2): `leap tribunal rungs` says a lens has a live
rung only when it can sit. A lens whose *required* verifier has no live rung HALTs at the
convening (exit 3), so the matrix must say so too (exit 3, the lens named, its verifier
ladder shown), never "every lens has a live rung"."""

from __future__ import annotations

import json

from tests.support import leap
from tests.tribunal.conftest import Repo, rung
from tests.tribunal.jurors import JurorServer
from tests.tribunal.test_probe import script


def test_a_required_verifier_with_no_live_rung_is_a_dead_lens(repo: Repo) -> None:
    with JurorServer("openai", script) as server:
        repo.config([rung("openai-ok", "openai", server.url, timeout=1),
                     rung("check-prose", "openai", server.url, timeout=1, tiers=["generalist"],
                          cost=9)],
                    verifiers=[{"lens": "telemetry", "rungs": ["check-prose"]}],
                    required_verifiers=["telemetry"])
        probed = leap("tribunal", "rungs", "--probe", "--json", cwd=repo.root)
        text = leap("tribunal", "rungs", cwd=repo.root)
        convened = repo.convene()
    assert convened.decision.exit_code == 3 and convened.routing.halted == ("telemetry",)
    assert probed.code == 3, probed
    data = json.loads(probed.out)
    assert data["dead"] == ["telemetry"]
    telemetry = next(x for x in data["lenses"] if x["lens"] == "telemetry")
    assert telemetry["verifier"] == {"required": True, "ladder": [],
                                     "skipped": ["check-prose"]}
    assert text.code == 3, text
    assert "no live rung for: telemetry (exit 3)" in text.out
    assert "verifier (required): (none: HALT)   (skipped: check-prose)" in text.out


def test_an_optional_verifier_with_no_live_rung_leaves_the_lens_live(repo: Repo) -> None:
    with JurorServer("openai", script) as server:
        repo.config([rung("openai-ok", "openai", server.url, timeout=1),
                     rung("check-prose", "openai", server.url, timeout=1, tiers=["generalist"],
                          cost=9)],
                    verifiers=[{"lens": "telemetry", "rungs": ["check-prose"]}])
        probed = leap("tribunal", "rungs", "--probe", cwd=repo.root)
    assert probed.code == 0, probed
    assert "verifier: (none: UNVERIFIED)   (skipped: check-prose)" in probed.out
