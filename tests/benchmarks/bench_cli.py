"""Start-up of the CLI: `leap --version` and `leap status` (a small repository with one cut
slice) as whole processes, against `pre-commit --version` (the anchor: the closest relative
of ours, a git-hook tool whose every command starts the same way), interleaved over RUNS
rounds so that a load that comes and goes weighs on each alike. Target: half the anchor.
`leap status` twice: as it runs again with nothing moved (its last answer kept,
``commands.status_cache``), and as it runs after the ledger moved (its kept answer removed
before each run, so it reads the ledger).

    python -m tests.benchmarks.bench_cli [--smoke] [--runs 31]

Every process reads bytecode compiled in the warm-up, from a cache of this run's own
(PYTHONPYCACHEPREFIX): with PYTHONDONTWRITEBYTECODE set, as it is in some shells, an editable
leapgit would compile every module it imports each time, while pre-commit's installed
bytecode is on disk, and the ratio would weigh that instead of the start-up.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.benchmarks.common import arguments, git, median_ms, report

BIN = Path(sys.executable).parent
# what `leap status` cannot start without: dulwich's objects, object store, refs and config
# (the ledger is read through them); its command line is read without click (leapgit.launch)
FLOOR_MODULES = ("dulwich.objects", "dulwich.object_store", "dulwich.refs", "dulwich.config")
FLOOR = "floor: the libraries alone"
STATUS, MOVED = "leap status (2 balls)", "leap status, the ledger moved"
DRAFT = ("slice: s1\nspine: integrator\nballs:\n"
         "  - {id: b0, goal: g, spec: s, scope: [src/a.py], proof: 'true', "
         "tests: 'true', rollback: restore-scope}\n"
         "  - {id: b1, goal: g, spec: s, scope: [src/b.py], proof: 'true', "
         "tests: 'true', rollback: restore-scope}\n")


def _repo(root: Path, env: dict[str, str]) -> Path:
    repo = root / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "a.py").write_text("A = 1\n")
    (repo / "src" / "b.py").write_text("B = 2\n")
    git("init", "-q", "-b", "main", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "start", cwd=repo)
    _run([str(BIN / "leap"), "init"], repo, env)
    git("add", ".leap/config.yaml", cwd=repo)
    git("commit", "-q", "-m", "config", cwd=repo)
    (root / "slice.yaml").write_text(DRAFT)
    _run([str(BIN / "leap"), "slice", "cut", str(root / "slice.yaml")], repo, env)
    return repo


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=None, help="rounds (default 31)")
    args = arguments(__doc__, parser)
    runs = args.runs or (1 if args.smoke else 31)
    pre_commit = BIN / "pre-commit"
    if not pre_commit.exists():
        raise SystemExit(f"pip install pre-commit for the anchor (looked for {pre_commit})")
    with tempfile.TemporaryDirectory(prefix="leap-bench-cli-") as tmp:
        env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1",
               "PYTHONPYCACHEPREFIX": str(Path(tmp) / "bytecode")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        repo = _repo(Path(tmp), env)
        cases = {
            "leap --version": ([str(BIN / "leap"), "--version"], "leap, version"),
            STATUS: ([str(BIN / "leap"), "status"], "wave 0"),
            MOVED: ([str(BIN / "leap"), "status"], "wave 0"),
            "pre-commit --version": ([str(pre_commit), "--version"], "pre-commit"),
            "python -c pass": ([sys.executable, "-c", "pass"], ""),
            # leaving as `leap status` does (``launch.main``: no interpreter teardown)
            FLOOR: ([sys.executable, "-c", f"import {', '.join(FLOOR_MODULES)}; import os; "
                     "os._exit(0)"], ""),
        }
        for cmd, expected in cases.values():  # the warm-up writes every process's bytecode
            out = _run(cmd, repo, env)
            assert expected in out, f"{cmd}: expected {expected!r} in {out!r}"
        samples: dict[str, list[float]] = {name: [] for name in cases}
        order = list(cases)
        for n in range(runs):
            for name in order[n % len(order):] + order[:n % len(order)]:
                if name == MOVED:  # what a moved ledger costs: the answer is computed
                    _forget(repo)
                started = time.perf_counter()
                subprocess.run(cases[name][0], cwd=repo, env=env, capture_output=True)
                samples[name].append(time.perf_counter() - started)
    ms = {name: median_ms(times) for name, times in samples.items()}
    anchor = "pre-commit --version"
    print(f"whole processes, medians of {runs} interleaved rounds (python -c pass, the "
          f"interpreter alone: {ms['python -c pass']:.1f} ms)")
    for name in ("leap --version", STATUS, MOVED):
        report(name, ms[name], anchor, ms[anchor], "< 0.5")
    print(f"  the floor of `leap status` after the ledger moved: the interpreter with the "
          f"libraries it reads the ledger through ({', '.join(FLOOR_MODULES)}), no leapgit: "
          f"{ms[FLOOR]:.1f} ms, {ms[FLOOR] / ms[anchor]:.2f}x the anchor; leapgit's own share "
          f"of it: {(ms[MOVED] - ms[FLOOR]) / ms[anchor]:.2f}x")


def _forget(repo: Path) -> None:
    """The answer `leap status` kept, removed: as after a ledger commit, it is computed."""
    for kept in (repo / ".git" / "leap-cache").glob("status-*/*.json"):
        kept.unlink()


if __name__ == "__main__":
    main()
