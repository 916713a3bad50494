"""Tribunal benchmarks (a plain script, not collected by pytest):

1. eight seats against servers that answer after 1 s: wall time (target < 1.3 s: the seats
   run concurrently; the anchor is the 1 s a single seat must take);
2. building the envelope for a change touching 200 files of 10 KB: time and peak memory.

    python -m tests.benchmarks.bench_tribunal [--smoke]   (--smoke: 0.2 s, 10 files of 1 KB)
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.update({"GIT_AUTHOR_NAME": "Bench Author", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
                   "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"})

from leapgit.records.tribunal_config import TribunalConfig
from leapgit.tribunal import changes, envelope, prompt, routing
from leapgit.tribunal.identity import parse_builder
from leapgit.tribunal.lenses import LENSES, TIERS
from leapgit.tribunal.redaction import Identities
from tests.benchmarks.common import arguments
from tests.support import commit_all, git, make_repo, write_files
from tests.tribunal.jurors import Call, JurorServer, Reply, verdict

BUILDER = parse_builder("model=bench-builder,family=benchfam,session=b-1")


def _repo(root: Path, files: int, size: int) -> tuple[str, str]:
    make_repo(root, {"README.md": "bench\n"})
    base = git("rev-parse", "HEAD", cwd=root)
    line = "value = compute(alpha, beta, gamma)  # padding padding padding\n"
    body = (line * (size // len(line) + 1))[:size]
    write_files(root, {f"pkg/mod_{i:03d}.py": f"# {i}\n{body}" for i in range(files)})
    return base, commit_all(root, "bench change")


def bench_envelope(tmp: Path, files: int = 200, size: int = 10 * 1024) -> None:
    base, head = _repo(tmp / "env", files, size)
    root = tmp / "env"
    contract = envelope.check_contract("bench", "criteria")
    tracemalloc.start()
    started = time.perf_counter()
    change = changes.read_change(root, base, head)
    who = Identities((("builder model id", "bench-builder"),
                      *changes.authors(root, base, head)))
    env = envelope.build(root, change, contract, who)
    elapsed = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"envelope: {files} files x {size / 1024:g} KB -> {len(env.body) / 1e6:.2f} MB body, "
          f"{elapsed * 1000:.0f} ms, peak traced memory {peak / 1e6:.1f} MB "
          f"({peak / len(env.body):.1f}x the body)")


async def _seat_eight(url: str, env: envelope.Envelope) -> float:
    import httpx

    from leapgit.tribunal.providers.base import SeatContext
    from leapgit.tribunal.seating import seat_all

    raw = {"rungs": [{"id": "slow", "provider": "openai", "model": "m", "endpoint": url,
                      "family": "f", "tiers": list(TIERS), "context_tokens": 100000, "cost": 1}]}
    cfg = TribunalConfig.from_dict(raw)
    prompts = {lens.id: prompt.build("bench", lens, env.body) for lens in LENSES}
    plan = routing.plan(cfg, BUILDER, {k: 100 for k in prompts}, os.environ)
    async with httpx.AsyncClient() as client:
        ctx = SeatContext(client, 1 << 20)
        started = time.perf_counter()
        # on_result hands back each result as recorded (here: as it came)
        results, _ = await seat_all(plan.plans, prompts, env, ctx, lambda r: r)
        elapsed = time.perf_counter() - started
    assert all(r.outcome == "pass" for r in results), [r.reason for r in results]
    return elapsed


def bench_seats(tmp: Path, delay: float = 1.0, runs: int = 3) -> None:
    base, head = _repo(tmp / "seats", 2, 200)
    root = tmp / "seats"
    env = envelope.build(root, changes.read_change(root, base, head),
                         envelope.check_contract("bench", "criteria"), Identities(()))
    def script(c: Call) -> Reply:
        return Reply(verdict(c.lens or "?", "pass", [
            {"severity": "info", "file": "", "claim": "ok", "evidence": ""}]), delay=delay)
    with JurorServer("openai", script) as server:
        walls = [asyncio.run(_seat_eight(server.url, env)) for _ in range(runs)]
    best = min(walls)
    print(f"eight seats, servers answer after {delay:g} s: wall {best:.3f} s best of {runs} "
          f"({', '.join(f'{r:.3f}' for r in walls)}); {best / delay:.2f}x one seat's "
          f"{delay:g} s, {8 * delay / best:.1f}x faster than serial")


if __name__ == "__main__":
    smoke = arguments(__doc__).smoke
    with tempfile.TemporaryDirectory() as folder:
        if smoke:
            bench_seats(Path(folder), delay=0.2, runs=1)
            bench_envelope(Path(folder), files=10, size=1024)
        else:
            bench_seats(Path(folder))
            bench_envelope(Path(folder))
