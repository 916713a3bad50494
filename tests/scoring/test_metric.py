from __future__ import annotations

from pathlib import Path

import pytest

from leapgit.records.types import Metric, MetricField
from leapgit.scoring.commands import run_command
from leapgit.scoring.metric import MetricUnreadable, compare, read_fields

M = Metric("bench", (MetricField("p95_ms", "lower"), MetricField("ops", "higher")))


def test_first_differing_field_decides_in_declared_order() -> None:
    assert compare(M, {"p95_ms": 10, "ops": 5}, {"p95_ms": 9, "ops": 1}).keep
    lost = compare(M, {"p95_ms": 10, "ops": 5}, {"p95_ms": 11, "ops": 99})
    assert not lost.keep and "p95_ms regresses" in lost.reason
    second = compare(M, {"p95_ms": 10, "ops": 5}, {"p95_ms": 10, "ops": 6})
    assert second.keep and "ops improves" in second.reason


def test_a_tie_loses() -> None:
    tie = compare(M, {"p95_ms": 10, "ops": 5}, {"p95_ms": 10, "ops": 5})
    assert not tie.keep and "tie" in tie.reason


@pytest.mark.parametrize(("output", "needle"), [
    ("no json here", "no JSON"),
    ('{"p95_ms": 1}', "ops"),
    ('{"p95_ms": "fast", "ops": 1}', "p95_ms"),
    ('{"p95_ms": true, "ops": 1}', "p95_ms"),
    ('{"p95_ms": NaN, "ops": 1}', "p95_ms"),
    ("[1, 2]", "not a JSON object"),
])
def test_unreadable_metric_output_is_named(output: str, needle: str) -> None:
    with pytest.raises(MetricUnreadable, match=needle):
        read_fields(output, M, "candidate")


def test_the_last_json_line_counts() -> None:
    out = 'warming up\n{"p95_ms": 99, "ops": 0}\n{"p95_ms": 3, "ops": 7}\n'
    assert read_fields(out, M, "champion") == {"p95_ms": 3.0, "ops": 7.0}


def test_commands_run_in_their_folder_and_time_out_whole(tmp_path: Path) -> None:
    ran = run_command("proof", "pwd; echo out; exit 3", tmp_path)
    assert ran.exit_code == 3 and str(tmp_path) in ran.output_tail and not ran.ok
    slow = run_command("tests", "sleep 5 & sleep 5; echo never", tmp_path, timeout=0.5)
    assert slow.timed_out and slow.seconds < 3 and "never" not in slow.output_tail
    assert slow.to_dict()["exit_code"] is None
