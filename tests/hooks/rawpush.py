"""A raw receive-pack client: the push an attacker writes by hand. It speaks git's push
protocol (pkt-lines, then a pack from `git pack-objects --stdout`) to a real
`git receive-pack <bare>`, whose hooks run as on any server, and it chooses every
``<old>`` it sends: stock `git push` always sends the value the server advertised.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.support import IDENTITY

ZERO = "0" * 40


@dataclass(frozen=True)
class Command:
    ref: str
    old: str | None  # None: the client says the ref does not exist
    new: str | None  # None: delete


@dataclass(frozen=True)
class RawResult:
    code: int
    stderr: str
    status: dict[str, str]  # ref -> "ok" or the reason git gave ("ng <ref> <why>")
    advertised: dict[str, str]


def _pkt(data: bytes) -> bytes:
    return f"{len(data) + 4:04x}".encode() + data


def _read_pkts(stream: object) -> list[bytes]:
    """pkt-lines up to a flush."""
    read = stream.read  # type: ignore[attr-defined]
    out = []
    while True:
        size = read(4)
        if len(size) < 4 or size == b"0000":
            return out
        out.append(read(int(size, 16) - 4))


def _parse_pkts(data: bytes) -> list[bytes]:
    out, at = [], 0
    while at + 4 <= len(data):
        size = int(data[at:at + 4], 16)
        if size == 0:
            at += 4
            continue
        out.append(data[at + 4:at + size])
        at += size
    return out


def _pack(client: Path, commands: Sequence[Command], have: Sequence[str]) -> bytes:
    """Every object the new tips need that the server's advertised tips do not hold."""
    known = subprocess.run(["git", "cat-file", "--batch-check=%(objectname)"], cwd=client,
                           input="".join(f"{h}\n" for h in have).encode(),
                           capture_output=True, check=True).stdout.decode().split("\n")
    present = [h for h, line in zip(have, known, strict=False) if "missing" not in line]
    revs = "".join(f"{c.new}\n" for c in commands if c.new) + \
        "".join(f"^{h}\n" for h in present)
    return subprocess.run(["git", "pack-objects", "--stdout", "--revs", "-q"],
                          cwd=client, input=revs.encode(), capture_output=True,
                          check=True).stdout


def raw_push(client: Path, bare: Path, commands: Sequence[Command], *, atomic: bool = False,
             env: dict[str, str] | None = None, timeout: float = 120) -> RawResult:
    """Send ``commands`` to ``git receive-pack bare``, objects taken from ``client``."""
    full_env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
                **IDENTITY, **(env or {})}
    proc = subprocess.Popen(["git", "receive-pack", str(bare)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full_env)
    assert proc.stdout is not None
    advertised: dict[str, str] = {}
    for line in _read_pkts(proc.stdout):
        sha, _, rest = line.partition(b" ")
        name = rest.split(b"\0")[0].strip().decode()
        if name != "capabilities^{}":
            advertised[name] = sha.decode()
    caps = "report-status" + (" atomic" if atomic else "")
    payload = b""
    for i, cmd in enumerate(commands):
        line = f"{cmd.old or ZERO} {cmd.new or ZERO} {cmd.ref}"
        payload += _pkt((line + (f"\0{caps}" if i == 0 else "") + "\n").encode())
    payload += b"0000"
    if any(c.new for c in commands):
        payload += _pack(client, commands, sorted(set(advertised.values())))
    out, err = proc.communicate(payload, timeout=timeout)
    status = {}
    for line in _parse_pkts(out):
        text = line.decode(errors="replace").rstrip("\n")
        if text.startswith(("ok ", "ng ")):
            word, _, rest = text.partition(" ")
            ref, _, why = rest.partition(" ")
            status[ref] = "ok" if word == "ok" else why
    return RawResult(proc.returncode, err.decode(errors="replace"), status, advertised)
