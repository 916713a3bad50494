"""`leap audit` over 1,000 and 10,000 merged balls: linear in the ledger's size, and against
`git log --raw` of the same ledger (the anchor), both as processes, measured in one run.

    python -m tests.benchmarks.bench_audit [--smoke] [--sizes 1000 10000] [--runs 3]

The repository is written directly, in the shape leapgit writes it, in a few seconds:
the code objects with dulwich (one pack), the ledger with one `git fast-import` stream.
Per slice of ten balls: a cut commit (slice and ball records), per ball a red commit (the
thrower's failing test) and a round commit on its ball branch, one throw commit, per ball
a receipt, a tribunal run (summary, two verdicts) and a score commit, then a lease, an
aggregate review, ten integration merges on the spine, the slice pass record and the
lease's release: 46 ledger commits and 87 records a slice, every check of the audit fed.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tests.benchmarks.common import arguments, git

NOW = "2024-01-01T00:00:00Z"
EPOCH = 1_704_067_200  # NOW as a committer time
PER_SLICE = 10
SPINE, LEDGER_REF, HOLDER = "main", "refs/heads/leap/ledger", "integrator"
CONFIG = f"version: 1\nspine: {SPINE}\nledger_ref: {LEDGER_REF}\n"
IDENT = b"Bench <bench@example.invalid>"


@dataclass
class Code:
    """The code side as dulwich objects: trees are written path by path, copy on write."""

    objects: list[object] = field(default_factory=list)
    trees: dict[bytes, dict[bytes, tuple[int, bytes]]] = field(default_factory=dict)
    clock: int = EPOCH

    def blob(self, data: bytes) -> bytes:
        from dulwich.objects import Blob

        obj = Blob.from_string(data)
        self.objects.append(obj)
        return obj.id

    def tree(self, entries: dict[bytes, tuple[int, bytes]]) -> bytes:
        from dulwich.objects import Tree

        obj = Tree()
        for name, (mode, sha) in entries.items():
            obj.add(name, mode, sha)
        self.objects.append(obj)
        self.trees[obj.id] = dict(entries)
        return obj.id

    def with_file(self, tree: bytes | None, path: str, blob: bytes) -> bytes:
        """``tree`` with ``path`` set to ``blob``: only the trees on the path are new."""
        first, _, rest = path.partition("/")
        entries = dict(self.trees[tree]) if tree is not None else {}
        if not rest:
            entries[first.encode()] = (0o100644, blob)
        else:
            sub = entries.get(first.encode())
            entries[first.encode()] = (0o040000, self.with_file(sub[1] if sub else None,
                                                                 rest, blob))
        return self.tree(entries)

    def commit(self, tree: bytes, parents: list[bytes], message: str) -> bytes:
        from dulwich.objects import Commit

        obj = Commit()
        obj.tree, obj.parents, obj.message = tree, parents, message.encode()
        obj.author = obj.committer = IDENT
        self.clock += 1
        obj.author_time = obj.commit_time = self.clock
        obj.author_timezone = obj.commit_timezone = 0
        self.objects.append(obj)
        return obj.id


@dataclass(frozen=True)
class Ball:
    slice: str
    ball: str
    src: str
    test: str
    test_blob: str
    src_blob: str
    red: str  # the red commit
    commit: str  # the round commit: the candidate commit
    tree: str  # its tree: the candidate
    merge: str = ""  # its integration merge on the spine


def _paths(s: int, b: int) -> tuple[str, str]:
    group = f"g{s // 32}"  # keeps every tree small: 32 slices a folder
    return f"src/{group}/s{s}/b{b}.py", f"tests/{group}/s{s}/test_b{b}.py"


def _code_slice(code: Code, s: int, spine: bytes, base_tree: bytes
                ) -> tuple[list[Ball], bytes, bytes]:
    """A slice's ball branches (red commit, one round) from the spine's tip ``spine``, and
    their integration merges on it; returns the balls and the new spine tip and tree."""
    balls, tip, tip_tree = [], spine, base_tree
    for b in range(PER_SLICE):
        src, test = _paths(s, b)
        test_blob = code.blob(f"def test_b{b}():\n    assert {s} + {b} >= 0\n".encode())
        red_tree = code.with_file(base_tree, test, test_blob)
        red = code.commit(red_tree, [spine], f"red: contract test of s{s}/b{b}\n")
        src_blob = code.blob(f"VALUE = {s * PER_SLICE + b}\n".encode())
        tree = code.with_file(red_tree, src, src_blob)
        commit = code.commit(tree, [red], f"leap: round 1 of s{s}/b{b} (pass)\n\n"
                             f"Leap-Slice: s{s}\nLeap-Ball: b{b}\nLeap-Round: 1\n"
                             "Leap-Outcome: 1\nLeap-Evidence: built\n")
        tip_tree = code.with_file(code.with_file(tip_tree, test, test_blob), src, src_blob)
        tip = code.commit(tip_tree, [tip, commit], f"leap: integrate s{s}/b{b} (candidate "
                          f"{tree.decode()[:12]})\n\nLeap-Slice: s{s}\nLeap-Ball: b{b}\n"
                          f"Leap-Candidate: {tree.decode()}\nLeap-Tribunal: t-s{s}-b{b}\n"
                          "Leap-Score: 1\n")
        balls.append(Ball(f"s{s}", f"b{b}", src, test, test_blob.decode(), src_blob.decode(),
                          red.decode(), commit.decode(), tree.decode(), tip.decode()))
    return balls, tip, tip_tree


def _records(rec: object) -> bytes:
    from leapgit.records import yamlio

    return yamlio.dumps(rec.to_dict())  # type: ignore[attr-defined]


def _score(b: Ball, base: str, run_id: str) -> bytes:
    """The pass record `leap score` writes (``tests.support.pass_files``' chain), with the
    files the candidate touched, which the spine must keep (L8: a change reopens)."""

    from leapgit.ledger import layout
    from leapgit.records.scoring import (
        FileBlob,
        PassProvenance,
        Reviewer,
        RunEvidence,
        ScoreRecord,
        Step,
    )

    folder = layout.tribunal_dir(run_id, b.slice, b.ball)
    lenses = ("defect", "proportion")
    prov = PassProvenance(b.slice, b.ball, "goal", "model=builder-x,family=buildfam,session=s-1",
                          1, tuple(Reviewer(lens, "r", "jurorfam") for lens in lenses),
                          tuple(f"{folder}/verdicts/{lens}.yaml" for lens in lenses),
                          f"{folder}/summary.yaml", run_id, (RunEvidence("tests", "true", 0),),
                          None, 1, b.tree)
    score = ScoreRecord(b.slice, b.ball, 1, 1, 1, 1, 1, "pass", b.tree, b.commit, base,
                        (Step("source", "ok", "2 touched file(s) in scope"),), NOW,
                        provenance=prov)
    touched = tuple(sorted((FileBlob(b.src, b.src_blob), FileBlob(b.test, b.test_blob)),
                           key=lambda f: f.path))
    return _records(score._replace(touched=touched))


def _aggregate(sid: str, run_id: str, tip: str, tree: str, base: str) -> dict[str, bytes]:
    """The slice's aggregate review: a top-level tribunal run over the merged tree."""
    from leapgit.records import schema, yamlio

    head = {"format": 1, "run_id": run_id, "round": 1, "candidate": tip, "tree": tree,
            "envelope_hash": "0" * 64}
    folder = f"tribunal/{run_id}"
    records: dict[str, dict[str, object]] = {f"{folder}/summary.yaml": {
        "kind": "summary", **head, "series": f"base:{base}", "base": base,
        "builder_family": "buildfam", "outcome": "pass", "reason": "unanimous pass",
        "lenses": {"defect": "pass", "proportion": "pass"}, "findings": [], "new_count": 0,
        "recorded_at": NOW}}
    for lens in ("defect", "proportion"):
        records[f"{folder}/verdicts/{lens}.yaml"] = {
            "kind": "verdict", **head, "lens": lens, "outcome": "pass", "reason": "pass",
            "seat": {"outcome": "pass", "reason": "pass", "rung": "r", "attempts": []},
            "findings": [], "recorded_at": NOW}
    out = {}
    for path, record in records.items():
        schema.validate_record(record, path)
        out[path] = yamlio.dumps(record)
    return out


Write = tuple[str, list[tuple[str, str]], dict[str, bytes]]  # subject, trailers, records


def _ledger_slice(balls: list[Ball], base: str, tip: str, tip_tree: str, lease: int
                  ) -> Iterator[Write]:
    """The ledger writes of one slice, in the order leapgit makes them."""
    from leapgit.ledger import layout
    from leapgit.records.leases import LeaseRecord
    from leapgit.records.scoring import FileBlob, Merged, MergeRecord, RedRecord, RunEvidence
    from leapgit.records.types import BallRecord, Receipt, SliceRecord, StampedScope, ThrowRecord
    from tests.support import pass_files

    sid, ids = balls[0].slice, tuple(b.ball for b in balls)
    cut = {layout.slice_path(sid): _records(SliceRecord(sid, HOLDER, base, ids, (ids,), NOW))}
    for b in balls:
        cut[layout.ball_path(sid, b.ball)] = _records(BallRecord(
            sid, b.ball, 1, "goal", "spec", (StampedScope(b.src, "absent"),
                                             StampedScope(b.test, "absent")),
            "true", "restore-scope", tests="true", recorded_at=NOW))
    yield (f"cut slice {sid}: {len(ids)} balls in 1 waves", [("Leap-Slice", sid),
           ("Leap-Base", base), ("Leap-Spine", HOLDER), *(("Leap-Ball", i) for i in ids)], cut)
    for b in balls:
        red = RedRecord(sid, b.ball, 1, b.red, base, (FileBlob(b.test, b.test_blob),),
                        RunEvidence("red", "false", 1), NOW)
        yield (f"red 1 of {sid}/{b.ball}: 1 frozen test file(s)", [
            ("Leap-Slice", sid), ("Leap-Ball", b.ball), ("Leap-Red", b.red)],
            {layout.red_path(sid, b.ball, 1): _records(red)})
    yield (f"throw {sid}: {', '.join(ids)}", [("Leap-Slice", sid),
           *(("Leap-Ball", i) for i in ids)],
           {layout.throw_path(sid, b.ball, 1): _records(ThrowRecord(
               sid, b.ball, 1, 1, base, f"leap/ball/{sid}/{b.ball}", NOW, wave=0))
            for b in balls})
    for b in balls:
        receipt = Receipt(sid, b.ball, 1, 1, 1, "built", NOW, claim=True, commit=b.commit,
                          candidate=b.tree, recorded_by="leap throw --run")
        yield (f"round 1 of {sid}/{b.ball}: pass (claim)", [
            ("Leap-Slice", sid), ("Leap-Ball", b.ball), ("Leap-Episode", "1"),
            ("Leap-Round", "1"), ("Leap-Outcome", "1"), ("Leap-Candidate", b.tree)],
            {layout.receipt_path(sid, b.ball, 1, 1): _records(receipt)})
    for b in balls:
        run_id = f"t-{sid}-{b.ball}"
        files = pass_files(sid, b.ball, b.tree, b.commit, base, run_id=run_id)
        files.pop(layout.score_path(sid, b.ball, 1))
        score = _score(b, base, run_id)
        yield (f"tribunal {run_id} round 1: pass", [
            ("Leap-Run", run_id), ("Leap-Round", "1"), ("Leap-Outcome", "pass"),
            ("Leap-Candidate", b.commit), ("Leap-Slice", sid), ("Leap-Ball", b.ball)], files)
        yield (f"score 1 of {sid}/{b.ball}: pass", [
            ("Leap-Slice", sid), ("Leap-Ball", b.ball), ("Leap-Score", "1"),
            ("Leap-Outcome", "1"), ("Leap-Candidate", b.tree), ("Leap-Run", run_id)],
            {layout.score_path(sid, b.ball, 1): score})
    lease_trailers = [("Leap-Spine", SPINE), ("Leap-Lease", str(lease))]
    yield (f"lease {lease} on {SPINE}: taken by {HOLDER}", lease_trailers,
           {layout.lease_path(SPINE, lease, "take"): _records(LeaseRecord(
               SPINE, lease, "take", HOLDER, NOW, f"merge {sid}"))})
    agg = f"t-{sid}-aggregate"
    yield (f"tribunal {agg} round 1: pass", [("Leap-Run", agg), ("Leap-Round", "1"),
           ("Leap-Outcome", "pass"), ("Leap-Candidate", tip)],
           _aggregate(sid, agg, tip, tip_tree, base))
    merged = MergeRecord(sid, SPINE, lease, HOLDER, base, tip, tuple(
        Merged(b.ball, b.merge, b.tree, b.commit, f"t-{sid}-{b.ball}", 1) for b in balls),
        agg, tip_tree, NOW, (RunEvidence("tests", "true", 0),))
    yield (f"merge {sid} onto {SPINE}: {len(balls)} ball(s)", [
        ("Leap-Slice", sid), ("Leap-Merge", "1"), ("Leap-Spine", SPINE), ("Leap-Outcome", "1"),
        ("Leap-Tip", tip), ("Leap-Run", agg)], {layout.merge_path(sid): _records(merged)})
    yield (f"lease {lease} on {SPINE}: released by {HOLDER}", lease_trailers,
           {layout.lease_path(SPINE, lease, "release"): _records(LeaseRecord(
               SPINE, lease, "release", HOLDER, NOW, f"merged {sid}"))})


def _fast_import(writes: Iterator[Write]) -> Iterator[bytes]:
    """One `git fast-import` stream of the ledger: one commit a write, as the store makes
    them (``format_message``: the subject, then the trailers and a Leap-Record each)."""
    from leapgit.ledger.store import format_message

    for n, (subject, trailers, records) in enumerate(writes, start=1):
        message = format_message(subject, [*trailers, *(("Leap-Record", p)
                                                        for p in sorted(records))])
        out = [b"commit %s\nmark :%d\ncommitter %s %d +0000\ndata %d\n%s\n"
               % (LEDGER_REF.encode(), n, IDENT, EPOCH + n, len(message), message)]
        if n > 1:
            out.append(b"from :%d\n" % (n - 1))
        for path, data in sorted(records.items()):
            out.append(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data))
        yield b"".join(out)


def build(root: Path, balls: int) -> Path:
    """A repository of ``balls`` merged balls (a multiple of ten), its ledger and spine."""
    from dulwich.repo import Repo

    from leapgit.records import yamlio

    git("init", "-q", "-b", SPINE, str(root), cwd=root.parent)
    code = Code()
    readme = code.blob(b"# bench\n")
    tip_tree = code.with_file(None, "README.md", readme)
    tip = code.commit(tip_tree, [], "start\n")
    root_commit = tip.decode()
    writes: list[Write] = [("leap: start the ledger", [], {"LEDGER.yaml": yamlio.dumps(
        {"kind": "ledger", "format": 1, "created_at": NOW})})]
    refs = []
    for s in range(balls // PER_SLICE):
        base = tip.decode()
        found, tip, tip_tree = _code_slice(code, s, tip, tip_tree)
        refs += [(f"refs/heads/leap/ball/{b.slice}/{b.ball}", b.commit) for b in found]
        writes.extend(_ledger_slice(found, base, tip.decode(), tip_tree.decode(), s + 1))
    with Repo(str(root)) as repo:
        repo.object_store.add_objects([(o, None) for o in code.objects])  # type: ignore[misc]
    refs.append((f"refs/heads/{SPINE}", tip.decode()))
    git("update-ref", "--stdin", cwd=root,
        input="".join(f"update {r} {sha}\n" for r, sha in refs).encode())
    proc = subprocess.Popen(["git", "fast-import", "--quiet", "--done"], cwd=root,
                            stdin=subprocess.PIPE)
    assert proc.stdin is not None
    for chunk in _fast_import(iter(writes)):
        proc.stdin.write(chunk)
    proc.stdin.write(b"done\n")
    proc.stdin.close()
    assert proc.wait() == 0
    git("pack-refs", "--all", cwd=root)
    (root / ".leap").mkdir()
    (root / ".leap" / "config.yaml").write_text(CONFIG)
    (root / ".git" / "info" / "exclude").write_text(".leap/\n")
    git("read-tree", root_commit, cwd=root)  # an index, so `git status` reads sensibly
    return root


def leap_audit(root: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "leapgit", "audit"], cwd=root,
                          capture_output=True, check=False)


def leap_status_of_one_slice(root: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "leapgit", "status", "s0"], cwd=root,
                          capture_output=True, check=False)


def git_log_raw(root: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "log", "--raw", "--no-abbrev", LEDGER_REF], cwd=root,
                          stdout=subprocess.DEVNULL, check=True)


# The floor of any audit that reads every record: each record at the ledger's tip read once
# (one `git ls-tree`, one `git cat-file --batch`), parsed and validated by leapgit's own
# reader, and no check made. The audit reads every record of the history too, and judges.
FLOOR = """
import subprocess, sys
from leapgit.records import schema, yamlio
listing = subprocess.run(["git", "ls-tree", "-r", "-z", sys.argv[1]], capture_output=True,
                         check=True).stdout
names = [(path.decode(), meta.split()[2])
         for meta, path in (e.split(b"\\t", 1) for e in listing.split(b"\\0") if e)]
data = subprocess.run(["git", "cat-file", "--batch"], capture_output=True, check=True,
                      input=b"".join(sha + b"\\n" for _, sha in names)).stdout
if not names:
    sys.exit("no record at the ledger's tip")
at = 0
for path, _ in names:
    end = data.index(b"\\n", at)
    size = int(data[at:end].split()[2])
    schema.validate_record(yamlio.loads(data[end + 1:end + 1 + size], path), path)
    at = end + 2 + size
"""


def read_every_record(root: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-c", FLOOR, LEDGER_REF], cwd=root,
                          capture_output=True, check=False)


def timed_process(run: Callable[[], subprocess.CompletedProcess[bytes]], runs: int
                  ) -> tuple[float, float]:
    """(median wall seconds, median CPU seconds of the process) over ``runs`` runs; each
    run must succeed. CPU time is the steadier figure on a shared, loaded machine."""
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = run()
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        if done.returncode != 0:
            raise SystemExit(f"{done.args} failed on the benchmark ledger:\n"
                             f"{(done.stdout or b'').decode()[-3000:]}"
                             f"{(done.stderr or b'').decode()[-3000:]}")
    return statistics.median(walls), statistics.median(cpus)


def measure(tmp: Path, balls: int, runs: int) -> tuple[float, float]:
    """(leap audit, git log --raw) in CPU seconds, over a fresh ledger of ``balls``."""
    started = time.perf_counter()
    root = build(tmp / f"r{balls}", balls)
    built = time.perf_counter() - started
    audit_wall, audit_cpu = timed_process(lambda: leap_audit(root), runs)
    log_wall, log_cpu = timed_process(lambda: git_log_raw(root), max(runs, 3))
    floor_wall, floor_cpu = timed_process(lambda: read_every_record(root), runs)
    # `leap status` of one slice: the first counts the ledger's signatures over its whole
    # history and keeps the count; the next ones count only what was added since
    first_wall, _ = timed_process(lambda: leap_status_of_one_slice(root), 1)
    status_wall, status_cpu = timed_process(lambda: leap_status_of_one_slice(root), runs)
    commits = git("rev-list", "--count", LEDGER_REF, cwd=root)
    records = len(git("ls-tree", "-r", "--name-only", LEDGER_REF, cwd=root).splitlines())
    print(f"{balls:>6} balls ({commits} ledger commits, built in {built:.1f} s): leap audit "
          f"{audit_wall:7.2f} s ({audit_cpu:6.2f} s CPU); git log --raw {log_wall:6.3f} s "
          f"({log_cpu:5.3f} s CPU); {audit_cpu / log_cpu:6.2f}x git log --raw (CPU)",
          flush=True)
    print(f"{'':>6}   the floor, its {records} records read once, parsed and validated, no "
          f"check made: {floor_wall:6.2f} s ({floor_cpu:6.2f} s CPU); the audit "
          f"{audit_cpu / floor_cpu:5.2f}x the floor (CPU)", flush=True)
    print(f"{'':>6}   `leap status s0` (one slice of ten balls): {first_wall:6.2f} s the first "
          f"time, {status_wall:6.2f} s ({status_cpu:5.2f} s CPU) after it: "
          f"{status_cpu / log_cpu:5.2f}x git log --raw (CPU)", flush=True)
    return audit_cpu, log_cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs=2, metavar=("SMALL", "BIG"),
                        help="balls in the two ledgers (multiples of ten; default 1000 10000, "
                             "--smoke 20 200)")
    parser.add_argument("--runs", type=int, help="audits timed at each size (median)")
    args = arguments(__doc__, parser)
    small, big = args.sizes or ((20, 200) if args.smoke else (1000, 10000))
    runs = args.runs or (1 if args.smoke else 3)
    os.environ.setdefault("GIT_CONFIG_NOSYSTEM", "1")
    tmp = Path(tempfile.mkdtemp(prefix="leap-bench-audit-"))
    try:
        (a0, g0), (a1, g1) = measure(tmp, small, runs), measure(tmp, big, runs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    growth = big / small
    print(f"growth: {growth:.0f}x the balls took {a1 / a0:.2f}x the CPU time: linearity "
          f"{a1 / a0 / growth:.2f}x (1.00x is linear; git log --raw {g1 / g0 / growth:.2f}x)")
    print(f"against git log --raw (CPU): {a0 / g0:.2f}x at {small} balls, {a1 / g1:.2f}x at "
          f"{big}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    main()
