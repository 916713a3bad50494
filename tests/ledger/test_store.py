from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from leapgit.errors import LedgerConflict, UsageError
from leapgit.ledger.store import Ledger, LedgerMissing
from tests.support import git, make_repo


@pytest.fixture
def ledger_repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "repo", {"f.txt": "x\n"})
    with Ledger(root / ".git") as ledger:
        ledger.init(b"kind: ledger\n")
    return root


def test_init_is_idempotent_and_an_orphan(ledger_repo: Path) -> None:
    tip = git("rev-parse", "leap/ledger", cwd=ledger_repo)
    with Ledger(ledger_repo / ".git") as ledger:
        assert ledger.init(b"other\n") == (tip, False)
    assert git("rev-list", "--count", "leap/ledger", cwd=ledger_repo) == "1"
    assert git("merge-base", "--all", "leap/ledger", "main", cwd=ledger_repo, check=False) == ""


def test_append_adds_one_commit_with_trailers_and_never_touches_the_work_tree(
    ledger_repo: Path,
) -> None:
    status_before = git("status", "--porcelain", cwd=ledger_repo)
    head_before = git("rev-parse", "HEAD", cwd=ledger_repo)
    with Ledger(ledger_repo / ".git") as ledger:
        written = ledger.append({"a/b/c.yaml": b"k: v\n"}, "add c", [("Leap-Slice", "s")])
    assert git("rev-parse", "leap/ledger", cwd=ledger_repo) == written.commit
    assert git("show", "leap/ledger:a/b/c.yaml", cwd=ledger_repo) == "k: v"
    trailers = git("log", "-1", "--format=%(trailers:only,unfold)", "leap/ledger",
                   cwd=ledger_repo)
    assert "Leap-Slice: s" in trailers and "Leap-Record: a/b/c.yaml" in trailers
    assert git("status", "--porcelain", cwd=ledger_repo) == status_before
    assert git("rev-parse", "HEAD", cwd=ledger_repo) == head_before


def test_a_record_of_another_kind_reads_as_invalid_not_as_a_crash(ledger_repo: Path) -> None:
    """A typed read names the kind it expects: a slice record at a throw's path is an
    InvalidRecord naming both kinds (it was a KeyError in ``from_dict``, issue 13)."""
    from leapgit.errors import InvalidRecord
    from leapgit.ledger import layout, query
    from leapgit.records import yamlio
    from leapgit.records.types import SliceRecord, ThrowRecord

    path = layout.throw_path("s", "b", 1)
    rec = SliceRecord("s", "main", "0" * 40, ("b",), (("b",),), "2024-01-01T00:00:00Z")
    with Ledger(ledger_repo / ".git") as ledger:
        ledger.append({path: yamlio.dumps(rec.to_dict())}, "a slice where a throw belongs")
        view = ledger.view()
        with pytest.raises(InvalidRecord, match=r"kind: a slice record where a throw record "
                                                r"belongs"):
            query.throw(view, "s", "b", 1)
        assert view.record(path, SliceRecord) == rec
        assert view.record("slices/s/none.yaml", ThrowRecord) is None


def test_a_record_is_never_edited_and_the_ref_stays(ledger_repo: Path) -> None:
    with Ledger(ledger_repo / ".git") as ledger:
        ledger.append({"r.yaml": b"one\n"}, "one")
        tip = ledger.tip()
        with pytest.raises(LedgerConflict, match=r"never edited.*\[L8\]"):
            ledger.append({"r.yaml": b"two\n", "other.yaml": b"x\n"}, "edit")
        with pytest.raises(LedgerConflict, match="not a folder"):
            ledger.append({"r.yaml/inner.yaml": b"x\n"}, "under a file")
        assert ledger.tip() == tip
        # identical bytes may be replayed (sync) without a new commit
        assert ledger.append({"r.yaml": b"one\n"}, "same", identical_ok=True).paths == ()
        assert ledger.tip() == tip


def test_a_lost_race_replays_on_the_new_tip(ledger_repo: Path) -> None:
    """Someone moves the ledger with plain git between our reads: nothing is lost."""
    with Ledger(ledger_repo / ".git") as ledger:
        ledger.append({"mine/1.yaml": b"1\n"}, "first")
        blob = git("hash-object", "-w", "--stdin", cwd=ledger_repo, input=b"theirs\n")
        # their commit, built with plumbing on top of the current tip
        env = {"GIT_INDEX_FILE": str(ledger_repo / ".git" / "tmp-index")}
        git("read-tree", "leap/ledger", cwd=ledger_repo, env=env)
        git("update-index", "--add", "--cacheinfo", f"100644,{blob},theirs.yaml",
            cwd=ledger_repo, env=env)
        their_tree = git("write-tree", cwd=ledger_repo, env=env)
        theirs = git("commit-tree", their_tree, "-p", "leap/ledger", "-m", "theirs",
                     cwd=ledger_repo)
        git("update-ref", "refs/heads/leap/ledger", theirs, cwd=ledger_repo)
        written = ledger.append({"mine/2.yaml": b"2\n"}, "second")
    assert git("rev-parse", f"{written.commit}^", cwd=ledger_repo) == theirs
    files = git("ls-tree", "-r", "--name-only", "leap/ledger", cwd=ledger_repo).split()
    assert {"theirs.yaml", "mine/1.yaml", "mine/2.yaml"} <= set(files)


def test_a_replay_moves_the_ref_as_a_write_does_and_says_why_it_cannot(
        ledger_repo: Path) -> None:
    """A replay (`leap sync`) moves the ref through the writer's one compare-and-swap loop:
    a reflog it cannot write is named, as for an append, and nothing moves (it escaped as a
    raw IsADirectoryError from the replay's own loop, issue 13)."""
    before = git("rev-parse", "leap/ledger", cwd=ledger_repo)
    tree = git("rev-parse", "leap/ledger^{tree}", cwd=ledger_repo)
    base = git("commit-tree", tree, "-p", before, "-m", "theirs", cwd=ledger_repo)
    reflog = ledger_repo / ".git" / "logs" / "refs" / "heads" / "leap" / "ledger"
    reflog.unlink()
    reflog.mkdir()
    with Ledger(ledger_repo / ".git") as ledger, pytest.raises(UsageError) as caught:
        ledger.replay_onto(base)
    [line] = caught.value.lines()
    assert "cannot write the ledger ref's reflog" in line and "remove that folder" in line
    assert git("rev-parse", "leap/ledger", cwd=ledger_repo) == before
    reflog.rmdir()
    with Ledger(ledger_repo / ".git") as ledger:
        assert ledger.replay_onto(base) == (base, 0, 0, 0)  # a fast-forward: nothing rebuilt
    assert git("rev-parse", "leap/ledger", cwd=ledger_repo) == base


def test_append_without_a_ledger_says_to_init(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"f": "x"})
    with Ledger(root / ".git") as ledger, pytest.raises(LedgerMissing, match="leap init"):
        ledger.append({"x.yaml": b"x\n"}, "x")
    assert subprocess.run(["git", "rev-parse", "--verify", "leap/ledger"], cwd=root,
                          capture_output=True).returncode != 0


def test_reading_with_plain_git_only(ledger_repo: Path) -> None:
    """The ledger answers audit questions without leapgit: git log, --grep, show, trailers."""
    with Ledger(ledger_repo / ".git") as ledger:
        ledger.append({"slices/s/slice.yaml": b"kind: slice\n"}, "cut slice s",
                      [("Leap-Slice", "s")])
        ledger.append({"slices/t/slice.yaml": b"kind: slice\n"}, "cut slice t",
                      [("Leap-Slice", "t")])
    subjects = git("log", "--format=%s", "leap/ledger", cwd=ledger_repo).splitlines()
    assert subjects == ["cut slice t", "cut slice s", "leap: start the ledger"]
    grep = git("log", "--format=%s", "--grep=^Leap-Slice: s$", "leap/ledger", cwd=ledger_repo)
    assert grep == "cut slice s"
    message = git("log", "-1", "--format=%B", "leap/ledger~1", cwd=ledger_repo)
    parsed = git("interpret-trailers", "--parse", cwd=ledger_repo, input=message.encode())
    assert "Leap-Slice: s" in parsed and "Leap-Record: slices/s/slice.yaml" in parsed
    assert git("show", "leap/ledger:slices/t/slice.yaml", cwd=ledger_repo) == "kind: slice"


def test_the_reflog_names_the_writer_and_records_times_in_utc(ledger_repo: Path) -> None:
    import re

    from leapgit.timeutil import now_iso

    env_name = git("config", "user.name", cwd=ledger_repo, check=False)
    with Ledger(ledger_repo / ".git") as ledger:
        ledger.append({"a.yaml": b"k: v\n"}, "add a")
    line = git("reflog", "show", "-1", "--format=%gn|%gs", "leap/ledger", cwd=ledger_repo)
    who = os.environ.get("GIT_COMMITTER_NAME") or env_name or "leapgit"
    assert line.startswith(f"{who}|leap: add a")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", now_iso())


def test_a_configured_email_counts_without_a_name(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_repo(tmp_path / "repo", {"f.txt": "x\n"})
    for var in ("GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    git("config", "--unset", "user.name", cwd=root, check=False)
    git("config", "user.email", "real@example.com", cwd=root)
    with Ledger(root / ".git") as ledger:
        assert ledger.committer.identity()[0] == b"leapgit <real@example.com>"


GIT_DATES = ["1700000000 +0100", "@1700000000", "1700000000", "@1700000000 -0700",
             "2024-01-02T03:04:05Z", "2024-01-02T03:04:05 Z", "2024-01-02T03:04:05+01:00",
             "2024-01-02 03:04:05 +0200", "2024-01-02T03:04:05.123-0530",
             "2024-01-02T03:04:05+01", "2024-07-02T03:04:05", "2024-01-02 03:04",
             "Tue, 2 Jan 2024 03:04:05 +0100", "Tue, 2 Jan 2024 03:04:05 GMT",
             "Tue, 2 Jan 2024 03:04:05", "2 Jan 2024 03:04:05 +0100",
             "Tue, 2 Jan 2024 03:04:05 EST", "Tue, 2 Jan 2024 03:04:05 Z"]


@pytest.mark.parametrize("date", GIT_DATES)
def test_a_pinned_committer_date_is_read_as_git_reads_it(
        ledger_repo: Path, monkeypatch: pytest.MonkeyPatch, date: str) -> None:
    """``GIT_COMMITTER_DATE`` in each form git documents (raw, ISO 8601, RFC 2822; a time
    without a zone is local): the ledger commit carries the time and zone git itself gives
    a commit made under the same variable."""
    import time

    monkeypatch.setenv("TZ", "Europe/Berlin")  # an offset that differs from UTC, with DST
    time.tzset()
    monkeypatch.setenv("GIT_COMMITTER_DATE", date)
    try:
        tree = git("write-tree", cwd=ledger_repo)
        by_git = git("commit-tree", tree, "-m", "x", cwd=ledger_repo)
        with Ledger(ledger_repo / ".git") as ledger:
            ours = ledger.append({"d.yaml": b"k: v\n"}, "pinned").commit
    finally:
        monkeypatch.undo()
        time.tzset()
    raw = [git("log", "-1", "--format=%cd", "--date=raw", c, cwd=ledger_repo)
           for c in (by_git, ours)]
    assert raw[1] == raw[0], date


@pytest.mark.parametrize("date", ["yesterday", "2024-01-02", "1700000000 +01x0", "soon",
                                  "20240102", "Tue, 2 Jan 24 03:04:05 +0100",
                                  "1700000000 +9999", "2024-01-02T03:04:05+0199",
                                  "Tue, 2 Jan 2024 03:04:05 +9999",
                                  "Tue, 2 Jan 2024 03:04:05 XYZ", "Tue, 2 Jan 2024 03:04:05 UT",
                                  "@\u00b2", "@99999999999999999999",
                                  "0000-01-01T00:00:00Z"])
def test_a_committer_date_leapgit_cannot_read_as_git_does_writes_nothing(
        ledger_repo: Path, monkeypatch: pytest.MonkeyPatch, date: str) -> None:
    """Dates git refuses, and zones git would silently drop (``+9999``): refused whole."""
    before = git("rev-parse", "leap/ledger", cwd=ledger_repo)
    monkeypatch.setenv("GIT_COMMITTER_DATE", date)
    with Ledger(ledger_repo / ".git") as ledger, \
            pytest.raises(UsageError, match="GIT_COMMITTER_DATE"):
        ledger.append({"d.yaml": b"k: v\n"}, "pinned")
    monkeypatch.delenv("GIT_COMMITTER_DATE")
    assert git("rev-parse", "leap/ledger", cwd=ledger_repo) == before


def test_a_view_finds_each_path_as_git_does(ledger_repo: Path) -> None:
    """Paths are found one folder at a time, each folder's entry remembered: the blob git's
    `rev-parse <commit>:<path>` finds, the view finds, and nothing else (a path through a
    file, an empty name). A leading, trailing or doubled slash finds nothing, where git
    would read past it: record paths never hold one."""
    with Ledger(ledger_repo / ".git") as ledger:
        ledger.append({"a/b/c.yaml": b"k: v\n", "a/d.yaml": b"d: 1\n"}, "add")
        view = ledger.require()
        for path in ("a/b/c.yaml", "a/d.yaml", "a/b/c.yaml/x", "a/d.yaml/c.yaml", "a//b/c.yaml",
                     "/a/d.yaml", "", "a/", "a/b/", "a/x/c.yaml", "b/c.yaml", "a/b/c.yam"):
            found = git("rev-parse", "-q", "--verify", f"{view.commit}:{path}",
                        cwd=ledger_repo, check=False) if path and "//" not in path and \
                not path.startswith("/") and not path.endswith("/") else ""
            if found and git("cat-file", "-t", found, cwd=ledger_repo) != "blob":
                found = ""  # a folder: no record's blob
            assert (view.blob_id(path) or "") == found, path
        assert view.exists("a/b") and view.list("a") == ["b", "d.yaml"]
        assert view.list("a/b/") == [] and not view.exists("a/b/c.yaml/x")
        assert sorted(view.walk("a")) == ["a/b/c.yaml", "a/d.yaml"]
