"""`leap log`: the ledger's history, read with plain `git log` (the same audit anyone can do)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leapgit import git
from leapgit.errors import UsageError
from leapgit.workspace import open_workspace

_SEP = "\x1f"


@dataclass(frozen=True)
class LogEntry:
    commit: str
    date: str
    subject: str
    trailers: tuple[tuple[str, str], ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "commit": self.commit, "date": self.date, "subject": self.subject,
            "trailers": [{"key": k, "value": v} for k, v in self.trailers],
        }


def log(limit: int | None = None, slice_id: str | None = None,
        start: Path | str = ".") -> list[LogEntry]:
    ws = open_workspace(start)
    ref = ws.config.ledger_ref
    args = ["log", f"--format=%H{_SEP}%cI{_SEP}%s{_SEP}%(trailers:unfold,only)%x1e", ref]
    if limit:
        args.insert(1, f"-n{limit}")
    if slice_id:
        args[1:1] = [f"--grep=^Leap-Slice: {slice_id}$"]
    proc = git.run(args, ws.paths.root, check=False)
    if proc.returncode != 0:
        raise UsageError(f"no ledger yet ({ref} does not exist)", hint="run `leap init` first")
    entries = []
    for chunk in proc.stdout.decode("utf-8", "replace").split("\x1e"):
        chunk = chunk.strip("\n")
        if not chunk:
            continue
        commit, date, subject, trailer_text = chunk.split(_SEP, 3)
        trailers = tuple(
            (k.strip(), v.strip())
            for k, _, v in (line.partition(":") for line in trailer_text.splitlines() if line)
        )
        entries.append(LogEntry(commit, date, subject, trailers))
    return entries
