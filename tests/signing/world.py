"""A signed leapgit project for signature tests: keys made with ssh-keygen, a policy on the
spine that requires signatures, a bare remote with the server hook behind `git daemon`,
and a clone whose every ledger write is signed by the key the test names."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from leapgit.ledger import layout
from leapgit.ledger.store import Ledger
from leapgit.records import yamlio
from leapgit.records.leases import LeaseRecord
from leapgit.records.types import Provenance, Receipt, ThrowRecord
from leapgit.signing.policy import key_line
from leapgit.signing.sign import Signer
from tests.hooks.world import remote_refs, round_message, run_git
from tests.support import GitDaemon, git, leap, make_repo, write_files

if TYPE_CHECKING:
    from tests.templates import Served

SLICE = "s1"
FILES = {"src/a.py": "A = 1\n", "src/b.py": "B = 2\n", "README.md": "# sample\n"}
DRAFT = f"""\
slice: {SLICE}
spine: integrator
balls:
  - {{id: a, goal: a is 10, spec: set A, scope: [src/a.py], proof: "true", tests: "true",
      rollback: restore-scope}}
  - {{id: b, goal: b is 20, spec: set B, scope: [src/b.py], proof: "true", tests: "true",
      rollback: restore-scope}}
  - {{id: p, goal: policy, spec: change the policy, scope: [.leap/allowed_signers], proof: "true",
      tests: "true", rollback: restore-scope}}
"""
CONFIG = """\
version: 1
spine: main
ledger_ref: refs/heads/leap/ledger
signing:
  require: true
"""
NOW = "2024-01-01T00:00:00Z"
# name -> principals; mallory is outside the policy; olga's key was retired in 2020;
# alice-2 is alice's second key (another fingerprint, the same person).
PRINCIPALS = {
    "root": ["admin:root", "integrator:root", "builder:root"],
    "alice": ["builder:alice", "scorer:alice"],
    "alice-2": ["scorer:alice"],
    "bob": ["builder:bob"],
    "carol": ["scorer:carol"],
    "ivan": ["integrator:ivan"],
    "irene": ["integrator:irene"],
    "olga": ["builder:olga"],
    "mallory": [],
}
RETIRED = {"olga": "20200101Z"}


def make_key(folder: Path, name: str) -> Path:
    path = folder / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(path)],
                   check=True)
    return path


def policy_text(keys: Mapping[str, Path], principals: Mapping[str, list[str]] = PRINCIPALS,
                retired: Mapping[str, str] = RETIRED) -> str:
    lines = [key_line(p, (keys[n].with_suffix(".pub")).read_text(), valid_before=retired.get(n))
             for n, p in principals.items() if p]
    return "\n".join(lines) + "\n"


def signed_commit(root: Path, files: Mapping[str, str], message: str, key: Path | None,
                  *, merge: str | None = None) -> str:
    """A git commit (or ``--no-ff`` merge of ``merge``) signed the way builders and
    integrators sign: git's own SSH signing."""
    sign = ["-c", "gpg.format=ssh", "-c", f"user.signingkey={key}"] if key else []
    hooks = ["-c", f"core.hooksPath={root / '.no-hooks'}"]
    if merge:
        git(*hooks, *sign, "merge", "-q", "--no-ff", *(["-S"] if key else []), "-m", message,
            merge, cwd=root)
    else:
        write_files(root, files)
        git("add", "-A", cwd=root)
        git(*hooks, *sign, "commit", "-q", "--allow-empty", *(["-S"] if key else []), "-m",
            message, cwd=root)
    return git("rev-parse", "HEAD", cwd=root)


@dataclass
class SignedWorld:
    bare: Path
    work: Path
    daemon: GitDaemon
    keys: dict[str, Path]
    base: str
    builders: dict[str, str | None] = field(default_factory=dict)  # ball -> its round's key

    @property
    def url(self) -> str:
        return self.daemon.url(self.bare.relative_to(self.daemon.base).as_posix())

    def ledger(self, key: str | None) -> Ledger:
        return Ledger(self.work / ".git", signer=Signer(str(self.keys[key])) if key else None)

    def append(self, records: Mapping[str, bytes], key: str | None, subject: str = "record",
               ) -> str:
        with self.ledger(key) as ledger:
            return ledger.append(dict(records), subject).commit

    def push(self, *refspecs: str) -> subprocess.CompletedProcess[str]:
        return run_git("push", "--porcelain", "--no-verify", self.url, *refspecs, cwd=self.work)

    def reset(self) -> None:
        """Point every local ref the tests move back at the remote's (after a refusal)."""
        remote = remote_refs(self.bare)
        git("fetch", "-q", str(self.bare), "+refs/heads/*:refs/remotes/served/*", cwd=self.work)
        git("checkout", "-q", "--detach", cwd=self.work)
        for name in git("for-each-ref", "--format=%(refname)", "refs/heads", cwd=self.work
                        ).splitlines():
            if name in remote:
                git("update-ref", name, remote[name], cwd=self.work)
            else:
                git("update-ref", "-d", name, cwd=self.work)
        git("checkout", "-q", "main", cwd=self.work)

    # the slice flow, one step per helper

    def throw(self, ball: str, key: str = "ivan") -> str:
        rec = ThrowRecord(SLICE, ball, 1, 1, self.base, f"leap/ball/{SLICE}/{ball}", NOW)
        return self.append({layout.throw_path(SLICE, ball, 1): yamlio.dumps(rec.to_dict())},
                           key, f"throw {ball}")

    def build(self, ball: str, files: Mapping[str, str], key: str | None) -> str:
        """Round 1 of ``ball`` on its branch, signed by ``key``; returns the candidate tree."""
        branch = f"leap/ball/{SLICE}/{ball}"
        self.builders[ball] = key
        git("checkout", "-q", "-B", branch, self.base, cwd=self.work)
        signed_commit(self.work, files, round_message(f"{ball}: round 1", 1, 1),
                      self.keys[key] if key else None)
        git("checkout", "-q", "main", cwd=self.work)
        return git("rev-parse", f"{branch}^{{tree}}", cwd=self.work)

    def receipt(self, ball: str, key: str | None, *, claim: bool, candidate: str | None = None,
                round_no: int = 1, outcome: int = 1) -> str:
        self.red(ball)
        prov = None if claim or candidate is None else Provenance(
            "alice", 1, ("carol",), ("tribunal/r1",), "pytest ok", "curl ok", candidate)
        tip = run_git("rev-parse", "-q", "--verify", f"refs/heads/leap/ball/{SLICE}/{ball}",
                      cwd=self.work).stdout.strip()  # the round's commit, as the hook records
        rec = Receipt(SLICE, ball, 1, round_no, outcome, "test", NOW, claim=claim,  # type: ignore[arg-type]
                      candidate=candidate, provenance=prov, commit=tip or None)
        path = layout.receipt_path(SLICE, ball, 1, round_no)
        return self.append({path: yamlio.dumps(rec.to_dict())}, key, f"receipt {ball}")

    def red(self, ball: str, key: str = "carol") -> None:
        """The ball's red (``tests.support.red_files``), signed by a scorer, before its
        first round is recorded (T7.1: red first; a pass names a red the ledger holds)."""
        from tests.support import red_files

        with self.ledger(None) as ledger:
            view = ledger.require()
            if view.exists(layout.red_path(SLICE, ball, 1)) or \
                    view.list(f"{layout.episode_dir(SLICE, ball, 1)}/receipts"):
                return
        self.append(red_files(SLICE, ball, self.base), key, f"red {ball}")

    def grade(self, ball: str, key: str | None, candidate: str, round_no: int = 1) -> str:
        """A whole pass record set for ``ball`` (score, summary, verdicts), signed by ``key``:
        what `leap score` writes for a scorer. The claim it grades is recorded first when
        the ledger lacks it, signed by the ball's builder, as its post-commit hook does."""
        from tests.support import pass_files

        tip = git("rev-parse", f"leap/ball/{SLICE}/{ball}", cwd=self.work)
        with self.ledger(None) as ledger:
            claimed = ledger.require().exists(layout.receipt_path(SLICE, ball, 1, round_no))
        if not claimed:
            self.receipt(ball, self.builders.get(ball), claim=True, round_no=round_no)
        files = pass_files(SLICE, ball, candidate, tip, self.base, rounds=round_no,
                           run_id=f"t-pass-{ball}")
        return self.append(files, key, f"pass {ball}")

    def lease(self, key: str, number: int = 1, action: str = "take", holder: str = "ivan",
              ) -> str:
        rec = LeaseRecord("main", number, action, holder, NOW)  # type: ignore[arg-type]
        return self.append({layout.lease_path("main", number, action):
                            yamlio.dumps(rec.to_dict())}, key, f"lease {number} {action}")

    def merge(self, ball: str, key: str | None) -> str:
        git("checkout", "-q", "main", cwd=self.work)
        return signed_commit(self.work, {}, f"integrate {SLICE}/{ball}\n\nLeap-Slice: {SLICE}\n"
                             f"Leap-Ball: {ball}\n", self.keys[key] if key else None,
                             merge=f"leap/ball/{SLICE}/{ball}")


def build_signed_world(base_dir: Path, daemon: GitDaemon, draft: str = DRAFT,
                       balls: tuple[str, ...] = ("a", "b", "p"),
                       files: Mapping[str, str] = FILES) -> SignedWorld:
    keys_dir = base_dir / "keys"
    keys_dir.mkdir()
    keys = {name: make_key(keys_dir, name) for name in PRINCIPALS}
    bare = base_dir / "origin.git"
    git("init", "-q", "--bare", "-b", "main", str(bare), cwd=base_dir)
    res = leap("hooks", "install", "--server", cwd=bare)
    assert res.code == 0, res
    tracked = {**files, ".leap/config.yaml": CONFIG, ".leap/allowed_signers": policy_text(keys)}
    work = make_repo(base_dir / "work", tracked)
    as_root = {"LEAP_SIGNING_KEY": str(keys["root"])}
    res = leap("init", cwd=work, env=as_root)
    assert res.code == 0, res
    base = git("rev-parse", "HEAD", cwd=work)
    (work / "slice.yaml").write_text(draft)
    res = leap("slice", "cut", "slice.yaml", cwd=work, env={"LEAP_SIGNING_KEY": str(keys["ivan"])})
    assert res.code == 0, res
    (work / "slice.yaml").unlink()
    world = SignedWorld(bare, work, daemon, keys, base)
    for ball in balls:
        world.throw(ball)
    pushed = world.push("main", "leap/ledger")
    assert pushed.returncode == 0, pushed.stderr
    return world


def signed_world(served: Served, key: str = "signed", draft: str = DRAFT,
                 balls: tuple[str, ...] = ("a", "b", "p")) -> AbstractContextManager[SignedWorld]:
    """The run's signed world ``key`` (built on first use from ``draft`` with ``balls``
    thrown: one key, one draft), a copy of its own for the block."""
    return served.world(key, lambda folder: build_signed_world(folder, served.daemon, draft,
                                                               balls))
