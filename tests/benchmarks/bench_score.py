"""Benchmarks for scoring and merging (a plain script, not collected by pytest): ratios
measured in one run.

    python -m tests.benchmarks.bench_score [--smoke] [--big 10000]

1. `leap audit` on ledgers of 1,000 and 10,000 passed balls (slices of 10 balls; each ball
   with its slice, ball, red, score, summary and two verdict records): the time must grow no
   worse than linearly (ratio of ratios close to 1).
2. `leap merge` of a 16-ball slice (passes recorded, the aggregate review against a scripted
   juror server on 127.0.0.1, no push) against the same 16 merges done with plain
   `git merge --no-ff` in a checkout.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from leapgit.ledger import layout
from leapgit.ledger.store import Ledger
from leapgit.records import yamlio
from leapgit.records.types import BallRecord, SliceRecord, StampedScope
from tests.benchmarks.common import arguments, git
from tests.support import make_repo, pass_files, write_pass

NOW = "2024-01-01T00:00:00Z"
PER_SLICE = 10


def red_of(sid: str, ball: str, commit: str, test: str, blob: str) -> bytes:
    """The red record every pass names since "no red, no pass" (T7.1)."""
    from leapgit.records.scoring import FileBlob, RedRecord, RunEvidence

    return yamlio.dumps(RedRecord(sid, ball, 1, commit, commit, (FileBlob(test, blob),),
                                  RunEvidence("red", "false", 1), NOW).to_dict())


def ledger_of(root: Path, balls: int) -> None:
    base = git("rev-parse", "HEAD", cwd=root)
    tree = git("rev-parse", "HEAD^{tree}", cwd=root)
    readme = git("rev-parse", "HEAD:README.md", cwd=root)
    with Ledger(root / ".git") as ledger:
        ledger.init(yamlio.dumps({"kind": "ledger", "format": 1, "created_at": NOW}))
        for s in range(balls // PER_SLICE):
            sid = f"s{s}"
            ids = tuple(f"b{i}" for i in range(PER_SLICE))
            files = {layout.slice_path(sid): yamlio.dumps(SliceRecord(
                sid, "integrator", base, ids, (ids,), NOW).to_dict())}
            for b in ids:
                ball = BallRecord(sid, b, 1, "goal", "spec",
                                  (StampedScope(f"src/{sid}/{b}.py", "absent"),), "true",
                                  "restore-scope", tests="true")
                files[layout.ball_path(sid, b)] = yamlio.dumps(ball.to_dict())
            ledger.append(files, f"cut {sid}")
            passes: dict[str, bytes] = {}
            for b in ids:
                passes.update(pass_files(sid, b, tree, base, base, run_id=f"t-{sid}-{b}"))
                passes[layout.red_path(sid, b, 1)] = red_of(sid, b, base, "README.md", readme)
            ledger.append(passes, f"scores of {sid}")


def anchor(parses: int = 200, runs: int = 5) -> float:
    """Seconds to parse one pass record ``parses`` times: the machine's speed right now (the
    audit is mostly such parsing), measured beside each audit on a shared, noisy machine."""
    from tests.benchmarks.common import timed

    data = pass_files("s", "b", "0" * 40, "0" * 40, "0" * 40)[layout.score_path("s", "b", 1)]
    return min(timed(lambda: [yamlio.loads(data, "x") for _ in range(parses)], runs=runs))


def bench_audit(tmp: Path, sizes: list[int], parses: int = 200) -> None:
    from leapgit.audit.run import audit
    from leapgit.ledger.workspace import open_workspace

    print("1. leap audit (in-process, after the ledger is written)")
    results = []
    anchors = []
    for n in sizes:
        root = make_repo(tmp / f"audit{n}", {"README.md": "x\n"})
        started = time.perf_counter()
        ledger_of(root, n)
        built = time.perf_counter() - started
        (root / ".leap").mkdir()
        (root / ".leap" / "config.yaml").write_text(
            "version: 1\nspine: main\nledger_ref: refs/heads/leap/ledger\n")
        ws = open_workspace(root)
        before = anchor(parses)
        started = time.perf_counter()
        report = audit(ws)
        took = time.perf_counter() - started
        speed = (before + anchor(parses)) / 2
        assert report.ok, [v.line() for v in report.violations[:3]]
        results.append((n, took))
        anchors.append(speed)
        print(f"   {n:>6} balls ({report.records} records, {report.commits} commits): "
              f"{took:6.2f} s  ({took / n * 1000:.2f} ms a ball; ledger built in {built:.0f} s; "
              f"anchor {speed * 1000:.0f} ms)")
    (n0, t0), (n1, t1) = results[0], results[-1]
    print(f"   growth: {n1 / n0:.0f}x the balls took {t1 / t0:.2f}x the time "
          f"(ratio of ratios {t1 / t0 / (n1 / n0):.2f}; 1.00 is linear); against the anchor "
          f"measured beside each: {t1 / anchors[-1] / (t0 / anchors[0]):.2f}x "
          f"(ratio of ratios {t1 / anchors[-1] / (t0 / anchors[0]) / (n1 / n0):.2f})")


def bench_merge(tmp: Path, balls: int = 16) -> None:
    from leapgit.ledger.workspace import open_workspace
    from leapgit.scoring.merge import merge
    from leapgit.tribunal.demo import scripted_juror

    print(f"2. leap merge of a {balls}-ball slice vs plain git merge --no-ff")
    root = make_repo(tmp / "merge", {"README.md": "x\n", **{f"src/f{i}.py": f"F = {i}\n"
                                                          for i in range(balls)}})
    base = git("rev-parse", "HEAD", cwd=root)
    ids = tuple(f"b{i}" for i in range(balls))
    for i, b in enumerate(ids):
        git("checkout", "-q", "-b", f"leap/ball/big/{b}", base, cwd=root)
        (root / f"src/f{i}.py").write_text(f"F = {i + 100}\n")
        git("commit", "-qam", f"round 1 of {b}", cwd=root)
    git("checkout", "-q", "main", cwd=root)
    with scripted_juror() as url:
        (root / ".leap").mkdir()
        (root / ".leap" / "config.yaml").write_text(
            "version: 1\nspine: main\nledger_ref: refs/heads/leap/ledger\n"
            "builder: {identity: 'model=m,family=buildfam,session=s'}\n"
            "tribunal:\n  timeout: 10\n  rungs:\n  - {id: scripted, provider: openai, "
            f"model: scripted-juror, endpoint: '{url}', family: scripted, cost: 0, "
            "tiers: [generalist, operator_safety, deep_state, fast_structural], "
            "context_tokens: 64000}\n")
        (root / ".git" / "info" / "exclude").write_text(".leap/\n")
        with Ledger(root / ".git") as ledger:
            ledger.init(yamlio.dumps({"kind": "ledger", "format": 1, "created_at": NOW}))
            files = {layout.slice_path("big"): yamlio.dumps(SliceRecord(
                "big", "integrator", base, ids, (ids,), NOW).to_dict())}
            for i, b in enumerate(ids):
                files[layout.ball_path("big", b)] = yamlio.dumps(BallRecord(
                    "big", b, 1, "goal", "spec", (StampedScope(f"src/f{i}.py", "absent"),),
                    "true", "restore-scope").to_dict())
            ledger.append(files, "cut big")
            for b in ids:
                tip = git("rev-parse", f"leap/ball/big/{b}", cwd=root)
                write_pass(ledger, "big", b, git("rev-parse", f"{tip}^{{tree}}", cwd=root),
                           tip, base, run_id=f"t-big-{b}")
        plain = root.parent / "plain"
        git("clone", "-q", str(root), str(plain), cwd=root.parent)
        started = time.perf_counter()
        for b in ids:
            git("merge", "-q", "--no-ff", "-m", f"merge {b}", f"origin/leap/ball/big/{b}",
                cwd=plain)
        t_plain = time.perf_counter() - started
        ws = open_workspace(root)
        started = time.perf_counter()
        merge(ws, "big", echo=lambda _: None)
        t_leap = time.perf_counter() - started
    print(f"   plain git merge x{balls}: {t_plain:6.2f} s")
    print(f"   leap merge:           {t_leap:6.2f} s  ({t_leap / t_plain:.1f}x plain git; it "
          "also takes and releases the lease, predicts every merge, runs the aggregate "
          "blind review and writes the slice pass record)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--big", type=int, default=None, help="balls of the big ledger "
                        "(default 10000)")
    args = arguments(__doc__, parser)
    sizes = [10, args.big or 20] if args.smoke else [1000, args.big or 10000]
    os.environ.setdefault("GIT_CONFIG_NOSYSTEM", "1")
    tmp = Path(tempfile.mkdtemp(prefix="leap-bench-score-"))
    try:
        bench_audit(tmp, sizes, parses=10 if args.smoke else 200)
        bench_merge(tmp, balls=2 if args.smoke else 16)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    main()
