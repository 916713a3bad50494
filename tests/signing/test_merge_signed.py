"""The integration merge commit is signed with the acting key, and git itself verifies it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from leapgit.scoring.spine import merge_commit
from tests.signing.world import make_key
from tests.support import commit_all, git, make_repo, write_files


def test_an_integration_merge_is_signed_with_the_configured_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(tmp_path / "r", {"a.txt": "a\n"})
    base = git("rev-parse", "HEAD", cwd=root)
    git("checkout", "-q", "-b", "ball", cwd=root)
    write_files(root, {"b.txt": "b\n"})
    candidate = commit_all(root, "round 1")
    tree = git("rev-parse", f"{candidate}^{{tree}}", cwd=root)
    key = make_key(tmp_path, "ivan")
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f"integrator:ivan {key.with_suffix('.pub').read_text()}")
    unsigned = merge_commit(root, base, candidate, tree, "integrate\n\nLeap-Ball: b\n")
    assert "gpgsig" not in git("cat-file", "-p", unsigned, cwd=root)
    monkeypatch.setenv("LEAP_SIGNING_KEY", str(key))
    signed = merge_commit(root, base, candidate, tree, "integrate\n\nLeap-Ball: b\n")
    assert git("rev-parse", f"{signed}^1", cwd=root) == base
    assert git("rev-parse", f"{signed}^2", cwd=root) == candidate
    assert "gpgsig" in git("cat-file", "-p", signed, cwd=root)
    proc = subprocess.run(["git", "-c", f"gpg.ssh.allowedSignersFile={allowed}",
                           "verify-commit", signed], cwd=root, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert 'Good "git" signature for integrator:ivan' in proc.stderr
