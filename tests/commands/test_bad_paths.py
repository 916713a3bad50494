"""A file where a folder is expected (`.leap`, `--dir`, `--out`, git's hooks folder): one
line naming the path and the option or field, exit 2, nothing half-written. Before, each
was a raw ``FileExistsError`` or ``NotADirectoryError``, exit 70."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from leapgit.records import yamlio
from tests.support import git, leap, make_repo, ref


def _repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "r", {"a.py": "a\n", "b.py": "b\n"})


def test_init_with_a_file_named_leap_says_so_and_writes_nothing(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / ".leap").write_text("mine\n")
    r = leap("init", cwd=root)
    assert (r.code, r.out) == (2, ""), r
    # said where every command reads the config (``load_config``), with its rule
    assert r.err == ("leap: .leap: (file): is not a folder: the config goes in "
                     ".leap/config.yaml [config]; move it aside and run `leap init`\n"), r
    assert (root / ".leap").read_text() == "mine\n"
    assert ref(root, "leap/ledger") is None
    assert not (root / ".git" / "hooks" / "post-commit").exists()


def test_quickstart_dir_naming_a_file_is_refused(tmp_path: Path) -> None:
    somefile = tmp_path / "somefile"
    somefile.write_text("mine\n")
    r = leap("quickstart", "--dir", str(somefile), cwd=tmp_path)
    assert (r.code, r.out) == (2, ""), r
    assert r.err == (f"leap: --dir: {somefile} is not a folder, so {somefile / 'calc'} cannot "
                     "be one; pick another --dir, or leave it out for a temporary folder\n"), r
    assert somefile.read_text() == "mine\n"


def test_quickstart_dir_whose_calc_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "calc").write_text("mine\n")
    r = leap("quickstart", "--dir", str(tmp_path), cwd=tmp_path)
    assert (r.code, r.out) == (2, ""), r
    assert r.err == (f"leap: --dir: {tmp_path / 'calc'} is not a folder; pick another --dir, "
                     "or leave it out for a temporary folder\n"), r


def test_tribunal_out_inside_a_file_is_refused_before_anything_is_written(
        tmp_path: Path) -> None:
    root = _repo(tmp_path)
    base = git("rev-parse", "HEAD", cwd=root)
    (root / "a.py").write_text("a = 2\n")
    git("commit", "-qam", "change", cwd=root)
    assert leap("init", cwd=root).code == 0
    rung = {"id": "cli", "provider": "command", "family": "jurorfam",
            "tiers": ["generalist", "operator_safety", "deep_state", "fast_structural"],
            "context_tokens": 100000, "cost": 1,
            "command": [sys.executable, "-c", "pass"]}
    config = {"version": 1, "spine": "main", "ledger_ref": "refs/heads/leap/ledger",
              "tribunal": {"rungs": [rung], "timeout": 5}}
    (root / ".leap" / "config.yaml").write_bytes(yamlio.dumps(config))
    blocker = tmp_path / "file"
    blocker.write_text("mine\n")
    ledger = ref(root, "leap/ledger")
    r = leap("tribunal", "convene", "--base", base, "--head", "HEAD", "--intent", "x",
             "--criteria", "y", "--builder", "model=m,family=buildfam,session=s",
             "--out", str(blocker / "x"), cwd=root)
    assert (r.code, r.out) == (2, ""), r
    assert r.err == (f"leap: --out: {blocker} is not a folder, so {blocker / 'x'} cannot be "
                     "one; pick another --out\n"), r
    assert blocker.read_text() == "mine\n" and ref(root, "leap/ledger") == ledger
    assert not (root / ".git" / "leap-tribunal").exists()


def _hooks_a_file(git_dir: Path) -> Path:
    hooks = git_dir / "hooks"
    shutil.rmtree(hooks, ignore_errors=True)
    hooks.write_text("mine\n")
    return hooks


def test_hooks_install_with_git_hooks_a_file_is_refused(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    hooks = _hooks_a_file(root / ".git")
    r = leap("hooks", "install", cwd=root)
    assert (r.code, r.out) == (2, ""), r
    assert r.err == (f"leap: hooks: {hooks} is not a folder; move it away, or point "
                     "core.hooksPath at a folder\n"), r
    assert hooks.read_text() == "mine\n"


def test_server_hooks_install_with_hooks_a_file_pins_nothing(tmp_path: Path) -> None:
    bare = tmp_path / "server.git"
    git("init", "-q", "--bare", str(bare), cwd=tmp_path)
    hooks = _hooks_a_file(bare)
    config = (bare / "config").read_text()
    r = leap("hooks", "install", "--server", "--spine", "main", cwd=bare)
    assert (r.code, r.out) == (2, ""), r
    assert r.err == (f"leap: hooks: {hooks} is not a folder; move it away, or point "
                     "core.hooksPath at a folder\n"), r
    assert (bare / "config").read_text() == config  # no pin, no server setting
