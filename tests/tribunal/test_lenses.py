"""T1: eight seats, one lens each, each with the tier of SPEC's table, and every seat is
routed (``routing.plan`` seats exactly the eight lenses)."""

from __future__ import annotations

from leapgit.records.tribunal_config import TribunalConfig
from leapgit.tribunal.identity import parse_builder
from leapgit.tribunal.routing import plan
from tests.tribunal.conftest import BUILDER, rung

SPEC_T1 = {  # SPEC, T1: lens id -> tier
    "defect": "generalist", "proportion": "generalist",
    "operator_consequence": "operator_safety", "reversibility": "deep_state",
    "state_continuity": "deep_state", "resource_economy": "fast_structural",
    "boundary_condition": "fast_structural", "telemetry": "operator_safety",
}


def test_eight_seats_one_lens_each_with_its_tier() -> None:
    cfg = TribunalConfig.from_dict({"rungs": [rung("r1", "ollama", "http://127.0.0.1:9")]})
    routing = plan(cfg, parse_builder(BUILDER), dict.fromkeys(SPEC_T1, 1000), {})
    assert [(p.lens.id, p.lens.tier) for p in routing.plans] == list(SPEC_T1.items())
    assert all(p.primary.rungs and not p.halted for p in routing.plans)
