"""What a crash or a damaged cache leaves behind never blocks the next write, and a lock that
may be git's own is never taken from it (review findings, reversibility lens)."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from leapgit.errors import InvalidRecord
from leapgit.ledger.store import WRITING_MARKER, Ledger, LedgerCorrupt
from leapgit.records import schema
from tests.support import git, leap, make_repo


def _ledger(tmp_path: Path, name: str = "repo") -> Path:
    root = make_repo(tmp_path / name, {"f": "x\n"})
    with Ledger(root / ".git") as ledger:
        ledger.init(b"kind: ledger\n")
    return root


def test_locks_left_by_a_dead_leapgit_writer_are_recovered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _ledger(tmp_path)
    gd = root / ".git"
    with Ledger(gd) as ledger:
        tip = ledger.tip()
        assert tip is not None
        # what a SIGKILL inside a write leaves: the marker, an object lock, and a ref lock
        # naming the commit it was about to install
        dead = ledger.committer.commit(tip, {"dead.yaml": b"x\n"},
                                       b"dead\n\nLeap-Record: dead.yaml\n")
    (gd / WRITING_MARKER).touch()
    (gd / "objects" / "ab").mkdir(exist_ok=True)
    (gd / "objects" / "ab" / ("c" * 38 + ".lock")).write_bytes(b"partial")
    (gd / "refs/heads/leap/ledger.lock").write_bytes(dead + b"\n")
    with Ledger(gd) as ledger:
        written = ledger.append({"after.yaml": b"ok\n"}, "after")
    assert git("rev-parse", "leap/ledger", cwd=root) == written.commit
    assert not list((gd / "objects").glob("*/*.lock"))
    assert not (gd / "refs/heads/leap/ledger.lock").exists()
    assert not (gd / WRITING_MARKER).exists()
    assert "removed 2 lock file(s)" in capsys.readouterr().err


def test_a_live_git_ref_lock_is_waited_for_not_taken(tmp_path: Path) -> None:
    root = _ledger(tmp_path)
    old = git("rev-parse", "leap/ledger", cwd=root)
    blob = git("hash-object", "-w", "--stdin", cwd=root, input=b"git\n")
    env = {"GIT_INDEX_FILE": str(tmp_path / "idx")}
    git("read-tree", old, cwd=root, env=env)
    git("update-index", "--add", "--cacheinfo", f"100644,{blob},git.yaml", cwd=root, env=env)
    theirs = git("commit-tree", git("write-tree", cwd=root, env=env), "-p", old, "-m", "git",
                 cwd=root)
    tx = subprocess.Popen(["git", "update-ref", "--stdin"], cwd=root, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert tx.stdin is not None and tx.stdout is not None
    tx.stdin.write(f"start\nupdate refs/heads/leap/ledger {theirs} {old}\nprepare\n".encode())
    tx.stdin.flush()
    assert tx.stdout.readline().strip() == b"start: ok"
    assert tx.stdout.readline().strip() == b"prepare: ok"

    def finish() -> None:
        time.sleep(2.5)  # longer than any "stale" threshold
        assert tx.stdin is not None
        tx.stdin.write(b"commit\n")
        tx.stdin.close()

    threading.Thread(target=finish).start()
    with Ledger(root / ".git") as ledger:
        written = ledger.append({"mine.yaml": b"mine\n"}, "mine")
    assert tx.wait(10) == 0, tx.stderr.read() if tx.stderr else ""
    assert git("rev-parse", f"{written.commit}^", cwd=root) == theirs
    files = git("ls-tree", "--name-only", "leap/ledger", cwd=root).split()
    assert {"git.yaml", "mine.yaml"} <= set(files)


def test_a_damaged_validator_cache_is_recompiled_never_trusted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # damaged here, not the run's
    schema._validator.cache_clear()
    bad = {"kind": "receipt", "format": 1}
    with pytest.raises(InvalidRecord):
        schema.validate_record(bad, "r.yaml")
    entries = list(schema._cache_dir().glob("v_*.py"))
    assert entries
    for entry in entries:  # a validator that lets everything through, hash line unchanged
        header = entry.read_text().split("\n", 1)[0]
        entry.write_text(f"{header}\ndef validate(data, custom_formats={{}}, name_prefix=None):\n"
                         "    return data\n")
    schema._validator.cache_clear()
    with pytest.raises(InvalidRecord, match="missing required"):
        schema.validate_record(bad, "r.yaml")
    for entry in entries:
        entry.write_bytes(b"")
    schema._validator.cache_clear()
    with pytest.raises(InvalidRecord, match="missing required"):
        schema.validate_record(bad, "r.yaml")


def test_a_damaged_compiled_validator_is_recompiled_never_trusted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import marshal

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # damaged here, not the run's
    schema._validator.cache_clear()
    bad = {"kind": "receipt", "format": 1}
    with pytest.raises(InvalidRecord):
        schema.validate_record(bad, "r.yaml")
    entries = list(schema._cache_dir().glob("v_*.bin"))
    assert entries
    lenient = marshal.dumps(compile("def validate(data, custom_formats={}, name_prefix=None):\n"
                                    "    return data\n", "lenient", "exec"))
    for entry in entries:  # a validator that lets everything through, both hashes unchanged
        entry.write_bytes(entry.read_bytes()[:64] + lenient)
    schema._validator.cache_clear()
    with pytest.raises(InvalidRecord, match="missing required"):
        schema.validate_record(bad, "r.yaml")
    for entry in entries:
        entry.write_bytes(b"\0" * 10)
    schema._validator.cache_clear()
    with pytest.raises(InvalidRecord, match="missing required"):
        schema.validate_record(bad, "r.yaml")


def test_trees_cached_from_one_repository_never_stand_in_for_another(tmp_path: Path) -> None:
    a = _ledger(tmp_path, "a")
    with Ledger(a / ".git") as ledger:
        ledger.append({"deep/er/x.yaml": b"x\n"}, "x")
        assert ledger.view().read("deep/er/x.yaml") == b"x\n"
        tree = git("rev-parse", "leap/ledger:deep", cwd=a)
    b = tmp_path / "b"
    shutil.copytree(a, b)
    (b / ".git" / "objects" / tree[:2] / tree[2:]).unlink()
    with Ledger(b / ".git") as ledger, pytest.raises(LedgerCorrupt, match="git fsck"):
        ledger.view().read("deep/er/x.yaml")


def test_init_on_a_sha256_repository_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "s256"
    git("init", "-q", "--object-format=sha256", str(root), cwd=tmp_path)
    result = leap("init", cwd=root)
    assert result.code == 2 and "sha256" in result.err
    assert not (root / ".leap").exists()


def test_validators_other_schemas_left_untouched_for_a_week_go_when_one_is_compiled(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each schema's (and fastjsonschema's) version compiles a validator of its own in the
    user's cache; before, none was ever removed. A compile (rare: a new schema or version)
    removes what nothing wrote for a week; fresh ones, its own, and names not of leapgit's
    making stay."""
    import os
    import time

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = schema._cache_dir()
    folder.mkdir(parents=True)
    week = time.time() - 8 * 24 * 3600
    old = [folder / f"v_{'a' * 32}.py", folder / f"v_{'a' * 32}.cpython-311.bin",
           folder / f"v_{'b' * 32}.123.tmp"]
    fresh = folder / f"v_{'c' * 32}.py"
    foreign = folder / "notes.txt"
    for path in (*old, fresh, foreign):
        path.write_text("x")
    for path in (*old, foreign):
        os.utime(path, (week, week))
    schema._validator.cache_clear()
    with pytest.raises(InvalidRecord):  # compiles the receipt's validator afresh
        schema.validate_record({"kind": "receipt", "format": 1}, "r.yaml")
    left = {p.name for p in folder.iterdir()}
    assert not left & {p.name for p in old}, left
    assert {fresh.name, foreign.name} <= left, left
    assert any(n.endswith(".py") and n not in (fresh.name,) for n in left), left  # its own
    schema._validator.cache_clear()
    with pytest.raises(InvalidRecord, match="missing required"):  # and it is used
        schema.validate_record({"kind": "receipt", "format": 1}, "r.yaml")


def test_a_validator_in_use_is_not_swept_with_those_nothing_uses(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A validator's date changed only when it was written, so a week after, the first
    compile of another schema removed every validator still in use, to be compiled again
    on its next use (a boundary review). One loaded keeps its date fresh."""
    import os
    import time

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    schema._validator.cache_clear()
    with pytest.raises(InvalidRecord):
        schema.validate_record({"kind": "receipt", "format": 1}, "r.yaml")
    used = sorted(p.name for p in schema._cache_dir().iterdir())
    assert any(n.endswith(".py") for n in used) and any(n.endswith(".bin") for n in used)
    week = time.time() - 8 * 24 * 3600
    for path in schema._cache_dir().iterdir():
        os.utime(path, (week, week))
    schema._validator.cache_clear()
    with pytest.raises(InvalidRecord):  # loaded again, from the cache
        schema.validate_record({"kind": "receipt", "format": 1}, "r.yaml")
    schema._compile({"type": "string", "$comment": "another schema"})  # a compile: a sweep
    left = sorted(p.name for p in schema._cache_dir().iterdir())
    assert set(used) <= set(left), (used, left)
