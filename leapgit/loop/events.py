"""What `leap run` says while it works: one event per state change per ball, a heartbeat
while builders or jurors work, and the final table. For a person each event is one plain
line; with ``--json`` it is one JSON object per line (``schemas/run-event.schema.json``), so
an orchestrating agent can follow the run without parsing prose.

Every event carries ``event`` (its kind), ``slice``, ``elapsed`` (seconds since the run
began) and ``at`` (UTC); a ball's events add ``ball`` and ``wave``; the rest is per kind.
Text from builders, jurors or records is made printable before it reaches a terminal."""

from __future__ import annotations

import json
import re
import shlex
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from leapgit.errors import LeapError, printable
from leapgit.timeutil import now_iso

KINDS = ("start", "red", "throw", "round", "score", "findings", "stop", "heartbeat", "merge",
         "live_proof", "log", "table", "end")


def as_started(text: str, slice_id: str, given: Sequence[str] = ()) -> str:
    """A hint that runs the slice again names the run as it was started: ``given`` are the
    run's own options that change what it does, as words (``drive.Options.given``), and
    each one a hint's `leap run S ...` does not name itself is put in. Of a run with
    ``--remote R``, `leap run S` is `leap run S --remote R` (a blind review: followed as
    printed, it built the published balls here instead, without a word); a run's --jobs,
    --max-minutes and --resume-holds are kept as well (a hint hunt)."""
    if not given or "`leap run" not in text:
        return text
    groups: list[list[str]] = []
    for word in given:  # a flag, and the value after it
        if word.startswith("--") or not groups:
            groups.append([word])
        else:
            groups[-1].append(word)

    def named(m: re.Match[str]) -> str:
        said = m.group(1).split()
        missing = [w for group in groups if group[0] not in said for w in group]
        if not missing:
            return m.group(0)
        # the hint's own command (checked where it is written), the options put in
        return f"`leap run {slice_id} " + shlex.join(missing) + m.group(1) + "`"

    return re.sub(rf"`leap run {re.escape(slice_id)}((?: [^`]*)?)`", named, text)


def stop_fields(exc: LeapError, what: str = "") -> dict[str, Any]:
    """What a ``stop`` event says of an error, for an agent that reads stdout only (the
    brief: bad input names the file, the field and the rule): its first problem, located,
    as the reason (after ``what``: the step it stopped), that problem's rule and hint, and,
    when it has several, each of them as the CLI prints it."""
    first = exc.problems[0] if exc.problems else None
    out: dict[str, Any] = {
        "reason": what + (first.located() if first else printable(str(exc))),
        "rule": first.rule if first else None, "hint": first.hint if first else None,
        "exit_code": exc.exit_code, "details": exc.detail_lines()[-12:] or None}
    if len(exc.problems) > 1:
        out["problems"] = [{k: v for k, v in (
            ("line", p.line()), ("message", printable(p.message)), ("file", p.file),
            ("field", p.field), ("rule", p.rule), ("hint", p.hint)) if v is not None}
            for p in exc.problems]
    return out


class Events:
    def __init__(self, stream: TextIO, slice_id: str, as_json: bool = False,
                 clock: Callable[[], float] = time.monotonic, given: Sequence[str] = ()
                 ) -> None:
        self._out, self._slice, self._json = stream, slice_id, as_json
        self._given = tuple(given)  # the run's own options: its hints name them (``as_started``)
        self._clock = clock
        self._started = clock()
        self._lock = threading.Lock()
        self.ended = False  # the run's "end" was said: an error after it adds no other

    def _as_started(self, value: Any) -> Any:
        """``as_started`` through every text of a field, a table's rows and lists too."""
        if isinstance(value, str):
            return as_started(value, self._slice, self._given)
        if isinstance(value, list):
            return [self._as_started(v) for v in value]
        if isinstance(value, dict):
            return {k: self._as_started(v) for k, v in value.items()}
        return value

    @property
    def elapsed(self) -> float:
        return self._clock() - self._started

    def emit(self, event: str, ball: str | None = None, wave: int | None = None,
             **fields: Any) -> None:
        assert event in KINDS, event
        data: dict[str, Any] = {"event": event, "slice": self._slice,
                                "elapsed": round(self.elapsed, 3), "at": now_iso()}
        if ball is not None:
            data["ball"] = ball
        if wave is not None:
            data["wave"] = wave
        data.update({k: self._as_started(v) for k, v in fields.items() if v is not None})
        line = json.dumps(data, sort_keys=False) if self._json else self._text(data)
        with self._lock:
            self._out.write(line + "\n")
            self._out.flush()
            self.ended = self.ended or event == "end"

    def _text(self, data: dict[str, Any]) -> str:
        head = f"[{data['elapsed']:7.1f}s]"
        if data["event"] == "log":
            return f"{head}   {printable(str(data.get('line', '')))}"
        where = f"{self._slice}/{data['ball']}" if "ball" in data else self._slice
        wave = f"wave {data['wave']} " if "wave" in data else ""
        hidden = ("event", "slice", "elapsed", "at", "ball", "wave", "step", "outcome",
                  "detail", "details", "problems") + (
            ("balls", "usage") if data["event"] == "table" else ())
        shown = {k: v for k, v in data.items() if k not in hidden}  # the table follows
        parts = [f"{head} {wave}{where}", data["event"]]
        if "step" in data:
            parts.append(str(data["step"]))
        if "outcome" in data:
            parts.append(f"-> {data['outcome']}")
        parts += [f"{k}={_short(v)}" for k, v in shown.items()]
        if data.get("detail"):
            parts.append(f"({printable(str(data['detail']))})")
        line = "  ".join(parts)
        more = [f"            also: {p['line']}" for p in (data.get("problems") or ())[1:]]
        said = ["            | " + printable(str(d)) for d in data.get("details") or ()]
        return "\n".join([line, *more, *said])


def _short(value: Any) -> str:
    if isinstance(value, dict) and "tokens_in" in value:  # a spend (records.usage)
        usd = value.get("usd")
        unmeasured = value.get("unmeasured")  # calls nobody measured are never a 0
        return (f"{value['tokens_in']}+{value['tokens_out']} tokens, "
                + ("cost unpriced" if usd is None else f"{usd:.6f} USD")
                + (f", {unmeasured} call(s) unmeasured" if unmeasured else ""))
    if isinstance(value, dict) and "claim" in value:  # a finding
        return printable(f"[{value.get('lens')}/{value.get('severity')}] {value['claim']}")
    if isinstance(value, dict):
        return printable(", ".join(f"{k}: {v}" for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return "; ".join(_short(v) for v in value) or "-"
    return printable(str(value))


class Heartbeat:
    """A line every ``every`` seconds while something works (``busy()`` says what)."""

    def __init__(self, events: Events, every: float, busy: Callable[[], list[str]]) -> None:
        self._events, self._every, self._busy = events, every, busy
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="leap-run-heartbeat",
                                        daemon=True)

    def __enter__(self) -> Heartbeat:
        if self._every > 0:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _beat(self) -> None:
        while not self._stop.wait(self._every):
            busy = self._busy()
            if busy:
                self._events.emit("heartbeat", working=busy)
