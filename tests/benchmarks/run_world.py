"""The world of bench_run: a slice of N balls in waves, each ball of a later wave on one or
two balls of the wave before, on a real project (tests/scoring/world.py's build_project: a
bare remote with the server's pre-receive, here a plain file remote; a clone with leapgit
configured), with the scripted test author and builder of tests/loop/world.py (real
processes) and its scripted jurors (tests/tribunal/jurors.py, openai wire format on
127.0.0.1; a pass quotes the candidate, T6).

Every process the protocol only hosts (the test author, the builder, each proof and tests
run) is started through ``timed.py``, which logs when it started (its start time from
/proc, so the interpreter's own start-up is the process's time, not leap's) and when it
ended; the jurors' script logs its own calls. What is left of a wall time once those
intervals are taken out is the protocol's own time."""

from __future__ import annotations

import json
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from leapgit.records import yamlio
from tests.loop.world import AUTHOR, BUILDER, jurors
from tests.scoring.world import Project, build_project
from tests.tribunal.jurors import Call, Reply

SLICE = "bench"
PY = sys.executable

TIMED = textwrap.dedent("""\
    import os, runpy, sys, time
    here = os.path.dirname(os.path.abspath(__file__))
    def started():
        try:
            with open("/proc/self/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return int(fields[19]) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return time.clock_gettime(time.CLOCK_BOOTTIME)
    label, target, *rest = sys.argv[1:]
    began = started()
    try:
        if target == "-m":
            sys.argv = [rest[0], *rest[1:]]
            sys.path[0] = os.getcwd()
            runpy.run_module(rest[0], run_name="__main__", alter_sys=True)
        else:
            sys.argv = [target, *rest]
            sys.path[0] = os.path.dirname(target)
            runpy.run_path(target, run_name="__main__")
    finally:
        with open(os.path.join(here, "times.log"), "a") as log:
            log.write("%s %.3f %.3f\\n" % (label, began, time.clock_gettime(time.CLOCK_BOOTTIME)))
    """)


def now() -> float:
    """The clock every interval is on (the one /proc's process start times count on)."""
    return time.clock_gettime(time.CLOCK_BOOTTIME)


def shape(balls: int, waves: int) -> dict[str, tuple[str, ...]]:
    """Ball ids to their dependencies: waves of ``balls // waves``; ball j of a later wave
    depends on ball j of the wave before, and an even j on ball j+1 too."""
    size = balls // waves
    out: dict[str, tuple[str, ...]] = {}
    for w in range(waves):
        for j in range(size):
            prev = [f"b{(w - 1) * size + k:02d}" for k in range(size)] if w else []
            deps = (prev[j],) + ((prev[(j + 1) % size],) if j % 2 == 0 and size > 1 else ()) \
                if prev else ()
            out[f"b{w * size + j:02d}"] = tuple(dict.fromkeys(deps))
    return out


def wave_of(deps: dict[str, tuple[str, ...]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for ball, on in deps.items():  # in wave order: a dependency comes first
        out[ball] = 1 + max((out[d] for d in on), default=-1)
    return out


def values(deps: dict[str, tuple[str, ...]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for ball, on in deps.items():  # in wave order: a dependency comes first
        out[ball] = 1 + sum(out[d] for d in on)
    return out


def code(ball: str, on: tuple[str, ...]) -> str:
    imports = "".join(f"from calc.{d} import f{d}\n" for d in on)
    total = " + ".join([*(f"f{d}()" for d in on), "1"])
    return f"{imports}{chr(10) * 2 if on else ''}def f{ball}():\n    return {total}\n"


def red_test(ball: str, expect: int) -> str:
    return (f"import unittest\n\n\nclass T(unittest.TestCase):\n    def test_{ball}(self):\n"
            f"        from calc.{ball} import f{ball}\n"
            f"        self.assertEqual(f{ball}(), {expect})\n")


def draft(deps: dict[str, tuple[str, ...]], timed: Path) -> str:
    rows = []
    for ball, on in deps.items():
        after = f"\n    depends_on: [{', '.join(on)}]" if on else ""
        rows.append(f"  - id: {ball}\n    goal: {ball} works\n    spec: make {ball} work\n"
                    f"    scope: [calc/{ball}.py, tests/test_{ball}.py]\n"
                    f"    proof: {PY} {timed} proof -m unittest -q tests.test_{ball}\n"
                    f"    tests: {PY} {timed} tests -m unittest -q\n"
                    f"    rollback: restore-scope{after}\n")
    return f"slice: {SLICE}\nspine: integrator\nballs:\n" + "".join(rows)


class FileRemote:
    """What build_project asks of its daemon, for a plain file remote: the bare repository's
    path is its url (a local push runs the same pre-receive)."""

    def __init__(self, base: Path) -> None:
        self.base = base

    def url(self, name: str) -> str:
        return str(self.base / name)


@dataclass
class World:
    project: Project
    deps: dict[str, tuple[str, ...]]
    author: str  # the test author's command (red.command)
    juror_calls: list[tuple[float, float]]

    def intervals(self) -> list[tuple[str, float, float]]:
        """Every hosted process's (label, start, end), and every juror call's."""
        log = self.project.base_dir / "times.log"
        rows = [line.split() for line in log.read_text().splitlines()] if log.exists() else []
        return [(r[0], float(r[1]), float(r[2])) for r in rows] + \
            [("juror", a, b) for a, b in self.juror_calls]


def juror_script(calls: list[tuple[float, float]]) -> Callable[[Call], Reply]:
    """tests/loop/world.py's jurors, each call's time logged."""
    def script(call: Call) -> Reply:
        began = now()
        try:
            return jurors(call)
        finally:
            calls.append((began, now()))
    return script


def build(base_dir: Path, juror_url: str, calls: list[tuple[float, float]],
          deps: dict[str, tuple[str, ...]]) -> World:
    base_dir.mkdir(parents=True)
    timed = base_dir / "timed.py"
    timed.write_text(TIMED)
    expect = values(deps)
    plan = {b: {f"calc/{b}.py": code(b, on)} for b, on in deps.items()}
    p = build_project(base_dir, FileRemote(base_dir), juror_url,  # type: ignore[arg-type]
                      draft(deps, timed), None, plan)
    (base_dir / "builder.py").write_text(BUILDER)
    (base_dir / "author.py").write_text(AUTHOR)
    (base_dir / "reds.json").write_text(json.dumps(
        {b: [f"tests/test_{b}.py", red_test(b, expect[b])] for b in deps}))
    author = f"{PY} {timed} author {base_dir / 'author.py'}"
    cfg_path = p.work / ".leap" / "config.yaml"
    cfg = yamlio.loads(cfg_path.read_bytes(), str(cfg_path))
    cfg["builder"]["command"] = f"{PY} {timed} builder {base_dir / 'builder.py'}"
    cfg["red"] = {"command": author,
                  "identity": "model=scripted-author,family=demo,session=author-1"}
    cfg_path.write_bytes(yamlio.dumps(cfg))
    return World(p, deps, author, calls)
