"""`leap init --signing` (non-interactive flags): creates or chooses a key, writes the
policy line and signing.require, signs the ledger's first commit; idempotent."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hooks.conftest import _isolate
from tests.support import commit_all, git, leap, make_repo


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    _isolate(monkeypatch, tmp_path / "home")
    monkeypatch.delenv("LEAP_SIGNING_KEY", raising=False)
    return make_repo(tmp_path / "work", {"README.md": "# r\n"})


def test_init_signing_creates_a_key_and_the_policy(repo: Path, tmp_path: Path) -> None:
    key = tmp_path / "keys" / "lead"
    result = leap("init", "--signing", "--new-key", str(key), "--name", "lead", "--role",
                  "admin", "--role", "integrator", "--require", cwd=repo)
    assert result.code == 0, result
    assert f"key     {key} (created), SHA256:" in result.out
    assert "(added admin:lead,integrator:lead)" in result.out
    policy = (repo / ".leap/allowed_signers").read_text()
    assert "admin:lead,integrator:lead ssh-ed25519 " in policy
    assert "signing:\n  require: true\n" in (repo / ".leap/config.yaml").read_text()
    assert git("config", "leap.signingKey", cwd=repo) == str(key)
    commit_all(repo, "leap: config and signer policy")
    audit = leap("audit-signatures", "--require-signatures", cwd=repo)
    assert audit.code == 0, audit
    assert "signatures: 1 of 1 good" in audit.out
    again = leap("init", "--signing", "--key", str(key), "--name", "lead", "--role", "admin",
                 cwd=repo)
    assert again.code == 0, again
    assert "(already names this key)" in again.out
    assert (repo / ".leap/allowed_signers").read_text() == policy


def test_init_signing_refuses_a_missing_key(repo: Path, tmp_path: Path) -> None:
    result = leap("init", "--signing", "--key", str(tmp_path / "nope"), "--name", "x",
                  "--role", "builder", cwd=repo)
    assert result.code == 2
    assert "no key at" in result.err and "--new-key" in result.err
