"""Benchmark of signature enforcement (a plain script, not collected by pytest):

    python -m tests.benchmarks.bench_signing [--smoke]

50 signed ledger commits and 5 signed integration merges pushed onto a spine whose config
requires signatures (--smoke: 6 and 1), the ledger first, then the spine, as `leap merge`
pushes them (the spine is judged against the ledger the server stores). Measured in one
run, medians of 5 runs, the two pushes' added:

1. the whole pre-receive as git runs it (processes: start-up, every rule, S1-S6);
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
from tests.benchmarks.common import arguments
from tests.signing.world import SLICE, SignedWorld, build_signed_world
from tests.support import IDENTITY, GitDaemon, git

os.environ.update(IDENTITY)
os.environ["GIT_CONFIG_NOSYSTEM"] = "1"
os.environ.pop("LEAP_SIGNING_KEY", None)


def draft(balls: list[str]) -> str:
    listed = "".join(f"  - {{id: {b}, goal: g, spec: s, scope: [src/{b}.py], proof: 'true', "
                     "tests: 'true', rollback: restore-scope}\n" for b in balls)
    return f"slice: {SLICE}\nspine: integrator\nballs:\n{listed}"


def prepare(base: Path, daemon: GitDaemon, merged: int, extra: int
            ) -> tuple[SignedWorld, list[str], list[str]]:
    """``merged`` balls scored and merged, ``extra`` balls thrown with two held rounds each
    (throw, round 1, round 2: three ledger commits a ball)."""
    merged_ids = [f"m{i}" for i in range(merged)]
    extra_ids = [f"x{i:02d}" for i in range(extra)]
    files = {f"src/{b}.py": f"{b.upper()} = 0\n" for b in merged_ids + extra_ids}
    w = build_signed_world(base, daemon, draft(merged_ids + extra_ids), tuple(merged_ids), files)
    trees = {b: w.build(b, {f"src/{b}.py": f"{b.upper()} = 1\n"}, "bob") for b in merged_ids}
    pushed = w.push(*(f"leap/ball/{SLICE}/{b}" for b in merged_ids))
    assert pushed.returncode == 0, pushed.stderr
    old_ledger = git("rev-parse", "leap/ledger", cwd=w.work)
    old_main = git("rev-parse", "main", cwd=w.work)
    for b in merged_ids:
        w.receipt(b, "bob", claim=True)
        w.grade(b, "carol", trees[b])  # the score, red and tribunal records: one commit
    for b in extra_ids:
        w.throw(b)
        w.receipt(b, "alice", claim=True, outcome=0)
        w.receipt(b, "alice", claim=True, outcome=0, round_no=2)
    w.lease("ivan")
    for b in merged_ids:
        w.merge(b, "ivan")
    ledger = git("rev-list", f"{old_ledger}..leap/ledger", cwd=w.work).split()
    merges = git("rev-list", "--first-parent", f"{old_main}..main", cwd=w.work).split()
    # a merged ball: its receipt, its red (a pass names a red that exists, T7.1) and its
    # grade; an extra ball: its red (before its first receipt), its throw and two rounds; a lease
    expected = (3 * merged + 4 * extra + 1, merged)
    assert (len(ledger), len(merges)) == expected, (len(ledger), len(merges))
    # the objects reach the remote under refs the rules ignore; the refs under test stay put
    pushed = w.push("leap/ledger:refs/bench/ledger", "main:refs/bench/main")
    assert pushed.returncode == 0, pushed.stderr
    return w, ledger, merges


def median(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    smoke = arguments(__doc__).smoke
    merged, extra, runs = (1, 1, 1) if smoke else (5, 13, 5)
    with tempfile.TemporaryDirectory() as tmp, GitDaemon(Path(tmp)) as daemon:
        w, ledger, merges = prepare(Path(tmp), daemon, merged, extra)
        bare, commits = w.bare, ledger + merges
        # the ledger goes up first, then the spine, as `leap merge` pushes them: the spine is
        # judged against the ledger the server stores, never one the same push carries (F1)
        stages = [f"{git('rev-parse', 'leap/ledger', cwd=bare)} {ledger[0]} "
                  "refs/heads/leap/ledger\n",
                  f"{git('rev-parse', 'main', cwd=bare)} {merges[0]} refs/heads/main\n"]
        from dulwich.repo import Repo

        def in_process(rules: Callable[[PushContext], list[object]], line: str
                       ) -> Callable[[], None]:
            old, new, ref = line.split()
            updates = (RefUpdate(ref=ref, old=old, new=new),)

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

        def process(line: str) -> Callable[[], None]:
            def run() -> None:
                proc = subprocess.run(hook, input=line.encode(), env=env, capture_output=True)
                assert proc.returncode == 0, proc.stderr.decode()
            return run

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

        audit_cold = median(audit(True), runs)
        audit_warm = median(audit(False), runs)
        serial_s = median(serial, runs)
        hook_s = rules_s = sig_s = 0.0
        for line in stages:  # a sum of the two pushes' medians
            hook_s += median(process(line), runs)
            rules_s += median(in_process(check_push, line), runs)  # type: ignore[arg-type]
            sig_s += median(in_process(check_signatures, line), runs)  # type: ignore[arg-type]
            old, new, ref = line.split()
            git("update-ref", ref, new, old, cwd=bare)  # as git does once the hook accepts
        git_all = median(verify_all, runs)
        git_each = median(verify_each, runs)
        n = len(commits)
        print(f"push under test: {len(ledger)} signed ledger commits + {len(merges)} signed "
              f"merges = {n} signatures (ssh-ed25519), medians of {runs}")
        print(f"  pre-receive processes, all rules      {hook_s * 1000:8.1f} ms  (the ledger's "
              "push, then the spine's)")
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
              f"{sig_s / git_all:.2f}x")
        print(f"  audit of the whole history ({audited[0]} commits judged), cold "
              f"{audit_cold * 1000:8.1f} ms, warm {audit_warm * 1000:8.1f} ms "
              f"= {audit_warm / audited[0] * 1000:.2f} ms a commit besides its signature")


if __name__ == "__main__":
    main()
