"""An SSH signature (``-----BEGIN SSH SIGNATURE-----``, PROTOCOL.sshsig): read which key
made it without any crypto, and check it over the signed bytes with ``ssh-keygen``.

Reading the public key out of the blob lets the policy be matched in Python (one
``ssh-keygen -Y check-novalidate`` per signature instead of git's ``find-principals`` plus
``verify``); the cryptographic check is always ssh-keygen's, never hand-written.
"""

from __future__ import annotations

import base64
import os
import struct
import subprocess
from dataclasses import dataclass

from leapgit.signing.policy import NAMESPACE, fingerprint

BEGIN = b"-----BEGIN SSH SIGNATURE-----"
END = b"-----END SSH SIGNATURE-----"


class Malformed(Exception):
    """Not a well-formed SSH signature; the message says what is wrong."""


class Mismatch(Exception):
    """A well-formed signature that does not verify over these bytes."""


@dataclass(frozen=True)
class SshSig:
    armored: bytes
    public_key: bytes
    namespace: str

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public_key)


def _string(data: bytes, at: int) -> tuple[bytes, int]:
    if at + 4 > len(data):
        raise Malformed("truncated")
    (size,) = struct.unpack(">I", data[at:at + 4])
    end = at + 4 + size
    if end > len(data):
        raise Malformed("truncated")
    return data[at + 4:end], end


def parse(armored: bytes) -> SshSig:
    text = armored.strip()
    if not (text.startswith(BEGIN) and text.endswith(END)):
        raise Malformed("not an SSH signature (no BEGIN/END SSH SIGNATURE armour)")
    body = b"".join(text[len(BEGIN):-len(END)].split())
    try:
        blob = base64.b64decode(body, validate=True)
    except ValueError:
        raise Malformed("the armour is not base64") from None
    if not blob.startswith(b"SSHSIG") or len(blob) < 10:
        raise Malformed("no SSHSIG magic")
    (version,) = struct.unpack(">I", blob[6:10])
    if version != 1:
        raise Malformed(f"SSHSIG version {version}, expected 1")
    public_key, at = _string(blob, 10)
    namespace, at = _string(blob, at)
    _reserved, at = _string(blob, at)
    _hash, at = _string(blob, at)
    _signature, at = _string(blob, at)
    if namespace.decode("utf-8", "replace") != NAMESPACE:
        raise Malformed(f"namespace {namespace.decode('utf-8', 'replace')!r}, expected "
                        f"{NAMESPACE!r}")
    return SshSig(armored, public_key, namespace.decode())


def check(sig: SshSig, payload: bytes, ssh_keygen: str = "ssh-keygen") -> None:
    """Raise ``Mismatch`` unless ``sig`` verifies over ``payload`` (the key is trusted or
    not by the caller's policy; here only the mathematics is checked)."""
    read, write = os.pipe()
    try:
        os.write(write, sig.armored)  # a signature is ~300 bytes: far below a pipe's buffer
        os.close(write)
        write = -1
        proc = subprocess.run(
            [ssh_keygen, "-Y", "check-novalidate", "-n", NAMESPACE, "-s", f"/dev/fd/{read}"],
            input=payload, capture_output=True, pass_fds=(read,), check=False,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"},
        )
    finally:
        os.close(read)
        if write != -1:
            os.close(write)
    if proc.returncode != 0:
        detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise Mismatch(detail[0] if detail else f"ssh-keygen exited {proc.returncode}")
