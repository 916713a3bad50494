"""`leap log`: the ledger's history, read with plain `git log` (the same audit anyone can do)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leapgit import git
from leapgit.errors import UsageError
from leapgit.ledger.query import load_slice
from leapgit.ledger.workspace import open_workspace
from leapgit.records import trailers as tr
from leapgit.rules.balls import ID


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
    if slice_id is not None and not ID.fullmatch(slice_id):
        raise UsageError(f"{slice_id!r} is not a slice id", field="--slice",
                         hint="ids are letters, digits, '-' and '_'")
    with ws.ledger() as ledger:
        view = ledger.require()
        if slice_id is not None:  # an unknown one is named, as status and throw name it

            load_slice(view, slice_id)
    # fields end in NUL; a commit message holds no NUL, so "\0\n" ends exactly one entry
    args = ["log", "--format=%H%x00%cI%x00%s%x00%(trailers:unfold,only)%x00", ref]
    if limit:
        args.insert(1, f"-n{limit}")
    if slice_id:
        args[1:1] = ["--fixed-strings", f"--grep={tr.SLICE}: {slice_id}"]
    proc = git.run(args, ws.paths.root, check=False)
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip().splitlines()
        raise UsageError(f"git log failed: {err[-1] if err else proc.returncode}")
    entries = []
    for chunk in proc.stdout.decode("utf-8", "replace").split("\0\n"):
        fields = chunk.lstrip("\n").split("\0")
        if len(fields) < 4:
            continue
        commit, date, subject, trailer_text = fields[:4]
        trailers = tuple(
            (k.strip(), v.strip())
            for k, _, v in (line.partition(":") for line in trailer_text.splitlines() if line)
        )
        if slice_id and (tr.SLICE, slice_id) not in trailers:
            continue  # the grep matched a longer id with the same start
        entries.append(LogEntry(commit, date, subject, trailers))
    return entries
