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


def test_bad_server_config_refuses_with_the_file_named(tmp_path: Path) -> None:
    from tests.support import make_repo

    work = make_repo(tmp_path / "w", {".leap/config.yaml": "version: 1\nspine: [1]\n"})
    bare = tmp_path / "srv.git"
    git("clone", "-q", "--bare", str(work), str(bare), cwd=tmp_path)
    zero = "0" * 40
    line = f"{zero} {git('rev-parse', 'HEAD', cwd=work)} refs/heads/other\n".encode()
    proc = subprocess.run([sys.executable, "-m", "leapgit.hookimpl.pre_receive"], cwd=bare,
                          input=line, capture_output=True, check=False,
                          env={**os.environ, "GIT_DIR": str(bare)})
    assert proc.returncode == 1
    assert "refs/heads/main:.leap/config.yaml" in proc.stderr.decode()
