"""Throw benchmarks (issue 4); a plain script, not collected by pytest. Prints figures and
ratios from one run:

1. `leap throw` of 8 balls in a repository of 5,000 files, against 8 plain
   `git worktree add` runs of the same repository (the anchor).
2. 8 balls whose builder sleeps 1 s, `leap throw --run --jobs 8`: wall time (target < 1.6 s).

Run: python -m tests.benchmarks.bench_throw [--smoke]   (--smoke: 2 balls, 50 files, 0.2 s)
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.benchmarks.common import arguments

ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@x", "GIT_CONFIG_NOSYSTEM": "1"}


def sh(*args: str, cwd: Path) -> str:
    return subprocess.run(args, cwd=cwd, env=ENV, check=True, capture_output=True,
                          text=True).stdout


def leap(*args: str, cwd: Path) -> float:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "leapgit", *args], cwd=cwd, env=ENV,
                          capture_output=True, text=True)
    took = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"leap {' '.join(args)} failed:\n{proc.stdout}{proc.stderr}")
    return took


def make_repo(root: Path, files: int, balls: int, builder: str | None = None) -> Path:
    repo = root / "repo"
    (repo / "src").mkdir(parents=True)
    for i in range(files):
        folder = repo / "src" / f"d{i % 50}"
        folder.mkdir(exist_ok=True)
        (folder / f"f{i}.py").write_text(f"X = {i}\n" + "# filler\n" * 20)
    sh("git", "init", "-q", "-b", "main", cwd=repo)
    sh("git", "add", "-A", cwd=repo)
    sh("git", "commit", "-q", "-m", "files", cwd=repo)
    leap("init", cwd=repo)
    if builder:
        cfg = repo / ".leap" / "config.yaml"
        cfg.write_text(cfg.read_text().replace(
            '  # command: my-agent --non-interactive --task "$LEAP_HANDOFF"',
            f"  command: {builder}"))
    lines = ["slice: bench", "spine: integrator", "balls:"]
    for b in range(balls):
        lines.append(f"  - {{id: b{b}, goal: g, spec: s, scope: [src/d{b}/f{b}.py, "
                     f"tests/b{b}.sh], proof: sh tests/b{b}.sh, "
                     f"tests: 'test ! -e tests/b{b}.sh || sh tests/b{b}.sh', "
                     "rollback: restore-scope}")
    (root / "slice.yaml").write_text("\n".join(lines) + "\n")
    leap("slice", "cut", str(root / "slice.yaml"), cwd=repo)
    reds(repo, "bench", [f"b{b}" for b in range(balls)])
    return repo


def reds(repo: Path, slice_id: str, balls: list[str], prefix: str = "") -> None:
    """T7.1: a ball is thrown after its red: a failing shell test, committed on main with
    plumbing, recorded with `leap red` (not timed)."""
    main = sh("git", "rev-parse", "main", cwd=repo).strip()
    for ball in balls:
        blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, env=ENV,
                              input=b"exit 1\n", check=True, capture_output=True
                              ).stdout.decode().strip()
        index = {**ENV, "GIT_INDEX_FILE": str(repo / ".git" / "bench-red.index")}
        for args in (["read-tree", main],
                     ["update-index", "--add", "--cacheinfo",
                      f"100644,{blob},tests/{prefix}{ball}.sh"]):
            subprocess.run(["git", *args], cwd=repo, env=index, check=True, capture_output=True)
        tree = subprocess.run(["git", "write-tree"], cwd=repo, env=index, check=True,
                              capture_output=True, text=True).stdout.strip()
        commit = sh("git", "commit-tree", tree, "-p", main, "-m", f"red: {ball}", cwd=repo)
        leap("red", slice_id, ball, commit.strip(), cwd=repo)


def bench_throw(files: int = 5000, balls: int = 8) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo = make_repo(root, files, balls)
        started = time.perf_counter()
        for b in range(balls):
            sh("git", "worktree", "add", "-q", "-b", f"plain{b}", str(root / "plain" / f"w{b}"),
               "main", cwd=repo)
        plain = time.perf_counter() - started
        ours = leap("throw", "bench", cwd=repo)
    print(f"throw {balls} balls, {files} files: leap throw {ours:.3f} s, "
          f"{balls} x git worktree add {plain:.3f} s, ratio {ours / plain:.2f}x (target < 1.3)")


def bench_run(balls: int = 8, sleep: float = 1.0) -> None:
    import io

    from leapgit.commands import throw as cmd

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        script = root / "sleepy.py"
        script.write_text(f"import os, time, pathlib\ntime.sleep({sleep})\n"
                          "pathlib.Path(os.environ['LEAP_REPORT']).write_text("
                          "'outcome: 1\\nevidence: slept\\n')\n")
        repo = make_repo(root, 50, balls, f"{sys.executable} {script}")
        for key in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME",
                    "GIT_COMMITTER_EMAIL"):
            os.environ[key] = ENV[key]
        thrown = cmd.throw("bench", start=repo)
        started = time.perf_counter()
        result = cmd.drive_builders(thrown, balls, io.StringIO(), live=False)
        fan_out = time.perf_counter() - started
        assert all(b.last and b.last.outcome == 1 for b in result.balls)
        # the whole command, throw included, as a user types it (a second slice, same shape)
        text = (root / "slice.yaml").read_text().replace("slice: bench", "slice: again")
        for b in range(balls):
            text = text.replace(f"src/d{b}/f{b}.py", f"src/d{b + 10}/f{b + 10}.py")
            text = text.replace(f"tests/b{b}.sh", f"tests/again-b{b}.sh")
        (root / "again.yaml").write_text(text)
        leap("slice", "cut", str(root / "again.yaml"), cwd=repo)
        reds(repo, "again", [f"b{b}" for b in range(balls)], "again-")
        whole = leap("throw", "again", "--run", "--jobs", str(balls), cwd=repo)
    print(f"run {balls} builders sleeping {sleep:g} s, --jobs {balls}: builder fan-out "
          f"{fan_out:.3f} s = {fan_out / sleep:.2f}x one builder's sleep (target < 1.6x; serial "
          f"would be >= {balls:.2f}x); whole `leap throw --run` command incl. interpreter "
          f"start and {balls} worktrees: {whole:.3f} s")


if __name__ == "__main__":
    if arguments(__doc__).smoke:
        bench_throw(files=50, balls=2)
        bench_run(balls=2, sleep=0.2)
    else:
        bench_throw()
        bench_run()
