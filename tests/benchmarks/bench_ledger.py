"""Ledger append cost: flat in the ledger's size, and against git plumbing.

    python -m tests.benchmarks.bench_ledger [--smoke]
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path

from leapgit.ledger.store import Ledger
from tests.benchmarks.common import arguments, git, median_ms, report, timed

BALL_FILES = ["ball.yaml", "episodes/1/throw.yaml"] + [
    f"episodes/1/receipts/{r}.yaml" for r in (1, 2, 3, 4)
] + [f"tribunal/run1/verdicts/{lens}.yaml" for lens in ("defect", "proportion", "telemetry")] + [
    "tribunal/run1/summary.yaml"
]


def _ledger_with(root: Path, records: int, wide: bool = False) -> None:
    """``records`` records shaped like a real ledger: 20 balls a slice, 10 records a ball
    (spec, throw, four receipts, tribunal files). ``wide``: one record a ball, 100 balls a
    slice (the worst case for the width of the folders an append rewrites)."""
    git("init", "-q", str(root), cwd=root.parent)
    with Ledger(root / ".git") as ledger:
        ledger.init(b"kind: ledger\n")
        if wide:
            paths = [f"slices/s{i // 100}/balls/b{i}/ball.yaml" for i in range(records)]
        else:
            per_ball = len(BALL_FILES)
            paths = [f"slices/s{i // (20 * per_ball)}/balls/b{i // per_ball}/"
                     f"{BALL_FILES[i % per_ball]}" for i in range(records)]
        ledger.append({p: f"kind: x\nn: {i}\n".encode() for i, p in enumerate(paths)},
                      f"{records} records")


def append_vs_size(wide: bool, big: int, runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        figures: dict[int, float] = {}
        # 10 is measured before and after the big ledger, and the better figure kept, so
        # that warm-up effects do not flatter the ratio
        for run, size in enumerate((10, big, 10)):
            root = Path(tmp) / f"r{run}-{size}"
            root.mkdir()
            _ledger_with(root, size, wide)
            counter = itertools.count()
            with Ledger(root / ".git") as ledger:
                def one(counter: itertools.count[int] = counter) -> None:
                    n = next(counter)
                    ledger.append({f"slices/s0/balls/b0/episodes/{n + 2}/throw.yaml": b"k: v\n"},
                                  f"append {n}", [("Leap-Slice", "s0")])
                ms = median_ms(timed(one, runs, warmup=3))
                figures[size] = min(ms, figures.get(size, ms))
        shape = "wide worst case" if wide else "20 balls a slice"
        report(f"append, {big:,} records ({shape})", figures[big],
               "append with 10 records", figures[10], "< 1.5")


def append_vs_plumbing(records: int, runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "r"
        root.mkdir()
        _ledger_with(root, records)
        counter = itertools.count()
        index = str(Path(tmp) / "plumbing-index")

        def plumbing() -> None:
            n = next(counter)
            path = f"slices/s7/balls/git{n}/ball.yaml"
            blob = git("hash-object", "-w", "--stdin", cwd=root, input=b"kind: ball\n")
            tip = git("rev-parse", "refs/heads/leap/ledger", cwd=root)
            env = {"GIT_INDEX_FILE": index}
            git("read-tree", tip, cwd=root, env=env)
            git("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", cwd=root,
                env=env)
            tree = git("write-tree", cwd=root, env=env)
            commit = git("commit-tree", tree, "-p", tip, "-m", f"append {n}", cwd=root)
            git("update-ref", "refs/heads/leap/ledger", commit, tip, cwd=root)

        with Ledger(root / ".git") as ledger:
            def ours() -> None:
                n = next(counter)
                ledger.append({f"slices/s7/balls/ours{n}/ball.yaml": b"kind: ball\n"},
                              f"append {n}")
            leap_ms = median_ms(timed(ours, runs, warmup=3))
        git_ms = median_ms(timed(plumbing, max(1, runs // 3), warmup=2))
        report(f"append, leapgit in-process ({records:,}-record ledger)", leap_ms,
               "git plumbing (hash-object..update-ref)", git_ms, "< 0.5, i.e. 2x faster")


def main() -> None:
    smoke = arguments(__doc__).smoke
    big, plumbed, runs = (200, 100, 3) if smoke else (10_000, 1_000, 60)
    append_vs_size(wide=False, big=big, runs=runs)
    append_vs_size(wide=True, big=big, runs=runs)
    append_vs_plumbing(plumbed, runs)


if __name__ == "__main__":
    main()
