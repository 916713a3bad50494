"""The audit's tree diffs read in one `git diff-tree --stdin` stream (``ReadStore.prefetch_diffs``)
are the paths ``slices.diff.touched_paths`` reads with dulwich, pair by pair: one reading of
"what a commit touched", however it is read (issue 13 item 7)."""

from __future__ import annotations

import os
from pathlib import Path

from dulwich.repo import Repo

from leapgit.audit.objects import ReadStore
from leapgit.slices.diff import touched_paths
from tests.support import git


def _commit(root: Path, message: str) -> str:
    git("add", "-A", cwd=root)
    git("commit", "-q", "--allow-empty", "-m", message, cwd=root)
    return git("rev-parse", "HEAD^{tree}", cwd=root)


def test_the_stream_reads_every_kind_of_change_as_dulwich_does(tmp_path: Path) -> None:
    root = tmp_path / "r"
    git("init", "-q", str(root), cwd=tmp_path)
    (root / "src").mkdir()
    (root / "src" / "a.py").write_text("a\n")
    (root / "keep.txt").write_text("k\n")
    (root / "flip.sh").write_text("echo\n")
    trees = [_commit(root, "start")]
    (root / "src" / "a.py").write_text("a2\n")  # modified
    (root / "new dir").mkdir()
    (root / "new dir" / "b c.txt").write_text("b\n")  # added, spaces in the path
    os.chmod(root / "flip.sh", 0o755)  # a mode flip
    trees.append(_commit(root, "change"))
    (root / "keep.txt").unlink()
    (root / "keep.txt").mkdir()  # a file becomes a folder
    (root / "keep.txt" / "inner").write_text("i\n")
    os.symlink("src/a.py", root / "link")  # a symlink
    weird = os.fsencode("line\nbreak\u00e9") + b"\xff"  # a newline and bytes not UTF-8
    (root.joinpath(os.fsdecode(weird))).write_bytes(b"w\n")
    trees.append(_commit(root, "types"))
    (root / "src" / "a.py").unlink()  # deleted
    trees.append(_commit(root, "delete"))
    trees.append(_commit(root, "nothing"))  # an empty diff
    pairs = [(a, b) for a in trees for b in trees]
    with Repo(str(root)) as repo:
        store = ReadStore(root, repo)  # type: ignore[arg-type]
        store.prefetch_diffs(pairs)
        assert len(store.diffs) == len(set(pairs))
        for a, b in pairs:
            want = touched_paths(repo.object_store, a.encode(), b.encode())
            assert store.diffs[(a.encode(), b.encode())] == want, (a, b)
        assert any(os.fsdecode(weird) in paths for paths in store.diffs.values())
        store.close()


def test_output_that_does_not_read_as_the_stream_is_left_to_dulwich() -> None:
    from leapgit.audit.objects import _diffs

    a, b = "1" * 40, "2" * 40
    asked = {f"{a} {b}".encode(): (a.encode(), b.encode())}
    whole = f"{a} {b}\n".encode() + b":100644 100644 x y M\0p\0"
    assert _diffs(whole, asked) == {(a.encode(), b.encode()): frozenset({"p"})}
    assert _diffs(whole[:-3], asked) == {}  # cut short inside an entry
    assert _diffs(b"garbage\n" + whole, asked) == {}  # an echo of nothing asked


def test_a_gitlink_is_touched_even_where_gitmodules_says_ignore_all(tmp_path: Path) -> None:
    """Blind review (e9e8781): `git diff-tree` heeds ``submodule.<name>.ignore`` from the
    checkout's .gitmodules and printed nothing for a gitlink a ball brought in, so the
    audit's scope rules (L4, L9, L2) never saw it, while dulwich (the server's reading)
    does."""
    root = tmp_path / "r"
    git("init", "-q", str(root), cwd=tmp_path)
    (root / "b").write_text("b\n")
    (root / ".gitmodules").write_text('[submodule "sub"]\n\tpath = sub\n\turl = ./sub\n'
                                      "\tignore = all\n")
    before = _commit(root, "start")
    head = git("rev-parse", "HEAD", cwd=root)
    git("update-index", "--add", "--cacheinfo", f"160000,{head},sub", cwd=root)
    (root / "b").write_text("b2\n")
    git("add", "b", cwd=root)
    git("commit", "-q", "-m", "a gitlink", cwd=root)
    after = git("rev-parse", "HEAD^{tree}", cwd=root)
    with Repo(str(root)) as repo:
        store = ReadStore(root, repo)  # type: ignore[arg-type]
        store.prefetch_diffs([(before, after), (after, before)])
        for a, b in ((before, after), (after, before)):
            want = touched_paths(repo.object_store, a.encode(), b.encode())
            assert want == {"b", "sub"}
            assert store.diffs[(a.encode(), b.encode())] == want
        store.close()
