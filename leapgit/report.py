"""Plain-text renderings of command results, shared by the CLI and the quickstart."""

from __future__ import annotations

from leapgit.commands.init import InitResult
from leapgit.commands.log import LogEntry
from leapgit.commands.slice import CutResult
from leapgit.commands.status import Status
from leapgit.slices.check import CheckedSlice


def init_lines(r: InitResult) -> list[str]:
    return [
        f"config  {r.config_path} ({'written' if r.config_written else 'kept'})",
        f"ledger  {r.ledger_ref} at {r.ledger_commit[:12]} "
        f"({'started' if r.ledger_created else 'already there'})",
    ] + ([f"hooks   {r.hooks}"] if r.hooks else [])


def check_lines(c: CheckedSlice) -> list[str]:
    files = sum(len(s) for s in c.scopes.values())
    absent = sum(1 for s in c.scopes.values() for e in s if e.blob == "absent")
    out = [
        f"slice {c.draft.slice}: ok ({len(c.draft.balls)} balls, {files} scope files, "
        f"{absent} to be created, spine {c.draft.spine})",
    ]
    for i, wave in enumerate(c.waves):
        out.append(f"  wave {i}: {', '.join(wave)}")
    return out


def cut_lines(r: CutResult) -> list[str]:
    return check_lines(r.checked) + [
        f"cut at base {r.record.base[:12]}; ledger commit {r.written.commit[:12]}"
    ]


def status_lines(s: Status) -> list[str]:
    if not s.slices:
        return ["no slices yet: write a draft and run `leap slice cut FILE`"]
    out: list[str] = []
    for sl in s.slices:
        rec = sl.record
        out.append(
            f"slice {rec.slice}  spine {rec.spine}  base {rec.base[:12]}  "
            f"{len(rec.balls)} balls"
        )
        width = max(len(b.ball) for b in sl.balls)
        for i in range(len(rec.waves)):
            out.append(f"  wave {i}")
            for b in (b for b in sl.balls if b.wave == i):
                deps = sl.depends.get(b.ball, ())
                line = (f"    {b.ball:<{width}}  {b.state:<10}  "
                        f"round {b.rounds_used}/{s.round_limit}")
                if b.episode > 1:
                    line += f"  episode {b.episode}"
                if deps:
                    line += f"  after {', '.join(deps)}"
                out.append(line)
    return out


def log_lines(entries: list[LogEntry]) -> list[str]:
    out = []
    for e in entries:
        out.append(f"{e.commit[:12]}  {e.date}  {e.subject}")
        shown = [f"{k}: {v}" for k, v in e.trailers if k != "Leap-Record"]
        records = [v for k, v in e.trailers if k == "Leap-Record"]
        if shown:
            out.append("    " + "  ".join(shown))
        if records:
            more = f" (+{len(records) - 3} more)" if len(records) > 3 else ""
            out.append("    records: " + ", ".join(records[:3]) + more)
    return out
