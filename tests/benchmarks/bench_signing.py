"""Benchmark of signature enforcement (a plain script, not collected by pytest):

    .venv/bin/python tests/benchmarks/bench_signing.py

One push of 50 signed ledger commits and 5 signed integration merges onto a spine whose
config requires signatures. Measured in one run, medians of RUNS:

1. the whole pre-receive as git runs it (a process: start-up, every rule, S1-S6);
2. in-process: every push rule, and the signature rules alone (cold verification cache),
   giving the cost per signature;
3. the anchor: ``git verify-commit`` over the same 55 commits with the same policy as
   ``gpg.ssh.allowedSignersFile`` (one process for all, and one process per commit);
4. the audit of the whole history in the clone (``audit_signatures``: S1-S6 replayed per
   landed commit, the rounds too), cold (every signature verified) and warm (cached).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from leapgit.rules.context import PushContext, RefUpdate, server_config
from leapgit.rules.objects import Objects
from leapgit.rules.push import check_push
from leapgit.rules.signatures import check_signatures
from leapgit.signing import verify
from tests.signing.world import SLICE, SignedWorld, build_signed_world
from tests.support import IDENTITY, GitDaemon, git

RUNS = 5
MERGED = [f"m{i}" for i in range(5)]
EXTRA = [f"x{i:02d}" for i in range(13)]  # 13 balls x (throw, round 1, round 2) = 39 commits
os.environ.update(IDENTITY)
os.environ["GIT_CONFIG_NOSYSTEM"] = "1"
os.environ.pop("LEAP_SIGNING_KEY", None)


def draft() -> str:
    balls = "".join(f"  - {{id: {b}, goal: g, spec: s, scope: [src/{b}.py], proof: 'true', "
                    "rollback: restore-scope}\n" for b in MERGED + EXTRA)
    return f"slice: {SLICE}\nspine: integrator\nballs:\n{balls}"


def prepare(base: Path, daemon: GitDaemon) -> tuple[SignedWorld, list[str], list[str]]:
    files = {f"src/{b}.py": f"{b.upper()} = 0\n" for b in MERGED + EXTRA}
    w = build_signed_world(base, daemon, draft(), tuple(MERGED), files)
    trees = {b: w.build(b, {f"src/{b}.py": f"{b.upper()} = 1\n"}, "bob") for b in MERGED}
    pushed = w.push(*(f"leap/ball/{SLICE}/{b}" for b in MERGED))
    assert pushed.returncode == 0, pushed.stderr
    old_ledger = git("rev-parse", "leap/ledger", cwd=w.work)
    old_main = git("rev-parse", "main", cwd=w.work)
    for b in MERGED:
        w.receipt(b, "bob", claim=True)
        w.grade(b, "carol", trees[b])  # the score, red and tribunal records: one commit
    for b in EXTRA:
        w.throw(b)
        w.receipt(b, "alice", claim=True, outcome=0)
        w.receipt(b, "alice", claim=True, outcome=0, round_no=2)
    w.lease("ivan")
    for b in MERGED:
        w.merge(b, "ivan")
    ledger = git("rev-list", f"{old_ledger}..leap/ledger", cwd=w.work).split()
    merges = git("rev-list", "--first-parent", f"{old_main}..main", cwd=w.work).split()
    assert (len(ledger), len(merges)) == (50, 5), (len(ledger), len(merges))
    # the objects reach the remote under refs the rules ignore; the refs under test stay put
    pushed = w.push("leap/ledger:refs/bench/ledger", "main:refs/bench/main")
    assert pushed.returncode == 0, pushed.stderr
    return w, ledger, merges


def median(fn: Callable[[], object]) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, GitDaemon(Path(tmp)) as daemon:
        w, ledger, merges = prepare(Path(tmp), daemon)
        bare, commits = w.bare, ledger + merges
        lines = (f"{git('rev-parse', 'leap/ledger', cwd=bare)} {ledger[0]} "
                 f"refs/heads/leap/ledger\n{git('rev-parse', 'main', cwd=bare)} {merges[0]} "
                 "refs/heads/main\n")
        updates = tuple(RefUpdate(ref=r, old=o, new=n) for o, n, r in
                        (line.split(" ") for line in lines.splitlines()))
        from dulwich.repo import Repo

        def in_process(rules: Callable[[PushContext], list[object]]) -> Callable[[], None]:
            def run() -> None:
                verify._checked.clear()  # cold: every signature verified again
                with Repo(str(bare)) as repo:
                    objects = Objects(repo)
                    ctx = PushContext(objects, server_config(objects), updates)
                    found = rules(ctx)  # type: ignore[arg-type]
                    assert not found, found
            return run

        env = {**os.environ, "GIT_DIR": str(bare)}
        hook = [sys.executable, "-m", "leapgit.hookimpl.pre_receive"]

        def process() -> None:
            proc = subprocess.run(hook, input=lines.encode(), env=env, capture_output=True)
            assert proc.returncode == 0, proc.stderr.decode()

        allowed = ["-c", f"gpg.ssh.allowedSignersFile={w.work / '.leap/allowed_signers'}"]

        def verify_all() -> None:
            subprocess.run(["git", *allowed, "verify-commit", *commits], cwd=bare, check=True,
                           capture_output=True)

        def verify_each() -> None:
            for sha in commits:
                subprocess.run(["git", *allowed, "verify-commit", sha], cwd=bare, check=True,
                               capture_output=True)

        def serial() -> None:
            verify._checked.clear()
            with Repo(str(bare)) as repo:
                for sha in commits:
                    verify.signature_of(repo[sha.encode()])  # type: ignore[arg-type]

        from leapgit.audit.signatures import audit_signatures
        from leapgit.records.config import load_config

        audited: list[int] = []

        def audit(cold: bool) -> Callable[[], None]:
            def run() -> None:
                if cold:
                    verify._checked.clear()
                with Repo(str(w.work)) as repo:
                    found = audit_signatures(repo, load_config(w.work))
                assert all(f.ok for f in found), [f for f in found if not f.ok]
                audited[:] = [len(found)]
            return run

        audit_cold = median(audit(True))
        audit_warm = median(audit(False))
        serial_s = median(serial)
        hook_s = median(process)
        rules_s = median(in_process(check_push))  # type: ignore[arg-type]
        sig_s = median(in_process(check_signatures))  # type: ignore[arg-type]
        git_all = median(verify_all)
        git_each = median(verify_each)
        n = len(commits)
        print(f"push under test: {len(ledger)} signed ledger commits + {len(merges)} signed "
              f"merges = {n} signatures (ssh-ed25519), medians of {RUNS}")
        print(f"  pre-receive process, all rules        {hook_s * 1000:8.1f} ms")
        print(f"  in-process, all push rules            {rules_s * 1000:8.1f} ms")
        print(f"  in-process, signature rules S1-S6     {sig_s * 1000:8.1f} ms  "
              f"= {sig_s / n * 1000:.2f} ms a signature")
        print(f"  verification alone, one at a time     {serial_s * 1000:8.1f} ms  "
              f"= {serial_s / n * 1000:.2f} ms a signature (ssh-keygen -Y check-novalidate)")
        print(f"  git verify-commit, one process        {git_all * 1000:8.1f} ms  "
              f"= {git_all / n * 1000:.2f} ms a signature")
        print(f"  git verify-commit, a process each     {git_each * 1000:8.1f} ms  "
              f"= {git_each / n * 1000:.2f} ms a signature")
        print(f"  ratio: leapgit signature rules / git verify-commit (one process) = "
              f"{sig_s / git_all:.2f}")
        print(f"  audit of the whole history ({audited[0]} commits judged), cold "
              f"{audit_cold * 1000:8.1f} ms, warm {audit_warm * 1000:8.1f} ms "
              f"= {audit_warm / audited[0] * 1000:.2f} ms a commit besides its signature")


if __name__ == "__main__":
    main()
