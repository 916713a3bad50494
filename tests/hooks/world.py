"""A real leapgit project for hook tests: a bare remote with the server hook, served by
`git daemon`, and a clone with a cut slice, throw records, passes and leases written
through the ledger store (the throw command lives on another branch)."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from leapgit.ledger import layout
from leapgit.ledger.store import Ledger
from leapgit.records import yamlio
from leapgit.records.leases import LeaseRecord
from leapgit.records.types import Checkpoint, Provenance, Receipt, ThrowRecord
from tests.support import IDENTITY, GitDaemon, git, leap, make_repo, write_files

if TYPE_CHECKING:
    from tests.templates import Served

SLICE = "s1"
FILES = {
    "src/a.py": "A = 1\n",
    "src/b.py": "B = 2\n",
    "src/c.py": "C = 3\n",
    "tests/test_a.py": "def test_a():\n    assert True\n",
    "README.md": "# sample\n",
}
DRAFT = f"""\
slice: {SLICE}
spine: integrator
balls:
  - id: a
    goal: a is 10
    spec: set A to 10
    scope: [src/a.py, tests/test_a.py, src/new.py]
    proof: "true"
    tests: "true"
    rollback: restore-scope
  - id: b
    goal: b is 20
    spec: set B to 20
    scope: [src/b.py]
    proof: "true"
    tests: "true"
    rollback: restore-scope
"""
NOW = "2024-01-01T00:00:00Z"


def run_git(*args: str, cwd: Path, env: Mapping[str, str] | None = None,
            ) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False,
                          env={**os.environ, **IDENTITY, **(env or {})})


def remote_refs(bare: Path) -> dict[str, str]:
    out = git("for-each-ref", "--format=%(refname) %(objectname)", cwd=bare)
    pairs = (line.split(" ", 1) for line in out.splitlines() if line)
    return {name: sha for name, sha in pairs}


def commit(root: Path, files: Mapping[str, str | None], message: str, *,
           hooks: bool = False) -> str:
    """Write (or, for None, delete) files and commit them; hooks off unless asked for."""
    for name, text in files.items():
        if text is None:
            git("rm", "-q", name, cwd=root)
        else:
            write_files(root, {name: text})
            git("add", name, cwd=root)
    extra = [] if hooks else ["-c", f"core.hooksPath={root / '.no-hooks'}"]
    git(*extra, "commit", "-q", "--allow-empty", "-m", message, cwd=root)
    return git("rev-parse", "HEAD", cwd=root)


def round_message(subject: str, round_no: int, outcome: int = 0) -> str:
    return f"{subject}\n\nLeap-Round: {round_no}\nLeap-Outcome: {outcome}\n"


@dataclass
class World:
    base_dir: Path
    bare: Path
    work: Path
    daemon: GitDaemon
    base: str  # the slice's base commit (main at cut time)

    @property
    def url(self) -> str:
        return self.daemon.url(f"{self.bare.relative_to(self.daemon.base)}")

    def reset_ledger(self) -> None:
        """Point the local ledger back at the remote's (after a refused attempt)."""
        tip = git("rev-parse", "leap/ledger", cwd=self.bare)
        git("fetch", "-q", str(self.bare), "leap/ledger", cwd=self.work)
        git("update-ref", "refs/heads/leap/ledger", tip, cwd=self.work)

    def ledger(self) -> Ledger:
        return Ledger(self.work / ".git")

    def append(self, records: Mapping[str, bytes], subject: str = "test record") -> str:
        with self.ledger() as ledger:
            return ledger.append(dict(records), subject).commit

    def throw(self, ball: str, episode: int = 1, base: str | None = None) -> str:
        rec = ThrowRecord(slice=SLICE, ball=ball, episode=episode, spec_version=1,
                          base=base or self.base, branch=f"leap/ball/{SLICE}/{ball}",
                          thrown_at=NOW)
        return self.append({layout.throw_path(SLICE, ball, episode): yamlio.dumps(rec.to_dict())},
                           f"throw {ball}")

    def receipt(self, ball: str, round_no: int, outcome: int, *, claim: bool,
                candidate: str | None = None, provenance: bool = True, episode: int = 1,
                commit: str | None = None) -> tuple[str, bytes]:
        prov = Provenance("builder-x", 1, ("reviewer-y",), ("tribunal/r1",), "pytest ok",
                          "curl ok", candidate) if provenance and candidate else None
        rec = Receipt(slice=SLICE, ball=ball, episode=episode, round=round_no, outcome=outcome,
                      evidence="test", recorded_at=NOW, claim=claim, candidate=candidate,
                      provenance=prov, commit=commit)
        return layout.receipt_path(SLICE, ball, episode, round_no), yamlio.dumps(rec.to_dict())

    def checkpoint(self, ball: str, rounds_used: int, episode: int = 1,
                   reason: str | None = None) -> tuple[str, bytes]:
        rec = Checkpoint(slice=SLICE, ball=ball, episode=episode, rounds_used=rounds_used,
                         tried=("test",) * rounds_used, last_evidence="test", recorded_at=NOW,
                         reason=reason)
        return layout.checkpoint_path(SLICE, ball, episode), yamlio.dumps(rec.to_dict())

    def lease(self, number: int, action: str, holder: str) -> tuple[str, bytes]:
        rec = LeaseRecord("main", number, action, holder, NOW)  # type: ignore[arg-type]
        return layout.lease_path("main", number, action), yamlio.dumps(rec.to_dict())

    def push(self, *refspecs: str, verify: bool = False, url: str | None = None,
             env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        flags = [] if verify else ["--no-verify"]
        return run_git("push", "--porcelain", *flags, url or self.url, *refspecs, cwd=self.work,
                       env=env)

    def tip(self, rev: str) -> str:
        return git("rev-parse", rev, cwd=self.work)


def build_world(base_dir: Path, daemon: GitDaemon, head: str = "main") -> World:
    """``head``: the bare repository's HEAD branch (plain `git init --bare` makes it master)."""
    bare = base_dir / "origin.git"
    git("init", "-q", "--bare", "-b", head, str(bare), cwd=base_dir)
    res = leap("hooks", "install", "--server", cwd=bare)
    assert res.code == 0, res
    work = make_repo(base_dir / "work", FILES)
    res = leap("init", cwd=work)
    assert res.code == 0, res
    git("add", ".leap/config.yaml", cwd=work)
    commit(work, {}, "leap: config")
    base = git("rev-parse", "HEAD", cwd=work)
    (work / "slice.yaml").write_text(DRAFT)
    res = leap("slice", "cut", "slice.yaml", cwd=work)
    assert res.code == 0, res
    (work / "slice.yaml").unlink()
    world = World(base_dir, bare, work, daemon, base)
    world.throw("a")
    world.throw("b")
    git("remote", "add", "origin", world.url, cwd=work)
    pushed = world.push("main", "leap/ledger")
    assert pushed.returncode == 0, pushed.stderr
    return world


def hook_world(served: Served, head: str = "main") -> AbstractContextManager[World]:
    """The run's hook world whose remote's HEAD names ``head``, a copy of its own for the
    block (built on first use)."""
    return served.world(f"hooks-{head}", lambda folder: build_world(folder, served.daemon, head))


def forge_ledger_commit(world: World, changes: Mapping[str, bytes | None],
                        message: str = "forged") -> str:
    """A ledger commit written by hand, as an attacker (or a careless script) would: no
    store, no checks. ``None`` deletes a path."""
    from dulwich.object_store import commit_tree_changes
    from dulwich.objects import Blob, Commit
    from dulwich.repo import Repo

    with Repo(str(world.work / ".git")) as repo:
        tip = repo.refs[b"refs/heads/leap/ledger"]
        store = repo.object_store
        todo = []
        for path, data in changes.items():
            if data is None:
                todo.append((path.encode(), None, None))
            else:
                blob = Blob.from_string(data)
                store.add_object(blob)
                todo.append((path.encode(), 0o100644, blob.id))
        new = Commit()
        new.tree = commit_tree_changes(store, store[tip].tree, todo)  # type: ignore[attr-defined]
        new.parents = [tip]
        new.author = new.committer = b"Mallory <mallory@example.invalid>"
        new.author_time = new.commit_time = 1700000000
        new.author_timezone = new.commit_timezone = 0
        new.message = message.encode() + b"\n"
        store.add_object(new)
        repo.refs[b"refs/heads/leap/ledger"] = new.id
        return new.id.decode()
