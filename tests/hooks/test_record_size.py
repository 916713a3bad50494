"""A ledger record over the 1 MiB cap is refused from its object header, never inflated
(issue 18 F9): 128 MiB of zeros travel as ~130 KB, and reading them whole cost the hook
hundreds of MB of memory before the cap refused them."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from leapgit.gitobj import object_size
from tests.hooks.world import World, remote_refs
from tests.support import git, make_repo

BIG = 128 << 20  # bytes of zeros in the record


def write_zeros(repo: Path, size: int, tail: bytes = b"") -> str:
    """A blob of ``size`` zero bytes (then ``tail``), streamed into git: never in memory."""
    proc = subprocess.Popen(["git", "hash-object", "-w", "--stdin"], cwd=repo,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    chunk = bytes(1 << 20)
    for _ in range(size >> 20):
        proc.stdin.write(chunk)
    proc.stdin.write(tail)
    proc.stdin.close()
    sha = proc.stdout.read().decode().strip()
    assert proc.wait() == 0
    return sha


def ledger_commit_adding(repo: Path, blob: str, name: str = "huge.yaml") -> str:
    tip = git("rev-parse", "leap/ledger", cwd=repo)
    listing = git("ls-tree", tip, cwd=repo)
    tree = git("mktree", cwd=repo, input=f"{listing}\n100644 blob {blob}\t{name}\n".encode())
    return git("commit-tree", "-p", tip, "-m", "a huge record", tree, cwd=repo)


@pytest.fixture
def big(world: World) -> Iterator[tuple[World, str]]:
    blob = write_zeros(world.work, BIG)
    before = remote_refs(world.bare)
    yield world, ledger_commit_adding(world.work, blob)
    git("update-ref", "-d", "refs/heads/parking", cwd=world.bare, check=False)
    assert remote_refs(world.bare) == before


def test_a_huge_record_is_refused_by_the_server(big: tuple[World, str]) -> None:
    w, commit = big
    git("update-ref", "refs/heads/huge-ledger", commit, cwd=w.work)
    result = w.push("refs/heads/huge-ledger:refs/heads/leap/ledger")
    assert result.returncode != 0, result.stderr
    assert "[L8] refs/heads/leap/ledger" in result.stderr, result.stderr
    assert f"huge.yaml: not a valid record: huge.yaml: larger than the {1 << 20} byte cap " \
        f"({BIG} bytes)" in result.stderr, result.stderr


def _hook_peak_rss(bare: Path, stdin: bytes, env: dict[str, str] | None = None
                   ) -> tuple[int, str]:
    """Peak RSS (bytes) of one pre-receive run, measured by a parent that has no other
    child; and its stderr."""
    probe = ("import resource, subprocess, sys\n"
             "p = subprocess.run([sys.executable, '-m', 'leapgit.hookimpl.pre_receive'], "
             "input=sys.stdin.buffer.read(), capture_output=True)\n"
             "sys.stderr.write(p.stderr.decode('utf-8', 'replace'))\n"
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=bare, input=stdin,
                          capture_output=True, check=True,
                          env={**(env or os.environ), "GIT_DIR": str(bare)})
    return int(proc.stdout) * 1024, proc.stderr.decode()


@pytest.mark.parametrize("stored", ["loose", "packed"])
def test_the_hook_reads_a_huge_record_from_its_header(big: tuple[World, str],
                                                      stored: str) -> None:
    w, commit = big
    git("update-ref", "refs/heads/parking", commit, cwd=w.work)
    assert w.push("refs/heads/parking").returncode == 0  # the objects reach the server
    if stored == "packed":
        git("repack", "-a", "-d", "-q", cwd=w.bare)
    tip = git("rev-parse", "leap/ledger", cwd=w.bare)
    rss, err = _hook_peak_rss(w.bare, f"{tip} {commit} refs/heads/leap/ledger\n".encode())
    assert rss < 100 << 20, f"the hook peaked at {rss >> 20} MiB"
    assert f"larger than the {1 << 20} byte cap ({BIG} bytes)" in err, err


@pytest.mark.parametrize("layout", ["loose", "packed", "ofs-delta", "ref-delta"])
def test_object_size_agrees_with_git(tmp_path: Path, layout: str) -> None:
    from dulwich.repo import Repo

    repo = make_repo(tmp_path / "r", {"a.txt": "a\n"})
    text = "".join(f"line {i} of a record that git can delta\n" for i in range(20000))
    first = git("hash-object", "-w", "--stdin", cwd=repo, input=text.encode())
    second = git("hash-object", "-w", "--stdin", cwd=repo, input=(text + "a tail\n").encode())
    small = git("hash-object", "-w", "--stdin", cwd=repo, input=b"small\n")
    if layout != "loose":
        flags = {"packed": ["--window=0"], "ofs-delta": ["--delta-base-offset"],
                 "ref-delta": []}[layout]
        pack = git("pack-objects", "-q", *flags, str(repo / ".git/objects/pack/pack"),
                   cwd=repo, input=f"{first}\n{second}\n{small}\n".encode())
        assert pack
        for sha in (first, second, small):
            os.unlink(repo / ".git/objects" / sha[:2] / sha[2:])
        verify = git("verify-pack", "-v", str(repo / f".git/objects/pack/pack-{pack}.idx"),
                     cwd=repo)
        # a delta's line names its depth and base; git deltas the smaller against the larger
        deltas = [line for line in verify.splitlines()
                  if line[:40] in (first, second) and len(line.split()) > 5]
        assert bool(deltas) == (layout != "packed"), verify
    with Repo(str(repo)) as r:
        for sha in (first, second, small):
            assert object_size(r.object_store, sha.encode()) == \
                int(git("cat-file", "-s", sha, cwd=repo)), (layout, sha)
        assert object_size(r.object_store, b"1" * 40) is None
    from dulwich.object_store import MemoryObjectStore

    assert object_size(MemoryObjectStore(), first.encode()) is None  # no header to read


def test_a_ledger_view_refuses_a_huge_record_from_its_header(tmp_path: Path) -> None:
    # every rule reads records through a LedgerView (spine, balls, passes): the same cap,
    # read from the header, whichever ledger tip it views
    import tracemalloc

    from leapgit.errors import InvalidRecord
    from leapgit.ledger.view import LedgerView
    from leapgit.records.types import SliceRecord
    from tests.support import leap

    repo = make_repo(tmp_path / "r", {"a.txt": "a\n"})
    assert leap("init", cwd=repo).code == 0
    commit = ledger_commit_adding(repo, write_zeros(repo, BIG), "huge.yaml")
    from dulwich.repo import Repo

    with Repo(str(repo)) as r:
        view = LedgerView(r, commit)
        tracemalloc.start()
        with pytest.raises(InvalidRecord, match=rf"huge.yaml: larger than the {1 << 20} byte "
                           rf"cap \({BIG} bytes\)"):
            view.record("huge.yaml", SliceRecord)
        with pytest.raises(InvalidRecord, match="byte cap"):
            view.read("huge.yaml")
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert peak < 16 << 20, f"{peak >> 20} MiB"


@pytest.mark.parametrize("layout", ["loose", "packed", "ofs-delta", "ref-delta"])
def test_object_type_agrees_with_git(tmp_path: Path, layout: str) -> None:
    """Blind review r1 F2: the type is read from the header (a delta's from its base)."""
    from dulwich.repo import Repo

    from leapgit.gitobj import object_type

    repo = make_repo(tmp_path / "r", {"a.txt": "a\n"})
    text = "".join(f"line {i} of a file that git can delta\n" for i in range(20000))
    first = git("hash-object", "-w", "--stdin", cwd=repo, input=text.encode())
    second = git("hash-object", "-w", "--stdin", cwd=repo, input=(text + "tail\n").encode())
    tree, commit = git("rev-parse", "HEAD^{tree}", cwd=repo), git("rev-parse", "HEAD", cwd=repo)
    shas = (first, second, tree, commit)
    if layout != "loose":
        flags = {"packed": ["--window=0"], "ofs-delta": ["--delta-base-offset"],
                 "ref-delta": []}[layout]
        git("pack-objects", "-q", *flags, str(repo / ".git/objects/pack/pack"), cwd=repo,
            input="".join(f"{s}\n" for s in shas).encode())
        for sha in shas:
            loose = repo / ".git/objects" / sha[:2] / sha[2:]
            if loose.exists():
                os.unlink(loose)
    names = {"commit": 1, "tree": 2, "blob": 3}
    with Repo(str(repo)) as r:
        for sha in shas:
            assert object_type(r.object_store, sha.encode()) == \
                names[git("cat-file", "-t", sha, cwd=repo)], (layout, sha)
        assert object_type(r.object_store, b"1" * 40) is None


def test_the_tree_check_never_inflates_a_pushed_blob(world: World) -> None:
    """Blind review r1 F2: the hook's tree check read every object of the push's quarantine
    whole, blobs included: a 128 MiB zero blob pushed to any branch cost it ~300 MiB. The
    quarantine is laid out as git's receive-pack lays it (objects of the push only, the
    repository's as alternates)."""
    bare = world.bare
    quarantine = bare / "objects" / "incoming-test"
    quarantine.mkdir()
    env = {**os.environ, "GIT_OBJECT_DIRECTORY": str(quarantine),
           "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(bare / "objects")}
    try:
        proc = subprocess.Popen(["git", "hash-object", "-w", "--stdin"], cwd=bare, env=env,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert proc.stdin is not None and proc.stdout is not None
        chunk = bytes(1 << 20)
        for _ in range(BIG >> 20):
            proc.stdin.write(chunk)
        proc.stdin.close()
        blob = proc.stdout.read().decode().strip()
        assert proc.wait() == 0
        tree = subprocess.run(["git", "mktree"], cwd=bare, env=env, check=True,
                              input=f"100644 blob {blob}\tbig.bin\n".encode(),
                              capture_output=True).stdout.decode().strip()
        main = git("rev-parse", "main", cwd=bare)
        commit = subprocess.run(["git", "commit-tree", tree, "-p", main, "-m", "big"], cwd=bare,
                                env={**env, **IDENTITY_ENV}, check=True,
                                capture_output=True).stdout.decode().strip()
        rss, err = _hook_peak_rss(bare, f"{'0' * 40} {commit} refs/heads/feature\n".encode(),
                                  {**env, "GIT_QUARANTINE_PATH": str(quarantine)})
        assert rss < 100 << 20, f"the hook peaked at {rss >> 20} MiB: {err}"
    finally:
        import shutil

        shutil.rmtree(quarantine)


IDENTITY_ENV = {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.invalid",
                "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.invalid"}


@pytest.mark.parametrize("stored", ["loose", "packed"])
def test_a_huge_blob_named_as_a_protected_tip_is_never_inflated(world: World,
                                                                stored: str) -> None:
    """Blind review r2 (boundary condition): a blob pushed as the ledger's (or the spine's)
    new tip is refused as no commit, but its type was read by inflating it whole (both in
    the non-commit check and the tree walk of a hook without quarantine): 128 MiB of zeros
    peaked the hook above 128 MiB. The type comes from the object's header."""
    w = world
    blob = write_zeros(w.work, BIG)
    before = remote_refs(w.bare)
    assert w.push(f"{blob}:refs/tags/parked-blob").returncode == 0  # the blob reaches it
    try:
        if stored == "packed":
            git("repack", "-a", "-d", "-q", cwd=w.bare)
        tip = git("rev-parse", "leap/ledger", cwd=w.bare)
        rss, err = _hook_peak_rss(w.bare, f"{tip} {blob} refs/heads/leap/ledger\n".encode())
        assert "[L8] refs/heads/leap/ledger" in err and "points at a blob, not a commit" in \
            err, err
        assert rss < 100 << 20, f"the hook peaked at {rss >> 20} MiB"
    finally:
        git("update-ref", "-d", "refs/tags/parked-blob", cwd=w.bare)
    assert remote_refs(w.bare) == before


def test_object_type_reads_through_alternates(tmp_path: Path) -> None:
    """pre-receive's store is the quarantine with the repository's objects as an
    alternate: an object already stored is typed from its header there too."""
    from dulwich.repo import Repo

    from leapgit.gitobj import object_type

    origin = make_repo(tmp_path / "origin", {"a.txt": "a\n"})
    blob = git("rev-parse", "HEAD:a.txt", cwd=origin)
    borrower = tmp_path / "borrower.git"
    git("init", "-q", "--bare", str(borrower), cwd=tmp_path)
    (borrower / "objects" / "info" / "alternates").write_text(
        str(origin / ".git" / "objects") + "\n")
    assert git("cat-file", "-t", blob, cwd=borrower) == "blob"
    with Repo(str(borrower)) as r:
        assert object_type(r.object_store, blob.encode()) == 3
