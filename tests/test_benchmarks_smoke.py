"""Every benchmark runs at its ``--smoke`` size, so none can rot (issue 13): pytest does
not collect tests/benchmarks/, and a benchmark broken by a change elsewhere used to stay
broken until someone ran it by hand. A new bench_*.py is picked up by its name.

Only that it runs is asserted: it exits 0 and prints its ratio line(s) (a figure such as
``0.55x``, or ``ratio 0.55``). A smoke run's figures mean nothing, and a benchmark is never a
pass/fail timer. A benchmark without ``--smoke`` fails here, as does one whose smoke size
takes longer than SMOKE_SECONDS."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT

BENCHMARKS = sorted((ROOT / "tests" / "benchmarks").glob("bench_*.py"))
RATIO = re.compile(r"\d\.\d+x\b|\bratio\b[^\n]*\d\.\d")
SMOKE_SECONDS = 90  # a few seconds on a quiet machine; a loaded CI runner gets room
HELP_SECONDS = 30


def run(path: Path, flag: str, seconds: float) -> subprocess.CompletedProcess[str]:
    module = f"tests.benchmarks.{path.stem}"
    try:
        return subprocess.run([sys.executable, "-m", module, flag], cwd=ROOT,
                              capture_output=True, text=True, timeout=seconds)
    except subprocess.TimeoutExpired:
        pytest.fail(f"python -m {module} {flag} ran longer than {seconds} s"
                    + (": a benchmark that ignores its arguments runs at full size"
                       if flag == "--help" else ": shrink its --smoke size"))


def test_there_are_benchmarks_to_smoke() -> None:
    assert len(BENCHMARKS) >= 8, [p.name for p in BENCHMARKS]


@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.stem)
def test_benchmark_runs_at_its_smoke_size(path: Path) -> None:
    usage = run(path, "--help", HELP_SECONDS)
    assert usage.returncode == 0 and "--smoke" in usage.stdout, (
        f"{path.name} takes no --smoke (tests.benchmarks.common.arguments adds it):\n"
        f"{usage.stdout[-1500:]}{usage.stderr[-1500:]}")
    smoke = run(path, "--smoke", SMOKE_SECONDS)
    assert smoke.returncode == 0, (f"{path.name} --smoke exited {smoke.returncode}:\n"
                                   f"{smoke.stdout[-2000:]}{smoke.stderr[-3000:]}")
    ratios = [line for line in smoke.stdout.splitlines() if RATIO.search(line)]
    assert ratios, f"{path.name} --smoke printed no ratio line:\n{smoke.stdout[-2000:]}"
