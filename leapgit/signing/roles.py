"""Which role a record needs: the one table (S3), and which records grade a ball (S4).

| record                         | role(s)               | why                                    |
|--------------------------------|-----------------------|----------------------------------------|
| ledger (root), slice, ball     | integrator or admin   | cutting is planning for the one spine  |
| throw                          | integrator or admin   | the thrower hands over (L3)            |
| receipt, ``claim: true``       | builder               | a builder's claim of its own round     |
| checkpoint                     | builder               | the builder stops after round four (L6)|
| claim                          | builder               | a worker holds a published ball (L9)   |
| receipt, ``claim: false``      | scorer                | a derived outcome: grading (L7)        |
| pass, score, red               | scorer                | score records (issue 6): grading (S4)  |
| envelope, routing, verdict,    | scorer                | the scorer convenes the tribunal (T4)  |
| summary                        |                       |                                        |
| lease, merge                   | integrator            | one write spine (L9)                   |
| probe                          | scorer or admin       | canaries of the tribunal's rungs (T2)  |
| run                            | integrator, scorer, admin | one `leap run` a slice (L3)        |

A kind missing from the table needs ``admin``: an unknown record fails closed.
"""

from __future__ import annotations

from collections.abc import Mapping

BUILDER, SCORER, INTEGRATOR, ADMIN = "builder", "scorer", "integrator", "admin"

RECORD_ROLES: Mapping[str, frozenset[str]] = {
    "ledger": frozenset({INTEGRATOR, ADMIN}),
    "slice": frozenset({INTEGRATOR, ADMIN}),
    "abandon": frozenset({INTEGRATOR, ADMIN}),  # who cuts a slice may give it up
    "ball": frozenset({INTEGRATOR, ADMIN}),
    "throw": frozenset({INTEGRATOR, ADMIN}),
    "receipt:claim": frozenset({BUILDER}),
    "checkpoint": frozenset({BUILDER}),
    "claim": frozenset({BUILDER}),  # issue 16: a worker's hold on a published ball (L9)
    "receipt:derived": frozenset({SCORER}),
    "pass": frozenset({SCORER}),
    "score": frozenset({SCORER}),
    "red": frozenset({SCORER}),
    "envelope": frozenset({SCORER}),
    "routing": frozenset({SCORER}),
    "verdict": frozenset({SCORER}),
    "summary": frozenset({SCORER}),
    "lease": frozenset({INTEGRATOR}),
    "merge": frozenset({INTEGRATOR}),
    "probe": frozenset({SCORER, ADMIN}),  # issue 17: who convenes the tribunal probes it
    "run": frozenset({INTEGRATOR, SCORER, ADMIN}),  # issue 15: who drives `leap run`
    # a reopen only ever takes a pass away (L8): the post-commit hook (a builder), a scorer or
    # the integrator may write one
    "reopen": frozenset({BUILDER, SCORER, INTEGRATOR}),
}
UNKNOWN_KIND_ROLES = frozenset({ADMIN})
GRADING = frozenset({"receipt:derived", "pass", "score", "red", "envelope", "routing",
                     "verdict", "summary"})
BUILDING = frozenset({"receipt:claim", "checkpoint", "throw", "claim"})  # L3, L9: never grades


def record_key(raw: Mapping[str, object]) -> str:
    """The table's key for a loaded record: its kind, a receipt split by ``claim``."""
    kind = str(raw.get("kind"))
    if kind == "receipt":
        return "receipt:claim" if raw.get("claim", True) else "receipt:derived"
    return kind


def roles_for(raw: Mapping[str, object]) -> frozenset[str]:
    return RECORD_ROLES.get(record_key(raw), UNKNOWN_KIND_ROLES)


def ball_of(raw: Mapping[str, object]) -> tuple[str, str] | None:
    """(slice, ball) a building or grading record acts on (S4), or None."""
    if record_key(raw) not in GRADING | BUILDING:
        return None
    slice_id, ball_id = raw.get("slice"), raw.get("ball")
    if isinstance(slice_id, str) and isinstance(ball_id, str):
        return slice_id, ball_id
    series = raw.get("series")  # a tribunal summary names its ball as ``ball:<s>/<b>``
    if isinstance(series, str) and series.startswith("ball:") and "/" in series:
        slice_id, _, ball_id = series[len("ball:"):].partition("/")
        if slice_id and ball_id:
            return slice_id, ball_id
    return None


def linked_paths(raw: Mapping[str, object]) -> list[str]:
    """The ledger paths a grading record's provenance cites (verdicts, summary): whoever
    signed them graded the ball too (S4)."""
    prov = raw.get("provenance")
    if not isinstance(prov, Mapping):
        return []
    verdicts = prov.get("verdicts")
    out = [v for v in verdicts if isinstance(v, str)] if isinstance(verdicts, list) else []
    summary = prov.get("summary")
    if isinstance(summary, str):
        out.append(summary)
    return out
