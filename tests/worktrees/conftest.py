"""Fixtures for throw tests: a repository with a cut diamond slice (A; B, C on A; D on B, C)
and real builder scripts written to a folder outside every checkout."""

from __future__ import annotations

import hashlib
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from leapgit.ledger.store import Ledger
from leapgit.worktrees.rounds import RoundRecorded, record_round
from tests.reds import red_ready, shell_red
from tests.support import leap, make_repo

DIAMOND = """\
slice: dia
spine: integrator
balls:
  - {id: A, goal: a, spec: change a, scope: [src/a.py, tests/a.sh], proof: sh tests/a.sh,
     tests: 'test ! -e tests/a.sh || sh tests/a.sh', rollback: restore-scope}
  - {id: B, goal: b, spec: change b, scope: [src/b.py, src/b_new.py, tests/b.sh],
     proof: sh tests/b.sh, tests: 'test ! -e tests/b.sh || sh tests/b.sh', rollback: restore-scope,
     depends_on: [A]}
  - {id: C, goal: c, spec: change c, scope: [src/c.py, tests/c.sh], proof: sh tests/c.sh,
     tests: 'test ! -e tests/c.sh || sh tests/c.sh', rollback: restore-scope, depends_on: [A]}
  - {id: D, goal: d, spec: change d, scope: [src/d.py, tests/d.sh], proof: sh tests/d.sh,
     tests: 'test ! -e tests/d.sh || sh tests/d.sh', rollback: restore-scope, depends_on: [B, C]}
"""
# T7.1: each ball's red, a shell test that fails until the builder changed its file
DIAMOND_REDS = {b: shell_red(b, f"src/{b.lower()}.py", f"{b} = 2") for b in "ABCD"}


def set_config(repo: Path, builder: str | None = None, timeout: float | None = None,
               round_limit: int | None = None, root: str | None = None) -> None:
    path = repo / ".leap" / "config.yaml"
    text = path.read_text()
    if builder is not None:
        text = text.replace("  # command: my-agent --non-interactive --task \"$LEAP_HANDOFF\"",
                            f"  command: {builder}")
    if timeout is not None:
        text = text.replace("  # timeout: 1800", f"  timeout: {timeout}")
    if round_limit is not None:
        text = text.replace("round_limit: 4", f"round_limit: {round_limit}")
    if root is not None:
        text = text.replace("  # root: ../my-repo.leap-worktrees", f"  root: {root}")
    path.write_text(text)


def make_diamond(root: Path) -> Path:
    """``root/repo``: initialised, with the diamond slice cut and A's red recorded."""
    repo = make_repo(root / "repo", {
        "src/a.py": "A = 1\n", "src/b.py": "B = 1\n", "src/c.py": "C = 1\n",
        "src/d.py": "D = 1\n", "README.md": "# demo\n",
    })
    assert leap("init", cwd=repo).code == 0
    (root / "dia.yaml").write_text(DIAMOND)
    cut = leap("slice", "cut", str(root / "dia.yaml"), cwd=repo)
    assert cut.code == 0, cut
    red_ready(repo, "dia", DIAMOND_REDS)  # T7.1: A's red (B, C, D's: once they are ready)
    return repo


@pytest.fixture
def diamond(tmp_path: Path) -> Path:
    return make_diamond(tmp_path)


@pytest.fixture
def builder(tmp_path: Path) -> Callable[[str], str]:
    """Write a Python builder script outside the repository; return its command line."""
    folder = tmp_path / "builders"
    folder.mkdir(exist_ok=True)

    def make(body: str, name: str = "builder") -> str:
        script = folder / f"{name}.py"
        script.write_text("import os, sys, time, pathlib\n" + textwrap.dedent(body))
        return f"{sys.executable} {script}"

    return make


def mark_passed(repo: Path, ball: str, slice_id: str = "dia") -> RoundRecorded:
    """A claimed round and the pass record `leap score` would write for it: what lets
    descendants go (L5, L7). Its candidate is the ball branch's tip, when the ball was
    thrown: a dependent ball's stack base is built on it (issue 14)."""
    from tests.support import ref, write_pass

    tip = ref(repo, f"refs/heads/leap/ball/{slice_id}/{ball}")
    with Ledger(repo / ".git") as ledger:
        done = record_round(ledger, slice_id, ball, outcome=1, evidence="built in a test",
                            round_cap=4, recorded_by="test", commit=tip,
                            candidate=ref(repo, f"{tip}^{{tree}}") if tip else None)
        fake = "0" * 40
        write_pass(ledger, slice_id, ball, done.receipt.candidate or fake,
                   done.receipt.commit or fake, fake, episode=done.receipt.episode,
                   rounds=done.receipt.round)
    red_ready(repo, slice_id, DIAMOND_REDS)  # T7.1: the balls it readied get their red
    return done


def record(repo: Path, ball: str, outcome: int, slice_id: str = "dia") -> RoundRecorded:
    with Ledger(repo / ".git") as ledger:
        return record_round(ledger, slice_id, ball, outcome=outcome,  # type: ignore[arg-type]
                            evidence=f"test round {outcome}", round_cap=4, recorded_by="test")


def tree_hash(root: Path, skip: tuple[str, ...] = (".git",)) -> str:
    """Every file's path and bytes under ``root``: byte-for-byte identity."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel.split("/")[0] in skip:
            continue
        digest.update(rel.encode() + b"\0")
        if path.is_symlink():
            digest.update(b"link:" + str(path.readlink()).encode())
        elif path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def worktree_of(repo: Path, ball: str, slice_id: str = "dia") -> Path:
    return repo.parent / "repo.leap-worktrees" / slice_id / ball


BUILDS_A = """
pathlib.Path("src/a.py").write_text("A = 2\\n")
pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 1\\nevidence: wrote it\\n")
"""


def built_a(repo: Path, builder: Callable[[str], str]) -> Path:
    """Ball A of ``repo``'s diamond built in one round by a builder that writes ``A = 2``
    and claims a pass; its worktree, the round committed there."""
    from tests.support import git

    set_config(repo, builder=builder(BUILDS_A))
    r = leap("throw", "dia", "--run", cwd=repo)
    assert r.code == 0, r
    assert "A: 1 round(s), last pass (claim): wrote it" in r.out, r.out
    wt = worktree_of(repo, "A")
    assert git("show", "HEAD:src/a.py", cwd=wt) == "A = 2"  # stored as git adds it
    return wt
