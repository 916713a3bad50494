"""Builders on many machines (issue 16): an 8-ball slice whose builders each take 2 s,
thrown by `leap run --remote` and served by 1, 2 and 4 `leap worker`s (each in a clone of
its own) through one remote behind `git daemon` with the server's pre-receive; scripted
jurors on 127.0.0.1. Printed: the wall time for each count of workers and its speed-up
against one worker, measured in the same run.

Then the per-ball overhead of a worker: `leap worker --once` on one published ball whose
builder returns at once (fetch, claim, worktree, the round, its atomic push with the
receipt, the release), against a plain `git push` of that same round commit to the same
remote (the anchor), each as a process, as a person runs them.

    python -m tests.benchmarks.bench_workers [--smoke] [--balls 8] [--build 2]
                                             [--workers 1,2,4]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.benchmarks.common import arguments
from tests.loop import workers_world as ww
from tests.support import IDENTITY, GitDaemon, git
from tests.tribunal.jurors import JurorServer


def served(daemon: GitDaemon, jurors: JurorServer, name: str, balls: int) -> ww.World:
    base = daemon.base / name
    base.mkdir()
    return ww.build(base, lambda bare: daemon.url(str(bare.relative_to(daemon.base))),
                    jurors.url, balls)


def landed(daemon: GitDaemon, jurors: JurorServer, balls: int, build: float,
           workers: int) -> float:
    w = served(daemon, jurors, f"n{workers}", balls)
    clones = [w.clone(f"w{i}") for i in range(1, workers + 1)]
    env = {"LEAP_BUILD_SECONDS": str(build)}
    started = time.monotonic()
    # the default --poll (1 s): each look at the remote is a fetch, and on 2 cores four
    # workers looking five times a second take the CPU their builders and the thrower need
    orch = w.popen("run", ww.S, "--remote", "origin", "--heartbeat", "0",
                   "--jobs", "2", cwd=w.work, env=env)  # the thrower alike for every count
    procs = [w.popen("worker", "--remote", "origin", "--name", c.name, cwd=c, env=env)
             for c in clones]
    code = orch.wait(1800)
    wall = time.monotonic() - started
    for p in procs:
        p.wait(120)
    if code != 0:
        sys.exit(f"leap run --remote exited {code}: see {w.base_dir / 'work.log'}")
    return wall


def overhead(daemon: GitDaemon, jurors: JurorServer, repeat: int) -> tuple[float, float]:
    """(seconds of `leap worker --once` for one ball, seconds of a plain `git push` of its
    round commit), medians over ``repeat`` fresh worlds."""
    from tests.scoring.world import commit_files

    ours, plain = [], []
    for i in range(repeat):
        w = served(daemon, jurors, f"one{i}", 2)
        base = git("rev-parse", "main", cwd=w.work)
        red = commit_files(w.work, base, {"tests/test_b1.py": ww.red_test("b1")}, "red")
        for args in (("red", ww.S, "b1", red), ("throw", ww.S, "--ball", "b1", "--remote",
                                                 "origin")):
            res = w.leap(*args)
            if res.code != 0:
                sys.exit(f"leap {' '.join(args)}: {res}")
        clone = w.clone("solo")
        t = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "leapgit", "worker", "--remote",
                               "origin", "--name", "solo", "--once", "--poll", "0.1"],
                              cwd=clone, capture_output=True,
                              env={**os.environ, **IDENTITY, **w.env})
        ours.append(time.monotonic() - t)
        if proc.returncode != 0:
            sys.exit(f"leap worker exited {proc.returncode}: {proc.stdout.decode()[-2000:]}")
        tip = git("rev-parse", "refs/heads/leap/ball/pkgs/b1", cwd=w.bare)
        t = time.monotonic()
        subprocess.run(["git", "push", "-q", "--no-verify", "origin",
                        f"{tip}:refs/heads/scratch/{i}"], cwd=clone, check=True,
                       capture_output=True)
        plain.append(time.monotonic() - t)
    return sorted(ours)[len(ours) // 2], sorted(plain)[len(plain) // 2]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--balls", type=int, default=8)
    parser.add_argument("--build", type=float, default=2.0, help="seconds each builder takes")
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--repeat", type=int, default=3)
    args = arguments(__doc__, parser)
    if args.smoke:
        args.balls, args.build, args.workers, args.repeat = 2, 0.0, "1", 1
    counts = [int(n) for n in args.workers.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="bench-workers-"))
    home = tmp / "home"
    home.mkdir()
    os.environ.update({"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
                       "GIT_CONFIG_NOSYSTEM": "1"})
    (tmp / "served").mkdir()
    try:
        with GitDaemon(tmp / "served") as daemon, JurorServer("openai", ww.jurors) as jurors:
            walls = {n: landed(daemon, jurors, args.balls, args.build, n) for n in counts}
            one = walls[counts[0]]
            print(f"{args.balls} balls, builders {args.build:g} s each, one remote behind "
                  "git daemon with the server's pre-receive:")
            for n, wall in walls.items():
                print(f"  {n} worker(s): {wall:6.1f} s wall, {one / wall:.2f}x the speed of "
                      f"{counts[0]}")
            ours, plain = overhead(daemon, jurors, args.repeat)
            print(f"one ball by `leap worker --once` (claim, round, atomic push, release): "
                  f"{ours:.2f} s; a plain git push of its round commit: {plain:.2f} s; "
                  f"ratio {ours / plain:.1f}x, overhead {ours - plain:.2f} s a ball")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
