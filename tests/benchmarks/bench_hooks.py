"""Benchmarks for the hooks (a plain script, not collected by pytest): ratios measured in
one run.

    python -m tests.benchmarks.bench_hooks [--smoke]

1. post-commit: a commit with no hook, with leapgit's hook outside a ball worktree, with
   leapgit's hook inside one (scope check + round record), and with the pre-commit
   framework's hook over an empty config (the anchor, needs `pre-commit` installed).
2. pre-receive: one push of 50 ball commits (13 ball branches) against ledgers of 500
   and 5,000 records; the cost must not grow with the ledger.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from leapgit.ledger import layout
from leapgit.ledger.store import Ledger
from leapgit.records import yamlio
from leapgit.records.types import SliceRecord, ThrowRecord
from tests.benchmarks.common import arguments
from tests.support import IDENTITY, git, leap, make_repo

NOW = "2024-01-01T00:00:00Z"
# a recording post-commit starts as `python -I -S`, puts site-packages on its path (without
# their .pth files: ``post_commit.load_site``), and cannot write the ledger without
# dulwich's objects, object store, refs and config (the design card: the ledger is written
# with dulwich): what no change to leapgit's own code can take off the hook. It leaves as the
# hook does (``post_commit.exit_now``), without the interpreter's teardown: counted here
# before, the teardown the hook never pays made the floor look ~10 ms higher and leapgit's
# own share that much smaller
LIBS = list(dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib")))
FLOOR = (f"import sys; sys.path.extend({LIBS!r}); sys.modules['_hashlib'] = None; "
         "import dulwich.objects, dulwich.object_store, dulwich.refs, dulwich.config; "
         "import os; os._exit(0)")
os.environ.update(IDENTITY)
os.environ["GIT_CONFIG_NOSYSTEM"] = "1"


@dataclass(frozen=True)
class Size:
    balls: int = 6  # post-commit: ball worktrees, ``rounds`` recorded rounds each
    rounds: int = 4
    runs: int = 21  # the hook scripts alone
    branches: int = 13  # pre-receive: one push of ``commits`` commits on these branches
    commits: int = 50
    ledgers: tuple[int, int] = (500, 5000)  # records in the ledger pushed against
    pushes: int = 5


SMOKE = Size(balls=1, rounds=2, runs=1, branches=2, commits=3, ledgers=(20, 40), pushes=1)


def timed(cmd: list[str], cwd: Path, stdin: bytes | None = None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, input=stdin, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} failed: {proc.stderr.decode()}")
    return elapsed


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def slice_draft(balls: int) -> str:
    out = "slice: s1\nspine: integrator\nballs:\n"
    for i in range(balls):
        out += (f"  - id: b{i}\n    goal: g\n    spec: s\n    scope: [src/f{i}.py]\n"
                f"    proof: \"true\"\n    tests: \"true\"\n    rollback: restore-scope\n")
    return out


def project(root: Path, balls: int) -> tuple[Path, str]:
    files = {f"src/f{i}.py": f"X = {i}\n" for i in range(balls)}
    repo = make_repo(root, {**files, "README.md": "# bench\n"})
    assert leap("init", cwd=repo).code == 0
    git("add", ".leap/config.yaml", cwd=repo)
    git("commit", "-q", "-m", "config", cwd=repo)
    (repo / "slice.yaml").write_text(slice_draft(balls))
    assert leap("slice", "cut", "slice.yaml", cwd=repo).code == 0, "cut failed"
    (repo / "slice.yaml").unlink()
    base = git("rev-parse", "HEAD", cwd=repo)
    with Ledger(repo / ".git") as ledger:
        records = {}
        for i in range(balls):
            rec = ThrowRecord("s1", f"b{i}", 1, 1, base, f"leap/ball/s1/b{i}", NOW)
            records[layout.throw_path("s1", f"b{i}", 1)] = yamlio.dumps(rec.to_dict())
        ledger.append(records, "throw every ball")
    return repo, base


def bench_post_commit(tmp: Path, size: Size) -> None:
    repo, base = project(tmp / "pc", balls=max(2, size.balls))  # L4: two balls at least
    plain = make_repo(tmp / "plain", {"a.txt": "a\n"})
    anchor = make_repo(tmp / "anchor", {"a.txt": "a\n"})
    (anchor / ".pre-commit-config.yaml").write_text("repos: []\n")
    pre_commit = shutil.which("pre-commit", path=str(Path(sys.executable).parent))
    if pre_commit is None:
        raise SystemExit("pip install pre-commit for the anchor")
    git("add", "-A", cwd=anchor)
    git("commit", "-q", "-m", "config", cwd=anchor)
    subprocess.run([pre_commit, "install", "-t", "post-commit"], cwd=anchor, check=True,
                   capture_output=True)
    commit = ["git", "commit", "-q", "--allow-empty", "-m", "x"]
    none: list[float] = []
    none_ball: list[float] = []  # the same kind of commit as a round, with no hook run
    outside: list[float] = []
    anchor_t: list[float] = []
    inside: list[float] = []
    cold: list[float] = []  # a ball's first round: its records are not in the hook's cache
    floor: list[float] = []  # the interpreter and dulwich alone (FLOOR), as a process
    # interleaved, one of each kind in turn, so a load that comes and goes on a shared
    # machine weighs on every kind alike and the ratios stay fair
    spare = tmp / "wt-spare"
    git("worktree", "add", "-q", "-b", "scratch", str(spare), base, cwd=repo)
    for i in range(size.balls):
        wt = tmp / f"wt{i}"
        git("worktree", "add", "-q", "-b", f"leap/ball/s1/b{i}", str(wt), base, cwd=repo)
        for n in range(1, size.rounds + 1):
            (wt / f"src/f{i}.py").write_text(f"X = {n}00\n")
            git("add", "-A", cwd=wt)
            took = timed(commit[:-1] + [f"r{n}\n\nLeap-Round: {n}\nLeap-Outcome: 0"], wt)
            (cold if n == 1 else inside).append(took)
            (spare / f"src/f{i}.py").write_text(f"X = {n}00\n")
            git("add", "-A", cwd=spare)
            none_ball.append(timed(["git", "-c", "core.hooksPath=/dev/null", *commit[1:-1],
                                    f"r{n}\n\nLeap-Round: {n}\nLeap-Outcome: 0"], spare))
            none.append(timed(commit, plain))
            outside.append(timed(commit, repo))
            anchor_t.append(timed(commit, anchor))
            floor.append(timed([sys.executable, "-I", "-S", "-c", FLOOR], repo))
    hook_only = [timed([str(repo / ".git/hooks/post-commit")], repo) for _ in range(size.runs)]
    anchor_hook = [timed([str(anchor / ".git/hooks/post-commit")], anchor)
                   for _ in range(size.runs)]
    with Ledger(repo / ".git") as ledger:
        rounds = sum(1 for p in ledger.view().walk("slices") if "/receipts/" in p)
    expected = size.balls * size.rounds
    assert rounds == expected, f"expected {expected} recorded rounds, found {rounds}"
    n, o, a, i, c = (median_ms(x) for x in (none, outside, anchor_t, inside, cold))
    nb = median_ms(none_ball)
    print("post-commit (median wall ms per `git commit`; hook cost = the commit minus the same "
          "kind of commit with no hook)")
    print(f"  no hook, an empty commit        {n:7.1f}")
    print(f"  no hook, a round's commit       {nb:7.1f}   (a changed file, in a linked worktree)")
    print(f"  leapgit, outside a ball         {o:7.1f}   hook cost {o - n:6.1f}")
    print(f"  leapgit, in a ball worktree     {i:7.1f}   hook cost {i - nb:6.1f}  (rounds "
          f"2-{size.rounds} of {size.balls} ball(s))")
    print(f"  leapgit, a ball's first round   {c:7.1f}   hook cost {c - nb:6.1f}  (its records "
          "parsed once; `leap throw` does that for the hook)")
    print(f"  pre-commit, empty config        {a:7.1f}   hook cost {a - n:6.1f}")
    print(f"  hook script alone: leapgit outside {median_ms(hook_only):.1f} ms, pre-commit "
          f"{median_ms(anchor_hook):.1f} ms")
    print(f"  ratios of hook cost to pre-commit's: outside {(o - n) / (a - n):.2f}x, "
          f"in a ball {(i - nb) / (a - n):.2f}x (a first round {(c - nb) / (a - n):.2f}x)")
    f = median_ms(floor)
    print(f"  the floor of a recording hook: the interpreter as the hook starts it with the "
          f"dulwich modules it writes the ledger through, no leapgit: {f:.1f} ms, "
          f"{f / (a - n):.2f}x pre-commit's hook cost; leapgit's own share in a ball: "
          f"{(i - nb - f) / (a - n):.2f}x")


def fill_ledger(repo: Path, base: str, records: int) -> None:
    with Ledger(repo / ".git") as ledger:
        have = sum(1 for _ in ledger.view().walk())
        batch: dict[str, bytes] = {}
        for i in range(records - have):
            rec = SliceRecord(f"filler-{i}", "main", base, ("x",), (("x",),), NOW)
            batch[layout.slice_path(rec.slice)] = yamlio.dumps(rec.to_dict())
            if len(batch) == 250:
                ledger.append(batch, "filler")
                batch = {}
        if batch:
            ledger.append(batch, "filler")


def bench_pre_receive(tmp: Path, records: int, size: Size) -> float:
    work, base = project(tmp / f"pr{records}", balls=max(2, size.branches))
    fill_ledger(work, base, records)
    bare = tmp / f"pr{records}.git"
    git("init", "-q", "--bare", "-b", "main", str(bare), cwd=tmp)
    git("push", "-q", "--no-verify", str(bare), "main", "leap/ledger", cwd=work)
    assert leap("hooks", "install", "--server", cwd=bare).code == 0
    refs = []
    made = 0
    for i in range(size.branches):
        branch = f"leap/ball/s1/b{i}"
        git("checkout", "-q", "-b", branch, base, cwd=work)
        for n in range(1, 5):
            if made == size.commits:
                break
            (work / f"src/f{i}.py").write_text(f"X = {n}00\n")
            git("add", "-A", cwd=work)
            git("-c", "core.hooksPath=/dev/null", "commit", "-q", "-m",
                f"r{n}\n\nLeap-Round: {n}\nLeap-Outcome: 0", cwd=work)
            made += 1
        refs.append(branch)
    samples = []
    for _ in range(size.pushes):
        samples.append(timed(["git", "push", "-q", "--no-verify", str(bare), *refs], work))
        for ref in refs:  # objects stay: the next push re-runs the hook on the same commits
            git("update-ref", "-d", f"refs/heads/{ref}", cwd=bare)
    return median_ms(samples)


def main() -> None:
    size = SMOKE if arguments(__doc__).smoke else Size()
    tmp = Path(tempfile.mkdtemp(prefix="leap-bench-"))
    try:
        bench_post_commit(tmp, size)
        few, many = size.ledgers
        small = bench_pre_receive(tmp, few, size)
        large = bench_pre_receive(tmp, many, size)
        print(f"pre-receive: one push of {size.commits} ball commits on {size.branches} "
              "branches (median wall ms)")
        print(f"  ledger of {few:>6,} records         {small:7.1f}")
        print(f"  ledger of {many:>6,} records         {large:7.1f}   ratio {large / small:.2f}x")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
