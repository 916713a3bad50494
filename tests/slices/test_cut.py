from __future__ import annotations

from pathlib import Path

from leapgit.records import yamlio
from tests.slices.drafts import base_draft, draft_repo, write
from tests.support import commit_all, git, leap, leap_inproc, ref, write_files


def _ready(tmp_path: Path) -> Path:
    root = draft_repo(tmp_path / "repo")
    assert leap_inproc("init", cwd=root).code == 0
    return root


def test_cut_stamps_blob_ids_at_the_base_and_absent_files(tmp_path: Path) -> None:
    root = _ready(tmp_path)
    result = leap_inproc("slice", "cut", str(write(tmp_path / "d.yaml", base_draft())), cwd=root)
    assert result.code == 0, result
    ball = yamlio.loads(git("show", "leap/ledger:slices/s1/balls/b/ball.yaml", cwd=root).encode(),
                        "b")
    stamps = {s["path"]: s["blob"] for s in ball["scope"]}
    assert stamps["src/b.py"] == git("rev-parse", "HEAD:src/b.py", cwd=root)
    assert stamps["src/new.py"] == "absent"
    sl = yamlio.loads(git("show", "leap/ledger:slices/s1/slice.yaml", cwd=root).encode(), "s")
    assert sl["base"] == git("rev-parse", "HEAD", cwd=root)
    assert sl["waves"] == [["a"], ["b"]]


def test_cut_stamps_at_the_given_base_not_the_work_tree(tmp_path: Path) -> None:
    """The stamp is the base's blob, never the work tree's bytes. (A base whose scope files
    differ from the spine's tip is refused: tests/slices/test_cut_base.py.)"""
    root = _ready(tmp_path)
    old = git("rev-parse", "HEAD", cwd=root)
    old_blob = git("rev-parse", "HEAD:src/a.py", cwd=root)
    write_files(root, {"src/c.py": "C = 100\n"})
    commit_all(root, "change c, in no scope")
    write_files(root, {"src/a.py": "A = 100\n"})  # not committed
    result = leap_inproc("slice", "cut", str(write(tmp_path / "d.yaml", base_draft())),
                         "--base", old, cwd=root)
    assert result.code == 0, result
    ball = yamlio.loads(git("show", "leap/ledger:slices/s1/balls/a/ball.yaml", cwd=root).encode(),
                        "a")
    assert ball["scope"][0]["blob"] == old_blob
    sl = yamlio.loads(git("show", "leap/ledger:slices/s1/slice.yaml", cwd=root).encode(), "s")
    assert sl["base"] == old


def test_symlinked_scope_path_records_the_file_it_resolves_to(tmp_path: Path) -> None:
    root = _ready(tmp_path)
    d = base_draft()
    d["balls"][0]["scope"] = ["alias_a.py"]
    assert leap_inproc("slice", "cut", str(write(tmp_path / "d.yaml", d)), cwd=root).code == 0
    ball = yamlio.loads(git("show", "leap/ledger:slices/s1/balls/a/ball.yaml", cwd=root).encode(),
                        "a")
    assert ball["scope"][0] == {"path": "alias_a.py", "blob": git("rev-parse", "HEAD:src/a.py",
                                                                   cwd=root),
                                "resolved": "src/a.py"}


def test_check_writes_nothing_and_cut_twice_is_refused(tmp_path: Path) -> None:
    root = _ready(tmp_path)
    draft = write(tmp_path / "d.yaml", base_draft())
    before = ref(root, "leap/ledger")
    assert leap_inproc("slice", "check", str(draft), cwd=root).code == 0
    assert ref(root, "leap/ledger") == before
    assert leap_inproc("slice", "cut", str(draft), cwd=root).code == 0
    after = ref(root, "leap/ledger")
    assert after != before
    again = leap_inproc("slice", "cut", str(draft), cwd=root)
    assert again.code == 1 and "already cut" in again.err and "[L8]" in again.err
    assert ref(root, "leap/ledger") == after


def test_unknown_base_and_cut_before_init_are_bad_input(tmp_path: Path) -> None:
    root = draft_repo(tmp_path / "repo")
    draft = write(tmp_path / "d.yaml", base_draft())
    no_ledger = leap_inproc("slice", "cut", str(draft), cwd=root)
    assert no_ledger.code == 2 and "leap init" in no_ledger.err
    assert leap_inproc("init", cwd=root).code == 0
    bad_base = leap_inproc("slice", "cut", str(draft), "--base", "nope", cwd=root)
    assert bad_base.code == 2 and "not a commit" in bad_base.err


def test_cut_through_the_real_cli_process(tmp_path: Path) -> None:
    root = _ready(tmp_path)
    result = leap("slice", "cut", str(write(tmp_path / "d.yaml", base_draft())), cwd=root)
    assert result.code == 0, result
    assert "slice s1: ok (2 balls, 4 scope files, 1 to be created" in result.out
    assert "wave 0: a" in result.out and "wave 1: b" in result.out
