"""A guard hook that cannot judge a push refuses it, with a short message, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support import git


def run_hook(bare: Path, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "leapgit.hookimpl.pre_receive"], cwd=bare,
                          input=stdin, capture_output=True, check=False,
                          env={**os.environ, "GIT_DIR": str(bare)})


def test_unexpected_error_refuses(tmp_path: Path) -> None:
    bare = tmp_path / "srv.git"
    git("init", "-q", "--bare", str(bare), cwd=tmp_path)
    missing = "1" * 40  # an object the repository does not hold: the walk fails
    proc = run_hook(bare, f"{'0' * 40} {missing} refs/heads/leap/ledger\n".encode())
    assert proc.returncode == 1
    err = proc.stderr.decode()
    assert err.startswith("leap pre-receive: internal error, refusing (fail closed): ")
    assert "Traceback" not in err


def test_malformed_input_refuses(tmp_path: Path) -> None:
    bare = tmp_path / "srv.git"
    git("init", "-q", "--bare", str(bare), cwd=tmp_path)
    proc = run_hook(bare, b"not a ref update line\n")
    assert proc.returncode == 1
    assert "refused: malformed ref update line from git" in proc.stderr.decode()


def test_bad_server_config_is_named_and_never_bricks_the_server(tmp_path: Path) -> None:
    # a config on the spine that does not parse used to refuse every push, the fix too;
    # now the server names it and judges with the defaults (no config before it parsed)
    from tests.support import make_repo

    work = make_repo(tmp_path / "w", {".leap/config.yaml": "version: 1\nspine: [1]\n"})
    bare = tmp_path / "srv.git"
    git("clone", "-q", "--bare", str(work), str(bare), cwd=tmp_path)
    zero = "0" * 40
    line = f"{zero} {git('rev-parse', 'HEAD', cwd=work)} refs/heads/other\n".encode()
    proc = subprocess.run([sys.executable, "-m", "leapgit.hookimpl.pre_receive"], cwd=bare,
                          input=line, capture_output=True, check=False,
                          env={**os.environ, "GIT_DIR": str(bare)})
    err = proc.stderr.decode()
    assert proc.returncode == 0, err
    assert "note: refs/heads/main:.leap/config.yaml does not parse (" in err
    assert "judging with the defaults" in err and "Traceback" not in err


def test_missing_old_tip_refuses_in_pre_receive(tmp_path: Path) -> None:
    from tests.support import leap, make_repo

    work = make_repo(tmp_path / "w", {"a.txt": "a\n"})
    bare = tmp_path / "srv.git"
    git("clone", "-q", "--bare", str(work), str(bare), cwd=tmp_path)
    assert leap("hooks", "install", "--server", cwd=bare).code == 0
    empty = git("mktree", cwd=bare, input=b"")
    orphan = git("commit-tree", "-m", "an empty ledger", empty, cwd=bare)
    head = git("rev-parse", "HEAD", cwd=bare)
    missing = "1" * 40  # the server's own tip, gone from its object store
    for new, ref in ((head, "refs/heads/main"), (orphan, "refs/heads/leap/ledger")):
        proc = run_hook(bare, f"{missing} {new} {ref}\n".encode())
        err = proc.stderr.decode()
        assert proc.returncode == 1, err
        assert f"[L8] {ref} {new[:12]}: the push names its old tip {missing[:12]}, but this " \
            "repository holds it at" in err, err


def test_spine_tip_lost_from_the_server_refuses_a_real_push(tmp_path: Path) -> None:
    from tests.hooks.world import run_git
    from tests.support import leap, make_repo

    work = make_repo(tmp_path / "w", {"a.txt": "a\n"})
    bare = tmp_path / "srv.git"
    git("init", "-q", "--bare", "-b", "main", str(bare), cwd=tmp_path)
    assert leap("hooks", "install", "--server", cwd=bare).code == 0
    # with receive.fsckObjects (the install sets it) git refuses first, an "unpacker
    # error": off here, so that leapgit's own guard is what answers
    git("config", "receive.fsckObjects", "false", cwd=bare)
    git("push", "-q", str(bare), "main", cwd=work)
    tip = git("rev-parse", "main", cwd=bare)
    (bare / "objects" / tip[:2] / tip[2:]).unlink()  # the server's own spine tip is gone
    (work / "a.txt").write_text("b\n")
    git("commit", "-q", "-am", "straight onto the spine", cwd=work)
    result = run_git("push", str(bare), "main", cwd=work)
    assert result.returncode != 0
    assert "leap pre-receive: refused: the spine refs/heads/main names" in result.stderr, \
        result.stderr
    assert "internal error" not in result.stderr
    assert (bare / "refs" / "heads" / "main").read_text().strip() == tip


def test_a_malformed_line_is_shown_escaped_and_the_hint_fits_it(tmp_path: Path) -> None:
    """Before: '\\udcff\\udcfe' (Python's repr of bytes that are not UTF-8) and "sha256
    repositories are not supported yet" under every malformed line."""
    bare = tmp_path / "srv.git"
    git("init", "-q", "--bare", str(bare), cwd=tmp_path)
    proc = run_hook(bare, b"\xff\xfe \x1b[2J refs/heads/x\n")
    assert proc.returncode == 1
    err = proc.stderr.decode()
    assert "malformed ref update line from git: '\\xff\\xfe \\x1b[2J refs/heads/x'" in err, err
    assert "sha256" not in err and "by 40 hex digits" in err, err
    proc = run_hook(bare, f"{'0' * 64} {'a' * 64} refs/heads/x\n".encode())
    assert proc.returncode == 1 and "sha256 repositories are not supported" in \
        proc.stderr.decode()


def test_pre_push_given_a_malformed_line_refuses_as_pre_receive_does(tmp_path: Path) -> None:
    """Before: "internal error, refusing (fail closed): ValueError: not enough values to
    unpack (expected 4, got 1)", and a line naming `zz` as an object id the same."""
    from tests.support import leap, make_repo

    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    assert leap("init", cwd=repo).code == 0
    head = git("rev-parse", "HEAD", cwd=repo)
    for line in (b"garbage", f"refs/heads/main {head} refs/heads/main zz".encode()):
        proc = subprocess.run([sys.executable, "-m", "leapgit.hookimpl.pre_push", "pre-push",
                               "origin", "/nowhere"], cwd=repo, input=line + b"\n",
                              capture_output=True, check=False)
        err = proc.stderr.decode()
        assert proc.returncode == 1, err
        assert err.startswith("leap pre-push: refused: malformed ref update line from git: "), \
            err
        assert "internal error" not in err and "Traceback" not in err, err
