"""T6: the output folder is stamped as the tribunal's own before anything in it is swept.
An unstamped folder holding tribunal-shaped files is refused, files named, nothing deleted;
one holding only foreign files is used without touching them. Every file written is 0600.
Symbolic links are never followed: a link named like a tribunal file is tribunal-shaped."""

from __future__ import annotations

import contextlib
import errno
import os
from dataclasses import dataclass
from pathlib import Path

from leapgit.tribunal.errors import OutDirRefused

STAMP = ".leap-tribunal"
STAMP_TEXT = b"leapgit tribunal output folder: files here are rewritten on every convening\n"
FILES = ("envelope.yaml", "envelope.txt", "routing.yaml", "summary.yaml", "mechanical.yaml")
VERDICTS = "verdicts"


def _present(path: Path) -> bool:
    return path.is_symlink() or path.is_file()  # a dangling link too: a write would follow it


def shaped(folder: Path) -> list[Path]:
    """The tribunal-shaped files in ``folder`` (what a sweep would remove): our names, as
    files or as symbolic links; a linked ``verdicts`` folder is the link, never its files."""
    found = [folder / name for name in FILES if _present(folder / name)]
    verdicts = folder / VERDICTS
    if verdicts.is_symlink():
        found.append(verdicts)
    elif verdicts.is_dir():
        found += sorted(p for p in verdicts.glob("*.yaml") if _present(p))
    return found


def _link_refused(path: Path, what: str) -> OutDirRefused:
    return OutDirRefused(f"{what} is a symbolic link: not followed", file=str(path),
                         field="--out", rule="T6", hint="pick another --out")


def write_private(path: Path, data: bytes) -> None:
    """``data`` at ``path``, readable by its owner only, whole or not at all: written aside
    and renamed, so a kill mid-write leaves the old file or none, never one cut short (what
    a killed run left is recorded by the next: ``tribunal.left``). A link at ``path`` is
    refused, never followed nor replaced."""
    if path.is_symlink():
        raise _link_refused(path, path.name)
    aside = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _link_refused(aside, aside.name) from None
        raise
    try:
        try:
            os.fchmod(fd, 0o600)  # a file left aside keeps its mode on open; not our umask
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(aside, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(aside)
        raise


@dataclass(frozen=True)
class OutDir:
    path: Path

    def write(self, name: str, data: bytes) -> Path:
        target = self.path / name
        if target.parent != self.path:
            if target.parent.is_symlink():
                raise _link_refused(target.parent, target.parent.name)
            target.parent.mkdir(mode=0o700, exist_ok=True)
        write_private(target, data)
        return target


def claim(folder: Path) -> OutDir:
    folder = folder.resolve()
    if folder.exists() and not folder.is_dir():
        raise OutDirRefused("is not a folder", file=str(folder), field="--out", rule="T6")
    stamp = folder / STAMP
    if stamp.is_symlink():
        raise _link_refused(stamp, STAMP)
    if not folder.exists():
        folder.mkdir(mode=0o700, parents=True)
    elif not stamp.is_file():
        ours = shaped(folder)
        if ours:
            raise OutDirRefused(
                f"holds tribunal files but no {STAMP} stamp: "
                f"{', '.join(str(p.relative_to(folder)) for p in ours)}; nothing was deleted",
                file=str(folder), field="--out", rule="T6",
                hint="pick another --out, or move these files away yourself")
    write_private(stamp, STAMP_TEXT)  # stamped before anything is swept
    for path in shaped(folder):
        path.unlink()
    return OutDir(folder)
