"""Sign a dulwich ``Commit`` with the acting key, the way ``git commit -S`` does with
``gpg.format=ssh`` (dulwich's ssh-keygen vendor, namespace ``git``), so ``git verify-commit``
and ``git log --show-signature`` read leapgit's signatures like any other.

The acting key, first found wins:

1. ``LEAP_SIGNING_KEY`` in the environment (a path; empty means: do not sign);
2. git config ``leap.signingKey``;
3. git config ``user.signingKey`` when ``gpg.format`` is ``ssh``.

A key is a path to a private key, or to a public key whose private half an ssh-agent
holds; git's ``key::ssh-ed25519 AAAA...`` literal form works with an agent.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from leapgit.errors import LeapError

if TYPE_CHECKING:
    from dulwich.config import Config as GitConfig
    from dulwich.objects import Commit

ENV_KEY = "LEAP_SIGNING_KEY"


class SigningFailed(LeapError):
    """ssh-keygen could not sign (missing key, locked key, no agent)."""


class Signer(NamedTuple):
    key: str  # a path, or git's ``key::`` literal

    def fingerprint(self) -> str:
        """OpenSSH's SHA256 fingerprint of the key that signs (what a claim names, L9):
        from git's ``key::`` literal, else the public half ``ssh-keygen -y`` derives."""
        import base64
        import subprocess

        from leapgit.signing.policy import fingerprint

        line = self.key[len("key::"):] if self.key.startswith("key::") else None
        if line is None:
            pub = Path(os.path.expanduser(self.key) + ".pub")
            try:
                line = pub.read_text() if pub.is_file() else subprocess.run(
                    ["ssh-keygen", "-y", "-f", os.path.expanduser(self.key)],
                    capture_output=True, text=True, check=True).stdout
            except (OSError, subprocess.CalledProcessError) as exc:
                raise SigningFailed(f"cannot read the public half of {self.key}: {exc}",
                                    hint="check the key path") from None
        parts = line.split()
        if len(parts) < 2:
            raise SigningFailed(f"{self.key} holds no public key", hint="check the key")
        return fingerprint(base64.b64decode(parts[1]))

    def sign(self, commit: Commit) -> Commit:
        """Set ``commit.gpgsig`` to an SSH signature over its bytes; return the commit."""
        import subprocess  # here: every ledger write asks for a signer, few have a key
        import tempfile

        from dulwich.signature import SSHCliSignatureVendor

        commit.gpgsig = None
        payload = commit.raw_without_sig()
        vendor = SSHCliSignatureVendor()
        try:
            if self.key.startswith("key::"):
                with tempfile.TemporaryDirectory() as tmp:
                    pub = Path(tmp) / "key.pub"
                    pub.write_text(self.key[len("key::"):] + "\n")
                    commit.gpgsig = vendor.sign(payload, keyid=str(pub))
            else:
                commit.gpgsig = vendor.sign(payload, keyid=os.path.expanduser(self.key))
        except subprocess.CalledProcessError as exc:
            detail = (exc.stderr or b"").decode("utf-8", "replace").strip()
            raise SigningFailed(f"ssh-keygen could not sign with {self.key}: "
                                f"{detail or exc}", hint="check the key path, its "
                                "passphrase, or that ssh-agent holds it") from None
        return commit


def sign_commit(commit: Commit, signer: Signer | None) -> Commit:
    """Sign ``commit`` when a signer is given (the call for integration merges and any other
    commit leapgit writes); unchanged otherwise. Set ``commit.gpgsig`` before the commit is
    added to an object store: the signature is part of the id."""
    return signer.sign(commit) if signer is not None else commit


def _get(config: GitConfig, section: tuple[bytes, ...], name: bytes) -> str | None:
    try:
        return config.get(section, name).decode("utf-8", "replace").strip() or None
    except KeyError:
        return None


def configured_signer(config: GitConfig | None,
                      env: Mapping[str, str] = os.environ) -> Signer | None:
    if ENV_KEY in env:
        return Signer(env[ENV_KEY]) if env[ENV_KEY].strip() else None
    if config is None:
        return None
    own = _get(config, (b"leap",), b"signingKey")
    if own:
        return Signer(own)
    if (_get(config, (b"gpg",), b"format") or "").lower() == "ssh":
        key = _get(config, (b"user",), b"signingKey")
        if key:
            return Signer(key)
    return None
