"""Keep-or-revert (L7.2): the candidate must beat the champion on the ball's declared metric,
compared field by field in the declared order. A tie or a regression loses."""

from __future__ import annotations

import json
import math

from leapgit.records.scoring import MetricOutcome
from leapgit.records.types import Metric


class MetricUnreadable(Exception):
    """The metric command's output is not the JSON the ball declared."""


def read_fields(output: str, metric: Metric, who: str) -> dict[str, float]:
    """The declared fields from the last JSON object the command printed."""
    for line in reversed(output.strip().splitlines() or [""]):
        line = line.strip()
        if line.startswith("{"):
            try:
                data = json.loads(line)
            except ValueError:
                continue
            break
    else:
        try:
            data = json.loads(output)
        except ValueError:
            raise MetricUnreadable(f"the {who}'s metric output holds no JSON object") from None
    if not isinstance(data, dict):
        raise MetricUnreadable(f"the {who}'s metric output is not a JSON object")
    values: dict[str, float] = {}
    for field in metric.fields:
        value = data.get(field.name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(
            value
        ):
            raise MetricUnreadable(
                f"the {who}'s metric has no finite number for field {field.name!r} "
                f"(got {value!r})"
            )
        values[field.name] = float(value)
    return values


def compare(metric: Metric, champion: dict[str, float], candidate: dict[str, float]
            ) -> MetricOutcome:
    for field in metric.fields:
        old, new = champion[field.name], candidate[field.name]
        if old == new:
            continue
        better = new < old if field.better == "lower" else new > old
        verb = "improves" if better else "regresses"
        return MetricOutcome(better, f"{field.name} {verb}: {old:g} -> {new:g} "
                             f"({field.better} is better)", champion, candidate)
    names = ", ".join(f.name for f in metric.fields)
    return MetricOutcome(False, f"tie on every field ({names}): a tie loses", champion,
                         candidate)
