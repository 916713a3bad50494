"""`leap run SLICE [--jobs N] [--max-minutes M] [--resume-holds] [--json]`: drive the slice
from its cut to the spine (``loop.drive``); the events go to ``stream`` as lines, or as one
JSON object per line (``schemas/run-event.schema.json``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from leapgit.errors import LeapError
from leapgit.ledger.sync import require_remote
from leapgit.ledger.workspace import open_workspace
from leapgit.loop.drive import Options, RunEnd, SliceRun
from leapgit.loop.events import Events, as_started, stop_fields
from leapgit.rules.landing import failed_hint
from leapgit.tribunal.worktree import once_a_tree


@once_a_tree
def run_slice(slice_id: str, stream: TextIO, options: Options, as_json: bool = False,
              start: Path | str = ".") -> RunEnd:
    events = Events(stream, slice_id, as_json, given=options.given())
    try:
        ws = open_workspace(start)
        if options.remote is not None:  # bad input: said before the run starts
            require_remote(ws.paths.root, options.remote)
        return SliceRun(ws, slice_id, events, options).run()
    except LeapError as exc:  # its hints name the run as it was started, as events' do
        exc.problems = tuple(
            p._replace(message=as_started(p.message, slice_id, options.given()),
                       hint=p.hint and as_started(p.hint, slice_id, options.given()))
            for p in exc.problems)
        if as_json and not events.ended:  # an agent reads stdout: the stop is said there
            events.emit("stop", **stop_fields(exc))
            events.emit("end", outcome="stopped", exit_code=exc.exit_code)
        raise


def table_lines(end: RunEnd, given: Sequence[str] = ()) -> list[str]:
    """The final table, for a person (the ``table`` event carries the same for a program);
    ``given``: the run's own options (``Options.given``), which its hints to run again
    name."""
    return [as_started(line, end.slice, given) for line in _table(end)]


def _table(end: RunEnd) -> list[str]:
    width = max((len(b.ball) for b in end.balls), default=4)
    out = [f"{'ball':<{width}}  wave  state    episode  rounds  last score  reason"]
    for b in end.balls:
        out.append(f"{b.ball:<{width}}  {b.wave:>4}  {b.state:<7}  {b.episode:>7}  "
                   f"{b.rounds:>6}  {b.score or '-':<10}  {b.reason or ''}")
        if b.hint:
            out.append(f"{'':<{width}}  next: {b.hint}")
    if end.usage is not None:
        u = end.usage
        cost = "cost unknown (unpriced)" if u.get("usd") is None else f"{u['usd']:.6f} USD"
        unmeasured = f", {u['unmeasured']} call(s) unmeasured" if u.get("unmeasured") else ""
        out.append(f"jurors: {u['tokens_in']} tokens in, {u['tokens_out']} out, {cost}"
                   f"{unmeasured}")
    tip = f" at {end.merged_tip[:12]}" if end.merged_tip else ""
    out.append(f"slice {end.slice}: {end.outcome}{tip}"
               + (f"; stopped: {end.stopped}" if end.stopped else ""))
    if end.live is not None and end.live.record is not None and end.live.record.outcome == -1:
        out.append(f"next: {failed_hint(end.slice)}")
    return out
