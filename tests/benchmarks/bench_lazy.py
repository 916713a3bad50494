"""What leapgit's lazy imports keep out of the start-ups issue 13 names, each measured.

    python -m tests.benchmarks.bench_lazy [--smoke] [--list]

Six start-ups, each run as a process under `python -X importtime` with no `.pth` file
(an editable install's finder loads pathlib and importlib.util at interpreter start, which
hides a lazy import of either): `leap --version`, `leap status` of a cut slice, the
post-commit hook on an ordinary commit (its fast path) and recording a round in a ball
worktree, pre-push judging a ball branch, and pre-receive judging a push of ball commits.
For each: the modules it loads and their import
time; then every in-function import, in a module the start-up loads, of a module it does not
load (a lazy import that start-up needs), and what those modules, with the ones they import
in turn, cost when imported after all of the start-up's own, in one process. Both sides are
`-X importtime` self times (the cost kept out is the median of five runs); the ratio is the
one against the other. `--list` prints each such lazy import with the modules it keeps out,
and each lazy import none of the six runs needs (an early exit, another kind of push, a
refusal, a provider's dispatch, an import cycle); tests/test_layers.py fails on one that
defers nothing at all.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import os
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from tests.benchmarks.common import arguments, git

ROOT = Path(__file__).resolve().parents[2]
LIBS = list(dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib")))
# an interpreter that finds site-packages and this checkout without running any .pth file
PATHS = f"import sys; sys.path[:0] = {[*LIBS, str(ROOT)]!r}"
_IMPORTTIME = re.compile(r"^import time:\s+(\d+) \|\s+\d+ \| ( *)(\S+)$")


def loaded(stderr: str) -> dict[str, int]:
    """module -> its own import time (us), from `-X importtime`'s lines. importtime logs a
    failed import too (`nt`, `msvcrt`, optional accelerators tried in a `try`): only
    modules that exist here are kept."""
    found: dict[str, int] = {}
    for line in stderr.splitlines():
        m = _IMPORTTIME.match(line)
        if m and _exists(m.group(3)):
            found[m.group(3)] = int(m.group(1))
    return found


def _exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def run_python(args: list[str], cwd: Path, stdin: str | None = None,
               env: dict[str, str] | None = None) -> dict[str, int]:
    proc = subprocess.run([sys.executable, "-X", "importtime", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"{args} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return loaded(proc.stderr)


def cli(cwd: Path, *argv: str) -> dict[str, int]:
    code = (f"{PATHS}; sys.argv = ['leap', *{list(argv)!r}]; "
            "from leapgit.launch import main; main()")
    return run_python(["-S", "-c", code], cwd)


def post_commit_outside(tmp: Path) -> dict[str, int]:
    """An ordinary commit, on no ball branch: the hook's fast path, every commit's cost."""
    from tests.benchmarks.bench_hooks import project

    repo, _ = project(tmp / "plain", balls=2)
    (repo / "README.md").write_text("# changed\n")
    git("-c", "core.hooksPath=/dev/null", "commit", "-q", "-am", "a change", cwd=repo)
    hook = ROOT / "leapgit" / "hookimpl" / "post_commit.py"
    found = run_python(["-I", "-S", str(hook), str(repo / ".git" / "hooks" / "post-commit")],
                       repo)
    return {"leapgit.hookimpl.post_commit": 0, **found}  # run as a script: its own lazies


def post_commit(tmp: Path) -> dict[str, int]:
    """A round's commit in a ball worktree, made without hooks, then the hook as git runs
    it (`python -I -S post_commit.py`: it finds its libraries itself)."""
    from tests.benchmarks.bench_hooks import project

    repo, base = project(tmp / "pc", balls=2)
    wt = tmp / "wt"
    git("worktree", "add", "-q", "-b", "leap/ball/s1/b0", str(wt), base, cwd=repo)
    (wt / "src" / "f0.py").write_text("X = 100\n")
    git("add", "-A", cwd=wt)
    git("-c", "core.hooksPath=/dev/null", "commit", "-q", "-m",
        "r1\n\nLeap-Round: 1\nLeap-Outcome: 0", cwd=wt)
    hook = ROOT / "leapgit" / "hookimpl" / "post_commit.py"
    found = run_python(["-I", "-S", str(hook), str(repo / ".git" / "hooks" / "post-commit")],
                       wt)
    return {"leapgit.hookimpl.post_commit": 0, **found}  # run as a script: its own lazies


def pre_push(tmp: Path) -> dict[str, int]:
    """The push of a ball branch with one round from a clone, judged before the network as
    git runs the hook: the ref update on stdin, the remote's name and URL as arguments."""
    return run_pre_push(*pre_push_world(tmp))


def pre_push_world(tmp: Path) -> tuple[Path, Path, str]:
    """A clone with a ball branch of one round to push: (the clone, its remote, the line
    git gives the hook on stdin)."""
    from tests.benchmarks.bench_hooks import project

    work, base = project(tmp / "pp", balls=2)
    bare = tmp / "pp.git"
    git("init", "-q", "--bare", "-b", "main", str(bare), cwd=tmp)
    git("push", "-q", "--no-verify", str(bare), "main", "leap/ledger", cwd=work)
    git("remote", "add", "origin", str(bare), cwd=work)
    git("fetch", "-q", "origin", cwd=work)
    git("checkout", "-q", "-b", "leap/ball/s1/b0", base, cwd=work)
    (work / "src" / "f0.py").write_text("X = 100\n")
    git("add", "-A", cwd=work)
    git("-c", "core.hooksPath=/dev/null", "commit", "-q", "-m",
        "r1\n\nLeap-Round: 1\nLeap-Outcome: 0", cwd=work)
    ref = "refs/heads/leap/ball/s1/b0"
    return work, bare, f"{ref} {git('rev-parse', 'HEAD', cwd=work)} {ref} {'0' * 40}\n"


def run_pre_push(work: Path, bare: Path, line: str) -> dict[str, int]:
    """The pre-push hook's program on ``line``, as the installed hook starts it."""
    code = f"{PATHS}; import runpy; runpy.run_module('leapgit.hookimpl.pre_push', " \
           "run_name='__main__')"
    found = run_python(["-I", "-S", "-c", code, str(work / ".git" / "hooks" / "pre-push"),
                        "origin", str(bare)], work, stdin=line)
    return {"leapgit.hookimpl.pre_push": 0, **found}  # run as __main__: its own lazies


def pre_receive(tmp: Path) -> dict[str, int]:
    """A push of ball commits: its objects sent with the hook off, then the hook run on
    the update as receive-pack runs it (the refs' old side still absent)."""
    from tests.benchmarks.bench_hooks import project

    work, base = project(tmp / "pr", balls=2)
    bare = tmp / "pr.git"
    git("init", "-q", "--bare", "-b", "main", str(bare), cwd=tmp)
    git("push", "-q", "--no-verify", str(bare), "main", "leap/ledger", cwd=work)
    lines = []
    for i in range(2):
        branch = f"leap/ball/s1/b{i}"
        git("checkout", "-q", "-b", branch, base, cwd=work)
        (work / f"src/f{i}.py").write_text("X = 100\n")
        git("add", "-A", cwd=work)
        git("-c", "core.hooksPath=/dev/null", "commit", "-q", "-m",
            "r1\n\nLeap-Round: 1\nLeap-Outcome: 0", cwd=work)
        lines.append(f"{'0' * 40} {git('rev-parse', 'HEAD', cwd=work)} refs/heads/{branch}")
        git("push", "-q", "--no-verify", str(bare), branch, cwd=work)
        git("update-ref", "-d", f"refs/heads/{branch}", cwd=bare)
    code = f"{PATHS}; import runpy; runpy.run_module('leapgit.hookimpl.pre_receive', " \
           "run_name='__main__')"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    found = run_python(["-I", "-S", "-c", code, str(bare / "hooks" / "pre-receive")], bare,
                       stdin="\n".join(lines) + "\n", env={**env, "GIT_DIR": str(bare)})
    return {"leapgit.hookimpl.pre_receive": 0, **found}  # run as __main__: its own lazies


def lazy_imports() -> list[tuple[str, int, list[str]]]:
    """(module, line, modules named) of every in-function import of leapgit."""
    sys.path.insert(0, str(ROOT))
    from tests.test_layers import _imports, _names

    modules = {}
    for path in (ROOT / "leapgit").rglob("*.py"):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        modules[name] = path
    out = []
    for name, path in sorted(modules.items()):
        for depth, node in _imports(ast.parse(path.read_text())):
            if depth:
                out.append((name, node.lineno, _names(name, node, modules)))
    return out


MARK = "-- the start-up's own modules are in; the lazy imports' modules follow --"


def cost_of(start: dict[str, int], deferred: set[str]) -> tuple[float, int]:
    """(ms, modules): what importing ``deferred`` adds after every module of the start-up
    is in, measured as the start-up is (`-X importtime` self times), in one process; the
    modules count those the deferred ones import in turn. A deferred module that fails to
    import stops the bench: it would shrink the figure without a word."""
    if not deferred:
        return 0.0, 0
    own = sorted(m for m in start if m not in ("__main__", "leapgit.__main__"))
    code = (f"{PATHS}; import importlib\n"
            f"for m in {own!r}:\n    try:\n        importlib.import_module(m)\n"
            "    except Exception:\n        pass\n"
            f"sys.stderr.write({MARK!r} + '\\n'); sys.stderr.flush()\n"
            f"for m in {sorted(deferred)!r}:\n    importlib.import_module(m)\n")
    proc = subprocess.run([sys.executable, "-S", "-X", "importtime", "-c", code],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"importing the deferred modules failed:\n{proc.stderr[-3000:]}")
    after = loaded(proc.stderr.split(MARK, 1)[1])
    return sum(after.values()) / 1000, len(after)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--list", action="store_true", help="each lazy import a start-up needs")
    opts = arguments(__doc__, parser)
    tmp = Path(tempfile.mkdtemp(prefix="leap-bench-lazy-"))
    try:
        from tests.benchmarks.bench_cli import _repo

        env_repo = _repo(tmp / "cli", dict(os.environ))
        starts = {"leap --version": cli(tmp, "--version"),
                  "leap status": cli(env_repo, "status"),
                  "post-commit, outside a ball": post_commit_outside(tmp),
                  "post-commit, recording": post_commit(tmp),
                  "pre-push, a ball branch": pre_push(tmp),
                  "pre-receive, ball commits": pre_receive(tmp)}
        lazies = lazy_imports()
        needed: set[tuple[str, int]] = set()
        print("what the lazy imports keep out of each start-up (a process each, no .pth file)")
        for name, start in starts.items():
            keep = [(m, line, [n for n in names if n not in start])
                    for m, line, names in lazies
                    if m in start and any(n not in start for n in names)]
            needed |= {(m, line) for m, line, _ in keep}
            deferred = {n for _, _, names in keep for n in names}
            own_ms = sum(start.values()) / 1000
            costs = [cost_of(start, deferred) for _ in range(1 if opts.smoke else 5)]
            kept_ms = statistics.median(c[0] for c in costs)
            print(f"  {name:<27} loads {len(start):>3} modules ({own_ms:6.1f} ms of imports); "
                  f"{len(keep):>3} lazy imports name {len(deferred):>3} modules it does not "
                  f"load, {costs[0][1]:>3} with theirs ({kept_ms:6.1f} ms): "
                  f"{kept_ms / own_ms:.2f}x its own import time")
            if opts.list:
                for m, line, names in keep:
                    print(f"      {m}:{line}: {', '.join(names)}")
        loaded_somewhere = set().union(*starts.values())
        idle = [(m, line) for m, line, _ in lazies if (m, line) not in needed]
        unloaded = [x for x in idle if x[0] not in loaded_somewhere]
        if opts.list:
            for m, line in idle:
                print(f"      not needed by these runs: {m}:{line}")
        print(f"  lazy imports: {len(lazies)}; needed by a start-up above: {len(needed)}; "
              f"not needed by these six runs: {len(idle)}, {len(unloaded)} of them in "
              "modules none of the six loads (`--list` names each)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
