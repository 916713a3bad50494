"""Issue 16 item 4: with signing on, `leap worker` names in each claim the key that signs
it (S3, L9), so the fingerprint it computes must be the one OpenSSH (and the server's
``signer_fingerprint``) gives that key: from a key file, its ``.pub`` beside it or not, and
from git's ``key::`` literal."""

from __future__ import annotations

import subprocess
from pathlib import Path

from leapgit.signing.sign import Signer


def keygen(path: Path) -> str:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "w", "-f", str(path)],
                   check=True, capture_output=True)
    out = subprocess.run(["ssh-keygen", "-lf", f"{path}.pub"], capture_output=True,
                         text=True, check=True).stdout
    return out.split()[1]


def test_the_fingerprint_is_openssh_s(tmp_path: Path) -> None:
    key = tmp_path / "id_worker"
    expected = keygen(key)
    assert Signer(str(key)).fingerprint() == expected
    pub = Path(f"{key}.pub").read_text().strip()
    assert Signer(f"key::{pub}").fingerprint() == expected
    Path(f"{key}.pub").unlink()  # derived from the private key, then
    assert Signer(str(key)).fingerprint() == expected
    other = tmp_path / "id_other"
    theirs = keygen(other)
    assert Signer(str(other)).fingerprint() == theirs != expected
