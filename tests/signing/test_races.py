"""Pushes that race. git runs ``pre-receive`` for pushes to different refs side by side, and
each run reads the other ref as it was before: a builder's round (its ball branch) and its
own pass (the ledger), pushed at once, both land. The spine, one ref moved by compare and
swap, is where that is caught (S4): the integrator's merge is refused."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.hooks.world import IDENTITY, remote_refs
from tests.signing.world import SLICE, SignedWorld
from tests.support import git

MEET = """\
#!/bin/sh
# each push is judged by leapgit's hook, then waits for the other's verdict before git
# moves its ref: both were judged with the other ref as it stood before either landed
"{judge}" || exit $?
touch "{meet}/$$"
i=0
while [ "$(ls "{meet}" | wc -l)" -lt 2 ] && [ "$i" -lt 600 ]; do sleep 0.05; i=$((i+1)); done
"""


@contextmanager
def pushes_meet(bare: Path) -> Iterator[None]:
    """Make two concurrent pushes' pre-receive runs overlap for sure (the race, without
    relying on timing)."""
    hooks = bare / "hooks"
    judge, meet = hooks / "pre-receive.judge", bare.parent / "meet"
    meet.mkdir()
    os.replace(hooks / "pre-receive", judge)
    (hooks / "pre-receive").write_text(MEET.format(judge=judge, meet=meet))
    (hooks / "pre-receive").chmod(0o755)
    try:
        yield
    finally:
        os.replace(judge, hooks / "pre-receive")


def at_once(w: SignedWorld, *pushes: tuple[str, ...]) -> list[subprocess.CompletedProcess[str]]:
    procs = [subprocess.Popen(["git", "push", "--porcelain", "--no-verify", w.url, *refs],
                              cwd=w.work, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env={**os.environ, **IDENTITY})
             for refs in pushes]
    out = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=120)
        out.append(subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr))
    return out


def fp(world: SignedWorld, name: str) -> str:
    import base64

    from leapgit.signing.policy import fingerprint

    text = world.keys[name].with_suffix(".pub").read_text().split()[1]
    return fingerprint(base64.b64decode(text))


@pytest.mark.parametrize("grader", ["alice", "alice-2"])
def test_a_round_and_its_builders_pass_pushed_at_once_are_never_merged(
        fresh: SignedWorld, grader: str) -> None:
    # alice builds a and grades it herself (with her own key, or her second one): pushed
    # one after the other, either push is refused; pushed at once, both land.
    w = fresh
    tree = w.build("a", {"src/a.py": "A = 10\n"}, "alice")
    w.receipt("a", "bob", claim=True)  # the ledger links no alice key to the round
    w.grade("a", grader, tree)
    with pushes_meet(w.bare):
        raced = at_once(w, (f"leap/ball/{SLICE}/a",), ("leap/ledger",))
    assert [p.returncode for p in raced] == [0, 0], [p.stderr for p in raced]
    round_sha = git("rev-parse", f"leap/ball/{SLICE}/a", cwd=w.work)
    assert remote_refs(w.bare)[f"refs/heads/leap/ball/{SLICE}/a"] == round_sha
    # the honest integrator takes the lease and merges the ball that seems to have passed
    w.lease("ivan")
    assert w.push("leap/ledger").returncode == 0
    merge = w.merge("a", "ivan")
    before = remote_refs(w.bare)
    result = w.push("main")
    assert result.returncode != 0, result.stderr
    assert remote_refs(w.bare) == before, "a refused push moved a remote ref"
    who = f"key {fp(w, 'alice')} (alice), which " + (
        "signed the score record " if grader == "alice" else
        f"is alice, as key {fp(w, 'alice-2')}, which signed the score record ")
    assert f"[S4] refs/heads/main {round_sha[:12]}: a round for s1/a signed by {who}" \
        in result.stderr, result.stderr
    assert f"merged by {merge[:12]}" in result.stderr, result.stderr


def test_a_ball_judged_clean_still_merges(fresh: SignedWorld) -> None:
    # the re-check at the merge reads the candidate's signers: bob built, carol graded
    w = fresh
    tree = w.build("b", {"src/b.py": "B = 20\n"}, "bob")
    assert w.push(f"leap/ball/{SLICE}/b").returncode == 0
    w.grade("b", "carol", tree)
    w.lease("ivan")
    merge = w.merge("b", "ivan")
    # the ledger first: the server judges the spine against the ledger it
    # stores (F1)
    assert w.push("leap/ledger").returncode == 0
    result = w.push("main")
    assert result.returncode == 0, result.stderr
    assert remote_refs(w.bare)["refs/heads/main"] == merge
