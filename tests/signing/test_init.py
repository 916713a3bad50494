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


def _untouched(repo: Path) -> None:
    """Nothing of `leap init` was written: no config, no ledger, no acting key."""
    assert not (repo / ".leap").exists()
    assert git("for-each-ref", "--format=%(refname)", cwd=repo) == "refs/heads/main"
    assert git("config", "--local", "--get-all", "leap.signingKey", cwd=repo,
               check=False) == ""


@pytest.mark.parametrize(("pub", "said"), [
    (None, "cannot read the public key"),
    (b"", "holds no SSH public key"),
    (b"ssh-ed25519\n", "holds no SSH public key"),
    (b"ssh-ed25519 !!!notbase64 me\n", "holds no SSH public key"),
    (b"ssh-ed25519 \xff\xfe me\n", "holds no SSH public key"),
    (b"ssh-ed25519 aGVsbG8gd29ybGQ= me\n", "holds no SSH public key"),  # base64, no key
])
def test_init_signing_refuses_a_bad_public_key_and_writes_nothing(
        repo: Path, tmp_path: Path, pub: bytes | None, said: str) -> None:
    # a bad-input hunt: each was an internal error (IsADirectoryError, IndexError,
    # binascii.Error, UnicodeDecodeError), exit 70, after .leap/config.yaml was written; the
    # last wrote a policy line for no key and set leap.signingKey
    key = tmp_path / "keys" / "lead"
    key.parent.mkdir()
    key.write_text("private\n")
    if pub is None:
        (tmp_path / "keys" / "lead.pub").mkdir()
    else:
        (tmp_path / "keys" / "lead.pub").write_bytes(pub)
    result = leap("init", "--signing", "--key", str(key), "--name", "lead", "--role", "admin",
                  cwd=repo)
    assert (result.code, result.out) == (2, ""), result
    lines = result.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("leap: --key: "), lines
    assert f"{key}.pub" in lines[0] and said in lines[0], lines
    _untouched(repo)


@pytest.mark.parametrize("option", ["--key", "--new-key"])
def test_init_signing_refuses_a_key_path_too_long_and_writes_nothing(
        repo: Path, tmp_path: Path, option: str) -> None:
    result = leap("init", "--signing", option, str(tmp_path / ("k" * 300)), "--name", "x",
                  "--role", "admin", cwd=repo)
    assert (result.code, result.out) == (2, ""), result
    assert result.err.startswith(f"leap: {option}: cannot use ") and \
        "File name too long" in result.err, result
    _untouched(repo)


def test_init_signing_refuses_a_new_key_where_no_folder_can_be_made(
        repo: Path, tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("mine\n")
    result = leap("init", "--signing", "--new-key", str(tmp_path / "afile" / "k"), "--name",
                  "x", "--role", "admin", cwd=repo)
    assert (result.code, result.out) == (2, ""), result
    assert result.err.startswith(f"leap: --new-key: cannot make the folder {tmp_path / 'afile'}"
                                 ": "), result
    _untouched(repo)


def test_init_signing_with_a_missing_key_writes_no_config(repo: Path, tmp_path: Path) -> None:
    result = leap("init", "--signing", "--key", str(tmp_path / "nope"), "--name", "x",
                  "--role", "builder", cwd=repo)
    assert result.code == 2, result
    _untouched(repo)
