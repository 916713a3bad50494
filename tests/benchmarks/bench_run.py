"""Protocol overhead of `leap run SLICE` (issue 15): a 16-ball slice in 4 waves of 4 (each
ball of waves 2-4 on one or two balls of the wave before), a builder, a test author and
jurors that answer at once (tests/benchmarks/run_world.py), against the same flow driven by
the separate commands in a script, the anchor, measured in the same run:

    per wave, for each ball: the test author's script run in a `git worktree` of
    `leap ball base SLICE BALL`, `leap red SLICE BALL COMMIT`, `leap throw SLICE --ball BALL
    --run`, `leap score SLICE BALL`; then `leap merge SLICE` and `leap sync origin` (what
    `leap run` does after its merge: it shares the ledger with the spine's remote).

Each arm gets a project of its own, built alike, with a plain file remote that runs the
server's pre-receive. Every command is a process of its own, as a person or a script runs
it. Printed: seconds a ball for each arm, the ratio run/script, and each arm's overhead a
ball: its wall time less the time the test author, builders, proofs, tests and jurors
themselves took (the union of their intervals, so work done at once with --jobs 2 is not
taken out twice), over the balls. Goal: `leap run` no slower than the script (ratio <= 1)
and under 1 s of overhead a ball on a 2-core machine.

    python -m tests.benchmarks.bench_run [--smoke] [--balls 16 --waves 4] [--jobs 1,2]
                                         [--rounds 1]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tests.benchmarks.common import arguments
from tests.benchmarks.run_world import SLICE, World, build, juror_script, now, shape, wave_of
from tests.support import IDENTITY, git
from tests.tribunal.jurors import JurorServer


@dataclass
class Arm:
    name: str
    wall: float
    hosted: float  # seconds the hosted processes and jurors took (union of intervals)
    balls: int
    counts: dict[str, int]
    steps: dict[str, float] = field(default_factory=dict)  # the script's, by command
    waves: list[float] = field(default_factory=list)  # seconds in, as each wave passed

    @property
    def per_ball(self) -> float:
        return self.wall / self.balls

    @property
    def overhead(self) -> float:
        return (self.wall - self.hosted) / self.balls


def leap(world: World, *args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "leapgit", *args], cwd=world.project.work,
                          capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise SystemExit(f"leap {' '.join(args)} exited {proc.returncode}:\n"
                         f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc.stdout


def scripted(world: World) -> tuple[dict[str, float], list[float]]:
    """The hand-driven flow, wave by wave (L5: a ball is thrown once its dependencies
    passed): the seconds each command took, summed over the balls, and the seconds in at
    which each wave's last ball passed."""
    spent: dict[str, float] = {}
    start, waves = now(), wave_of(world.deps)
    passed: dict[int, float] = {}

    def step(name: str, *args: str) -> str:
        began = now()
        try:
            return leap(world, *args)
        finally:
            spent[name] = spent.get(name, 0.0) + now() - began

    work = world.project.work
    for ball in world.deps:  # wave order: every dependency comes first
        base = step("ball base", "ball", "base", SLICE, ball).split()[0]
        began = now()
        tree = world.project.base_dir / f"red-{ball}"
        git("worktree", "add", "-q", "--detach", str(tree), base, cwd=work)
        try:
            subprocess.run(world.author, shell=True, cwd=tree, check=True,
                           env={**os.environ, "LEAP_SLICE": SLICE, "LEAP_BALL": ball},
                           stdout=subprocess.DEVNULL)
            red = git("rev-parse", "HEAD", cwd=tree)
        finally:
            git("worktree", "remove", "--force", str(tree), cwd=work)
        spent["author in a worktree"] = spent.get("author in a worktree", 0.0) + now() - began
        step("red", "red", SLICE, ball, red)
        step("throw --run", "throw", SLICE, "--ball", ball, "--run")
        step("score", "score", SLICE, ball)
        passed[waves[ball]] = now() - start
    step("merge (once)", "merge", SLICE)
    step("sync (once)", "sync", "origin")
    return spent, [passed[w] for w in sorted(passed)]


def driven(world: World, jobs: int) -> list[float]:
    """`leap run`; the seconds in (its own events' clock) at which each wave's last ball
    passed."""
    out = leap(world, "run", SLICE, "--json", "--heartbeat", "0", "--jobs", str(jobs))
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    end = events[-1]
    if end.get("event") != "end" or not str(end.get("outcome")).startswith("landed"):
        raise SystemExit(f"leap run did not land the slice: {end}")
    passed: dict[int, float] = {}
    for e in events:
        if e["event"] == "score" and e.get("outcome") == "pass":
            passed[e["wave"]] = max(passed.get(e["wave"], 0.0), e["elapsed"])
    return [passed[w] for w in sorted(passed)]


def union(spans: list[tuple[float, float]], lo: float, hi: float) -> float:
    total, reach = 0.0, lo
    clipped = sorted((max(a, lo), min(b, hi)) for a, b in spans)
    for a, b in (span for span in clipped if span[1] > span[0]):
        if b > reach:
            total += b - max(a, reach)
            reach = b
    return total


def measure(name: str, tmp: Path, deps: dict[str, tuple[str, ...]], jobs: int | None) -> Arm:
    calls: list[tuple[float, float]] = []
    with JurorServer("openai", juror_script(calls)) as server:
        world = build(tmp / name.replace(" ", "-"), server.url, calls, deps)
        began = now()
        if jobs is None:
            steps, waves = scripted(world)
        else:
            steps, waves = {}, driven(world, jobs)
        ended = now()
    spans = world.intervals()
    counts = {label: sum(1 for s in spans if s[0] == label)
              for label in ("author", "builder", "proof", "tests", "juror")}
    landed = git("log", "--first-parent", "--format=%s", "main", cwd=world.project.bare)
    counts["merged"] = sum(1 for line in landed.splitlines()
                           if line.startswith(f"leap: integrate {SLICE}/"))
    if counts["merged"] != len(deps) or counts["builder"] != len(deps) \
            or counts["author"] != len(deps):
        raise SystemExit(f"{name}: not the same work as a clean run of {len(deps)} balls "
                         f"(one red, one round, one merge each): {counts}")
    hosted = union([(a, b) for _, a, b in spans], began, ended)
    return Arm(name, ended - began, hosted, len(deps), counts, steps, waves)


def show(arms: list[Arm], anchor: Arm, work: bool = True) -> None:
    for arm in arms:
        ratio = f"   ratio run/script {arm.wall / anchor.wall:5.2f}x" if arm is not anchor \
            else "   (the anchor)"
        print(f"   {arm.name:<18} {arm.wall:7.1f} s   {arm.per_ball:5.2f} s a ball   "
              f"hosted {arm.hosted:6.1f} s   overhead {arm.overhead:5.2f} s a ball{ratio}")
        if arm.waves:
            size = arm.balls / len(arm.waves)
            times = [b - a for a, b in zip([0.0, *arm.waves[:-1]], arm.waves, strict=True)]
            print("      seconds a ball, wave by wave: " + ", ".join(
                f"{t / size:.2f}" for t in times) + f"  (after the last wave: "
                f"{arm.wall - arm.waves[-1]:.1f} s, the merge and the rest)")
        if arm.steps:
            print("      its commands, seconds a ball: " + ", ".join(
                f"{k} {v / arm.balls:.2f}" for k, v in arm.steps.items() if "once" not in k)
                + "; " + ", ".join(f"{k} {v:.1f} s" for k, v in arm.steps.items()
                                   if "once" in k))
    if work:
        print("   work done by each arm (processes and juror calls): "
              + "; ".join(f"{a.name}: " + ", ".join(f"{k} {v}" for k, v in a.counts.items())
                          for a in arms))


def median(samples: list[Arm]) -> Arm:
    return Arm(samples[0].name, statistics.median(a.wall for a in samples),
               statistics.median(a.hosted for a in samples), samples[0].balls,
               samples[0].counts)


def rounds(tmp: Path, deps: dict[str, tuple[str, ...]], jobs: list[int], times: int) -> None:
    """Every arm ``times`` times, in an order that turns each round, so that a load that
    comes and goes weighs on each alike; each round's ratios, then the medians'."""
    arms: list[tuple[str, int | None]] = [("script", None)] + \
        [(f"leap run --jobs {j}", j) for j in jobs]
    samples: dict[str, list[Arm]] = {name: [] for name, _ in arms}
    for r in range(times):
        for name, j in arms[r % len(arms):] + arms[:r % len(arms)]:
            samples[name].append(measure(name, tmp / f"round{r}", deps, j))
        print(f"  round {r + 1} of {times}:")
        show([samples[name][-1] for name, _ in arms], samples["script"][-1], work=r == 0)
    if times > 1:
        print(f"  medians of {times} rounds:")
        middle = [median(samples[name]) for name, _ in arms]
        show(middle, middle[0], work=False)
    print("  goal: leap run no slower than the script (ratio <= 1.00x) and under 1 s of "
          "overhead a ball on a 2-core machine")


def isolate(home: Path) -> None:
    os.environ.update({"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
                       "XDG_STATE_HOME": str(home / ".state"), "GIT_CONFIG_NOSYSTEM": "1",
                       **IDENTITY})
    for key in ("GIT_DIR", "GIT_WORK_TREE"):
        os.environ.pop(key, None)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--balls", type=int, default=None, help="balls (default 16)")
    parser.add_argument("--waves", type=int, default=None, help="waves (default 4)")
    parser.add_argument("--rounds", type=int, default=1, help="times each arm runs (default 1)")
    parser.add_argument("--jobs", default=None,
                        help="`leap run --jobs` values, one run each (default 1,2)")
    args = arguments(__doc__, parser)
    balls = args.balls or (2 if args.smoke else 16)  # smoke: one ball on another
    waves = args.waves or (2 if args.smoke else 4)
    jobs = [int(j) for j in (args.jobs or ("1" if args.smoke else "1,2")).split(",")]
    if balls % waves:
        raise SystemExit(f"--balls {balls} is not a number of waves of one size ({waves})")
    deps = shape(balls, waves)
    tmp = Path(tempfile.mkdtemp(prefix="leap-bench-run-"))
    isolate(tmp / "home")
    try:
        print(f"leap run vs the separate commands: {balls} balls in {waves} waves of "
              f"{balls // waves}, a file remote with the server's pre-receive, every "
              "command a process of its own")
        rounds(tmp, deps, jobs, args.rounds)
    except BaseException:
        print(f"stopped: the projects, their logs and any crash log are kept in {tmp}",
              file=sys.stderr)
        raise
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    main()
