"""T6: verdicts already paid for are never discarded, a kill included (``tribunal.left``).
A convening's folder whose ledger commit never landed (here: taken back, as if its run was
killed after the seats answered) is recorded by the next convening: envelope, routing and
verdicts, never the summary found there; a folder whose convening still sits is not
touched, and a verdict that does not read whole is left out, and said."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from leapgit.ledger import layout
from leapgit.ledger.store import Ledger
from leapgit.records import yamlio
from leapgit.tribunal.errors import OutDirRefused
from leapgit.tribunal.left import SITTING, record_left
from leapgit.tribunal.outdir import write_private
from tests.support import git
from tests.tribunal.conftest import Repo, rung
from tests.tribunal.jurors import JurorServer, detailed_pass


def _lost(repo: Repo) -> tuple[Path, str]:
    """A convening whose ledger commit is taken back: its folder, and its run id."""
    before = git("rev-parse", "leap/ledger", cwd=repo.root)
    done = repo.convene(out=None)
    assert not (done.out / SITTING).exists()  # an ended convening leaves nothing to read
    git("update-ref", "refs/heads/leap/ledger", before, cwd=repo.root)
    (done.out / SITTING).touch()  # as a kill before its commit leaves it
    return done.out, done.info.run_id


def _paths(repo: Repo, run_id: str) -> list[str]:
    folder = layout.tribunal_dir(run_id)
    with Ledger(repo.root / ".git") as ledger:
        return sorted(p for p in ledger.require().walk(folder))


def test_the_next_convening_records_what_a_killed_one_left_and_never_its_summary(
        repo: Repo) -> None:
    with JurorServer("openai", detailed_pass) as server:
        repo.config([rung("r1", "openai", server.url)])
        folder, run_id = _lost(repo)
        assert (folder / "summary.yaml").is_file() and not _paths(repo, run_id)
        repo.convene(out=None)
    got = _paths(repo, run_id)
    base = layout.tribunal_dir(run_id)
    assert f"{base}/envelope.yaml" in got and f"{base}/routing.yaml" in got, got
    assert len([p for p in got if "/verdicts/" in p]) == 8, got
    assert f"{base}/summary.yaml" not in got, got  # a decision never recorded never happened
    assert any("recorded the verdicts a killed convening left" in ln for ln in repo.lines)
    subject = git("log", "-1", "--format=%s", "leap/ledger~1", cwd=repo.root)
    assert subject == (f"tribunal {run_id} round 1: left by a killed run, 8 verdict(s) paid "
                       "for, no decision (T6)"), subject
    assert not (folder / SITTING).exists()  # once recorded, never read again
    with Ledger(repo.root / ".git") as ledger:
        assert record_left(repo.root / ".git", ledger) == []


def test_a_folder_whose_convening_still_sits_is_not_taken(repo: Repo) -> None:
    with JurorServer("openai", detailed_pass) as server:
        repo.config([rung("r1", "openai", server.url)])
        folder, run_id = _lost(repo)
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys, time\n"
        f"fd = os.open({str(folder / SITTING)!r}, os.O_RDWR)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with Ledger(repo.root / ".git") as ledger:
            assert record_left(repo.root / ".git", ledger) == []
        assert _paths(repo, run_id) == []
    finally:
        holder.kill()
        holder.wait()
    time.sleep(0.05)
    with Ledger(repo.root / ".git") as ledger:  # its sitter gone: now it is left
        assert record_left(repo.root / ".git", ledger) == [run_id]


def test_a_verdict_that_does_not_read_whole_is_left_out_and_said(repo: Repo) -> None:
    """A verdict cut short (a kill mid-write, by a leapgit that wrote in place) or of
    another run is left out and named; the others are recorded with their spend (it left
    the whole folder unrecorded, and the next run paid a new convening past the cap)."""
    with JurorServer("openai", detailed_pass) as server:
        repo.config([rung("r1", "openai", server.url)])
        folder, run_id = _lost(repo)
    [first, second, *_] = sorted((folder / "verdicts").glob("*.yaml"))
    first.write_bytes(first.read_bytes()[:40])  # cut short by the kill
    raw = yamlio.loads(second.read_bytes(), str(second))
    second.write_bytes(yamlio.dumps({**raw, "run_id": "t-20240101T000000Z-000000"}))
    said: list[str] = []
    with Ledger(repo.root / ".git") as ledger:
        assert record_left(repo.root / ".git", ledger, said.append) == [run_id]
    left_out = [line for line in said if line.startswith("left out ")]
    assert len(left_out) == 2, said
    assert first.name in left_out[0] and second.name in left_out[1], left_out
    assert "run_id" in left_out[1], left_out
    got = [p for p in _paths(repo, run_id) if "/verdicts/" in p]
    assert len(got) == 6 and not any(p.endswith((first.name, second.name)) for p in got), got
    with Ledger(repo.root / ".git") as ledger:  # recorded once, never read again
        assert record_left(repo.root / ".git", ledger, said.append) == []


def test_a_verdict_is_written_whole_or_not_at_all(tmp_path: Path) -> None:
    """Written aside and renamed: no reader, a killed run's next one included, ever finds
    a verdict file cut short; a link where it goes is refused, never replaced."""
    target = tmp_path / "v.yaml"
    write_private(target, b"a: 1\n" * 100_000)
    assert target.read_bytes() == b"a: 1\n" * 100_000
    assert oct(target.stat().st_mode & 0o777) == "0o600"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v.yaml"]  # nothing left aside
    os.symlink(tmp_path / "elsewhere", tmp_path / "link.yaml")
    with pytest.raises(OutDirRefused):
        write_private(tmp_path / "link.yaml", b"x")
    assert not (tmp_path / "elsewhere").exists() and (tmp_path / "link.yaml").is_symlink()
