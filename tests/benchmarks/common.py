"""Shared bits for the benchmarks: each prints figures and ratios measured in one run
against an anchor measured in the same run. They are not pass/fail tests.

Every benchmark takes ``--smoke``: sizes so small that it finishes in seconds. Its figures
mean nothing; tests/test_benchmarks_smoke.py runs each that way so that none can rot."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

IDENTITY = {
    "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}
os.environ.update(IDENTITY)


def git(*args: str, cwd: Path, input: bytes | None = None, env: dict[str, str] | None = None
        ) -> str:
    return subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True,
                          check=True, env={**os.environ, **(env or {})}).stdout.decode().strip()


def arguments(doc: str | None, parser: argparse.ArgumentParser | None = None
              ) -> argparse.Namespace:
    """A benchmark's command line: ``--smoke`` and whatever ``parser`` adds."""
    parser = parser or argparse.ArgumentParser()
    parser.description = doc
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes, done in seconds: proves the benchmark runs, measures "
                             "nothing")
    return parser.parse_args()


def timed(fn: Callable[[], object], runs: int, warmup: int = 1) -> list[float]:
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def report(name: str, value_ms: float, anchor_name: str, anchor_ms: float, target: str) -> None:
    ratio = value_ms / anchor_ms if anchor_ms else float("inf")
    print(f"{name:<52} {value_ms:9.2f} ms   {anchor_name:<38} {anchor_ms:9.2f} ms   "
          f"ratio {ratio:5.2f}x   (target {target})")
