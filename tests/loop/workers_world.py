"""A real project built by workers on many clones (issue 16): a bare remote with the server
hook behind `git daemon` (or `git http-backend` behind apache2), an orchestrator's clone that
cuts the slice and runs `leap run --remote`, and worker clones made with plain `git clone`.
The config (builder, test author, jurors, ``workers.claim_seconds``) is committed on the
spine, so the server reads the claim lease from it and every clone builds alike."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from leapgit.records import yamlio
from tests.support import IDENTITY, GitDaemon, git, leap, make_repo
from tests.tribunal.jurors import Call, JurorServer, Reply, verdict

S = "pkgs"
# Long enough that no lease of a live worker runs out on a loaded 2-core machine, where one
# ledger push through the server's hook can wait many seconds behind the other writers;
# the tests of expiry set their own, short lease.
CLAIM_SECONDS = 60

# A builder that writes its ball's module; $LEAP_BUILD_SECONDS makes it take that long,
# and a file ``hang-<ball>`` beside it makes it wait until the file is gone (a kill -9 test
# catches it in the middle of a round); ``hang-after-<ball>`` the same, once it wrote the file;
# ``breach-<ball>`` makes it write outside its scope too (a -1 that stops the ball).
BUILDER = textwrap.dedent("""\
    import os, pathlib, sys, time
    here = pathlib.Path(sys.argv[0]).parent
    ball = os.environ["LEAP_BALL"]
    with open(here / "built.log", "a") as log:
        log.write(f"{ball} {os.environ.get('LEAP_WORKER', '-')} {os.getpid()}\\n")
    time.sleep(float(os.environ.get("LEAP_BUILD_SECONDS", "0")))
    while (here / f"hang-{ball}").exists():
        time.sleep(0.05)
    p = pathlib.Path(f"pkg/{ball}.py")
    p.write_text(f"def {ball}():\\n    return {ball!r}\\n")
    if (here / f"breach-{ball}").exists():
        pathlib.Path("README.md").write_text("# not this ball's file\\n")
    while (here / f"hang-after-{ball}").exists():  # written, not done: its tests, say
        time.sleep(0.05)
    pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 1\\nevidence: built\\n")
    """)

AUTHOR = textwrap.dedent("""\
    import os, pathlib, subprocess
    ball = os.environ["LEAP_BALL"]
    path = f"tests/test_{ball}.py"
    pathlib.Path(path).write_text(
        "import unittest\\n\\n\\nclass T(unittest.TestCase):\\n"
        f"    def test_{ball}(self):\\n        from pkg.{ball} import {ball}\\n"
        f"        self.assertEqual({ball}(), {ball!r})\\n")
    ident = ["-c", "user.name=Test Author", "-c", "user.email=author@example.invalid"]
    subprocess.run(["git", "add", path], check=True)
    subprocess.run(["git", *ident, "commit", "-q", "-m", "test: " + ball], check=True)
    """)

FILES = {"pkg/__init__.py": "", "tests/__init__.py": "", "README.md": "# pkgs\n"}


def red_test(ball: str) -> str:
    """The failing test the test author writes for ``ball`` (T7.1)."""
    return ("import unittest\n\n\nclass T(unittest.TestCase):\n"
            f"    def test_{ball}(self):\n        from pkg.{ball} import {ball}\n"
            f"        self.assertEqual({ball}(), {ball!r})\n")


def jurors(call: Call) -> Reply:
    """A pass that quotes the candidate (T6: no bare pass)."""
    text = json.dumps(call.body.get("messages", []))
    quote = next((f"def {b}(" for b in balls(8) if f"def {b}(" in text), "def ")
    return Reply(verdict(call.lens or "?", "pass", [{
        "severity": "info", "file": "pkg", "claim": "small and tested", "evidence": quote}]))


def balls(n: int) -> list[str]:
    return [f"b{i}" for i in range(1, n + 1)]


def draft(n: int, deps: Mapping[str, Sequence[str]] | None = None) -> str:
    lines = [f"slice: {S}", "spine: integrator", "balls:"]
    for b in balls(n):
        lines += [f"  - id: {b}", f"    goal: {b} returns its name",
                  f"    spec: add pkg/{b}.py with {b}()",
                  f"    scope: [pkg/{b}.py, tests/test_{b}.py]",
                  f"    proof: python -m unittest -q tests.test_{b}",
                  "    tests: python -m unittest discover -q -s tests -t .",
                  "    rollback: restore-scope"]
        if deps and deps.get(b):
            lines.append(f"    depends_on: [{', '.join(deps[b])}]")
    return "\n".join(lines) + "\n"


def config(base_dir: Path, juror_url: str, claim_seconds: float = CLAIM_SECONDS) -> bytes:
    return yamlio.dumps({
        "version": 1, "spine": "main", "ledger_ref": "refs/heads/leap/ledger",
        "round_limit": 4, "ball_branch_prefix": "leap/ball",
        "builder": {"command": f"{sys.executable} {base_dir / 'builder.py'}", "timeout": 60,
                    "identity": "model=scripted-builder,family=demo,session=builder-1"},
        "red": {"command": f"{sys.executable} {base_dir / 'author.py'}",
                "identity": "model=scripted-author,family=demo,session=author-1"},
        "workers": {"claim_seconds": claim_seconds},
        "tribunal": {"timeout": 10, "test_timeout": 60, "rungs": [{
            "id": "scripted", "provider": "openai", "model": "scripted-juror",
            "endpoint": juror_url, "family": "scripted", "cost": 0,
            "tiers": ["generalist", "operator_safety", "deep_state", "fast_structural"],
            "context_tokens": 32000}]},
    })


@dataclass
class World:
    base_dir: Path
    bare: Path
    work: Path
    url: str
    env: dict[str, str] = field(default_factory=dict)

    def leap(self, *args: str, cwd: Path | None = None,
             env: Mapping[str, str] | None = None, timeout: float = 300):  # noqa: ANN201
        return leap(*args, cwd=cwd or self.work, env={**self.env, **(env or {})},
                    timeout=timeout)

    def clone(self, name: str, url: str | None = None) -> Path:
        """A worker's machine: a plain clone of the remote with the client hooks."""
        path = self.base_dir / name
        git("clone", "-q", url or self.url, str(path), cwd=self.base_dir)
        res = leap("hooks", "install", cwd=path)
        assert res.code == 0, res
        return path

    def popen(self, *args: str, cwd: Path, env: Mapping[str, str] | None = None,
              log: Path | None = None) -> subprocess.Popen[bytes]:
        out = open(log or (cwd.parent / f"{cwd.name}.log"), "ab")  # noqa: SIM115
        return subprocess.Popen([sys.executable, "-m", "leapgit", *args], cwd=cwd,
                                stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, **IDENTITY, **self.env, **(env or {})})

    def remote_ledger(self) -> str:
        return git("rev-parse", "refs/heads/leap/ledger", cwd=self.bare)

    def ledger_files(self, pattern: str = "") -> list[str]:
        out = git("ls-tree", "-r", "--name-only", "refs/heads/leap/ledger", cwd=self.bare)
        return [p for p in out.splitlines() if pattern in p]

    def ledger_text(self, path: str) -> str:
        return git("show", f"refs/heads/leap/ledger:{path}", cwd=self.bare)


def build(base_dir: Path, url_of: object, juror_url: str, n: int = 2,
          deps: Mapping[str, Sequence[str]] | None = None,
          claim_seconds: float = CLAIM_SECONDS) -> World:
    """``url_of``: the served remote's URL for a path under the server's base."""
    bare = base_dir / "origin.git"
    git("init", "-q", "--bare", "-b", "main", str(bare), cwd=base_dir)
    res = leap("hooks", "install", "--server", cwd=bare)
    assert res.code == 0, res
    work = make_repo(base_dir / "work", FILES)
    (base_dir / "builder.py").write_text(BUILDER)
    (base_dir / "author.py").write_text(AUTHOR)
    res = leap("init", cwd=work)
    assert res.code == 0, res
    (work / ".leap" / "config.yaml").write_bytes(config(base_dir, juror_url, claim_seconds))
    (work / ".git" / "info" / "exclude").write_text(".leap/*\n!.leap/config.yaml\n")
    git("add", ".leap/config.yaml", cwd=work)
    git("commit", "-q", "-m", "leap config: workers build", cwd=work)
    (base_dir / "slice.yaml").write_text(draft(n, deps))
    res = leap("slice", "cut", str(base_dir / "slice.yaml"), cwd=work)
    assert res.code == 0, res
    url = url_of(bare)  # type: ignore[operator]
    git("remote", "add", "origin", url, cwd=work)
    git("push", "-q", "-u", "origin", "main", "leap/ledger", cwd=work)
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return World(base_dir, bare, work, url, {"PATH": path})


def wait(proc: subprocess.Popen[bytes], log: Path, timeout: float = 240) -> int:
    """A process's exit code; one still running after ``timeout`` is killed, and its log
    shown."""
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError(f"timed out; {log}:\n{log.read_text()[-4000:]}") from None


# git's post-receive runs after the refs moved, while the pusher still waits for the hook's
# output: while the marker is there, a push has landed but its `git push` has not returned
SLOW_HOOK = """#!/bin/sh
if [ -e "{marker}" ]; then touch "{entered}"; sleep 3; fi
exit 0
"""


def slow_pushes(w: World) -> tuple[Path, Path]:
    """(marker, entered): while ``marker`` exists each push to the remote is held open for
    3 s after it landed, and ``entered`` appears as each one lands."""
    marker, entered = w.base_dir / "slow", w.base_dir / "entered"
    hook = w.bare / "hooks" / "post-receive"
    hook.write_text(SLOW_HOOK.format(marker=marker, entered=entered))
    hook.chmod(0o755)
    marker.write_text("")
    return marker, entered


# -- worlds of the worker tests (tests/loop/test_workers*.py) ---------------------------

def world(daemon: GitDaemon, jurors: JurorServer, name: str, n: int,
          deps: dict[str, list[str]] | None = None,
          claim_seconds: float = CLAIM_SECONDS) -> World:
    base = daemon.base / name
    base.mkdir()
    return build(base, lambda bare: daemon.url(str(bare.relative_to(daemon.base))),
                    jurors.url, n, deps, claim_seconds)


def receipts(w: World) -> dict[str, list[dict[str, object]]]:
    out: dict[str, list[dict[str, object]]] = {}
    for path in w.ledger_files("/receipts/"):
        raw = yamlio.loads(w.ledger_text(path).encode(), path)
        out.setdefault(str(raw["ball"]), []).append(raw)
    return out


def fsck(bare: Path) -> None:
    """The remote's objects are whole (dangling objects of lost races are no damage)."""
    proc = subprocess.run(["git", "fsck", "--no-progress", "--no-dangling"], cwd=bare,
                          capture_output=True, text=True)
    assert proc.returncode == 0 and not proc.stdout.strip(), proc


def published(daemon: GitDaemon, jurors: JurorServer, name: str,
              claim_seconds: float = CLAIM_SECONDS) -> World:
    """A one-ball slice thrown to workers (`leap throw --remote`), its red recorded."""
    from tests.scoring.world import commit_files

    w = world(daemon, jurors, name, 2, claim_seconds=claim_seconds)  # L4: two balls or more
    base = git("rev-parse", "main", cwd=w.work)
    red = commit_files(w.work, base, {"tests/test_b1.py": red_test("b1")}, "test: b1")
    res = w.leap("red", S, "b1", red)
    assert res.code == 0, res
    res = w.leap("throw", S, "--ball", "b1", "--remote", "origin")
    assert res.code == 0 and "published to workers" in res.out, res
    assert git("rev-parse", "refs/heads/leap/ball/pkgs/b1", cwd=w.bare) == red
    return w


def claim_files(w: World, ball: str = "b1") -> list[str]:
    return w.ledger_files(f"slices/{S}/balls/{ball}/episodes/1/claims/")


def hung_worker(w: World, name: str, *extra: str) -> subprocess.Popen[bytes]:
    """A worker (``name``, its own clone) whose builder has started ball b1's round and
    waits there (the ``hang-b1`` file) until the test lets it go on."""
    clone = w.clone(name)
    (w.base_dir / "hang-b1").write_text("")
    proc = w.popen("worker", "--remote", "origin", "--name", name, "--poll", "0.2", *extra,
                   cwd=clone)
    built = w.base_dir / "built.log"
    deadline = time.monotonic() + 60
    while not built.exists():  # the builder runs: the round is in the middle
        assert time.monotonic() < deadline and proc.poll() is None, \
            (w.base_dir / f"{name}.log").read_text()
        time.sleep(0.05)
    return proc
