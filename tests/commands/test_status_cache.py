"""`leap status` prints its last answer again while nothing it reads moved (issue 13 item 7:
no ledger opened, no dulwich loaded), and computes afresh when anything did: the ledger,
the spine, the config, the argument, leapgit's code, a shallow clone. Each case plants an
answer no computation prints under the kept key, so a test sees which of the two ran."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from leapgit.commands import status_cache
from tests.slices.drafts import base_draft, write
from tests.support import commit_all, git, leap
from tests.test_cli import imported, under

PLANTED = "PLANTED: a kept answer"


@pytest.fixture
def cut(repo: Path) -> Path:
    assert leap("init", cwd=repo).code == 0
    commit_all(repo, "config")
    assert leap("slice", "cut", str(write(repo.parent / "s.yaml", base_draft())),
                cwd=repo).code == 0
    return repo


def kept(repo: Path, name: str = "every.json") -> Path:
    found = list((repo / ".git" / "leap-cache").glob(f"status-*/{name}"))
    assert len(found) == 1, found
    return found[0]


def plant(repo: Path, *args: str) -> None:
    """Run `leap status ARGS` (it keeps its answer), then put an answer no computation
    gives in its place, under the same key."""
    assert leap("status", *args, cwd=repo).code == 0
    path = kept(repo, f"slice-{args[0]}.json" if args else "every.json")
    entry = json.loads(path.read_text())
    path.write_text(json.dumps({**entry, "lines": [PLANTED], "json": {"planted": True}}))


def test_the_kept_answer_is_what_the_computation_prints_byte_for_byte(cut: Path) -> None:
    for args in ((), ("--json",), ("s1",), ("s1", "--json")):
        first = leap("status", *args, cwd=cut)  # computed, and kept
        again = leap("status", *args, cwd=cut)  # the kept answer
        assert first.code == again.code == 0 and first.out == again.out, args
        assert "wave 0" in first.out or '"waves"' in first.out
    plant(cut)
    assert leap("status", cwd=cut).out == PLANTED + "\n"  # the kept answer is what it said
    assert json.loads(leap("status", "--json", cwd=cut).out) == {"planted": True}


def test_a_status_with_nothing_moved_loads_no_dulwich_and_no_rule(cut: Path) -> None:
    assert leap("status", cwd=cut).code == 0
    names, proc = imported("status", cwd=cut)
    assert proc.returncode == 0 and "wave 0" in proc.stdout, proc.stderr[-2000:]
    for package in ("leapgit.rules", "leapgit.ledger.store", "ruamel"):
        assert not under(names, package), sorted(under(names, package))
    assert under(names, "dulwich") == {"dulwich"}  # its package alone: the stamp's version


def _ledger_moves(repo: Path, _: pytest.MonkeyPatch) -> None:
    assert leap("slice", "abandon", "s1", "--reason", "moved on", cwd=repo).code == 0


def _config_changes(repo: Path, _: pytest.MonkeyPatch) -> None:
    config = repo / ".leap" / "config.yaml"
    config.write_text(config.read_text().replace("round_limit: 4", "round_limit: 3"))


def _spine_moves(repo: Path, _: pytest.MonkeyPatch) -> None:
    (repo / "notes.txt").write_text("a spine commit\n")
    commit_all(repo, "on the spine")


def _code_changes(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stamp = status_cache.schemas_stamp  # a module of leapgit, or a schema, edited
    monkeypatch.setattr(status_cache, "schemas_stamp", lambda *a: stamp(*a) + "-edited")


def _shallow(repo: Path, _: pytest.MonkeyPatch) -> None:
    root = git("rev-list", "--max-parents=0", "HEAD", cwd=repo)
    (repo / ".git" / "shallow").write_text(root + "\n")


@pytest.mark.parametrize("move", [_ledger_moves, _config_changes, _spine_moves,
                                  _code_changes, _shallow])
def test_anything_the_answer_reads_moved_computes_it_afresh(
        cut: Path, move: Callable[[Path, pytest.MonkeyPatch], None],
        monkeypatch: pytest.MonkeyPatch) -> None:
    plant(cut)
    assert leap("status", cwd=cut).out == PLANTED + "\n"
    move(cut, monkeypatch)
    r = leap("status", cwd=cut)
    assert r.code == 0 and PLANTED not in r.out and "wave 0" in r.out, r
    if move is _ledger_moves:
        assert "abandoned" in r.out and "moved on" in r.out
    if move is _config_changes:
        assert "0/3" in r.out


def test_each_argument_keeps_its_own_answer(cut: Path) -> None:
    plant(cut, "s1")
    assert leap("status", "s1", cwd=cut).out == PLANTED + "\n"
    r = leap("status", cwd=cut)
    assert r.code == 0 and PLANTED not in r.out and "wave 0" in r.out


@pytest.mark.parametrize("damage", ["", "{", "[]", '{"key": 1}', '{"lines": "x"}',
                                    "[" * 200_000])  # deeper than the parser recurses
def test_a_kept_answer_damaged_from_outside_is_computed_again(cut: Path, damage: str) -> None:
    first = leap("status", cwd=cut)
    kept(cut).write_text(damage)
    again = leap("status", cwd=cut)
    assert again.code == 0 and again.out == first.out
    assert json.loads(kept(cut).read_text())["lines"]  # kept anew


def test_a_git_dir_that_cannot_keep_an_answer_still_answers(cut: Path) -> None:
    first = leap("status", cwd=cut)
    folder = kept(cut).parent
    kept(cut).unlink()
    folder.rmdir()
    folder.write_text("a file where the answers' folder goes\n")
    again = leap("status", cwd=cut)
    assert again.code == 0 and again.out == first.out and again.err == ""
