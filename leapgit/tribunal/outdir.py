"""T6: the output folder is stamped as the tribunal's own before anything in it is swept.
An unstamped folder holding tribunal-shaped files is refused, files named, nothing deleted;
one holding only foreign files is used without touching them. Every file written is 0600."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from leapgit.tribunal.errors import OutDirRefused

STAMP = ".leap-tribunal"
STAMP_TEXT = b"leapgit tribunal output folder: files here are rewritten on every convening\n"
FILES = ("envelope.yaml", "envelope.txt", "routing.yaml", "summary.yaml", "mechanical.yaml")
VERDICTS = "verdicts"


def shaped(folder: Path) -> list[Path]:
    """The tribunal-shaped files in ``folder`` (what a sweep would remove)."""
    found = [folder / name for name in FILES if (folder / name).is_file()]
    verdicts = folder / VERDICTS
    if verdicts.is_dir():
        found += sorted(p for p in verdicts.glob("*.yaml") if p.is_file())
    return found


def write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)  # an existing file keeps its mode on open; the umask is not ours
        os.write(fd, data)
    finally:
        os.close(fd)


@dataclass(frozen=True)
class OutDir:
    path: Path

    def write(self, name: str, data: bytes) -> Path:
        target = self.path / name
        if target.parent != self.path:
            target.parent.mkdir(mode=0o700, exist_ok=True)
        write_private(target, data)
        return target


def claim(folder: Path) -> OutDir:
    folder = folder.resolve()
    if folder.exists() and not folder.is_dir():
        raise OutDirRefused("is not a folder", file=str(folder), field="--out", rule="T6")
    if not folder.exists():
        folder.mkdir(mode=0o700, parents=True)
    elif not (folder / STAMP).is_file():
        ours = shaped(folder)
        if ours:
            raise OutDirRefused(
                f"holds tribunal files but no {STAMP} stamp: "
                f"{', '.join(str(p.relative_to(folder)) for p in ours)}; nothing was deleted",
                file=str(folder), field="--out", rule="T6",
                hint="pick another --out, or move these files away yourself")
    write_private(folder / STAMP, STAMP_TEXT)  # stamped before anything is swept
    for path in shaped(folder):
        path.unlink()
    return OutDir(folder)
