"""T1: eight seats, one lens each, each with the tier that routes it."""

from __future__ import annotations

from dataclasses import dataclass

TIERS = ("generalist", "operator_safety", "deep_state", "fast_structural")


@dataclass(frozen=True)
class Lens:
    id: str
    tier: str
    question: str


LENSES: tuple[Lens, ...] = (
    Lens("defect", "generalist",
         "What really breaks? Logic errors, syntax errors, new defects."),
    Lens("proportion", "generalist",
         "Is this the right size? Overbuilt, or fitting the intent?"),
    Lens("operator_consequence", "operator_safety",
         "If a person runs this on their machine, what is destructive, unsafe or harmful?"),
    Lens("reversibility", "deep_state",
         "Do irreversible side effects remain? If it dies midway, does the system roll back "
         "cleanly?"),
    Lens("state_continuity", "deep_state",
         "Orphaned variables, overwritten global state, lost context for downstream nodes?"),
    Lens("resource_economy", "fast_structural",
         "Unoptimised loops, redundant network/API calls, memory bloat?"),
    Lens("boundary_condition", "fast_structural",
         "Null, empty, wrong type, deliberately broken: does it fail cleanly?"),
    Lens("telemetry", "operator_safety",
         "Can a failure here be diagnosed from logs and error handling?"),
)

LENS_IDS = tuple(lens.id for lens in LENSES)


def lens(lens_id: str) -> Lens:
    return next(item for item in LENSES if item.id == lens_id)
