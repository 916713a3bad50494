"""`leap run` as a real process, killed at a moment its JSON events show: what the kill
tests of the five-ball slice (test_kill) and of the realistic project share."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

Event = dict[str, object]
TIMEOUT = 600  # seconds: longer than any run of the suite's slices, on a loaded machine


def is_event(kind: str, **want: object) -> Callable[[Event], bool]:
    """An event of ``kind`` whose fields start with the values ``want`` names."""
    def match(e: Event) -> bool:
        return e["event"] == kind and all(
            str(e.get(k, "")).startswith(str(v)) for k, v in want.items())
    return match


def run_until(work: Path, slice_id: str, hit: Callable[[Event], bool],
              sig: int = signal.SIGKILL, env: Mapping[str, str] | None = None,
              args: Sequence[str] = ()) -> tuple[bool, int, str]:
    """`leap run SLICE --json [ARGS]` as a real process, sent ``sig`` at the first event
    ``hit`` takes; (signalled, exit code, what it printed)."""
    proc = subprocess.Popen([sys.executable, "-m", "leapgit", "run", slice_id, *args,
                             "--json", "--heartbeat", "0"], cwd=work, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True,
                            env={**os.environ, **(env or {})})
    assert proc.stdout is not None
    hung = threading.Timer(TIMEOUT, proc.kill)  # a run that never ends fails, never hangs
    hung.start()
    said = []
    try:
        for line in proc.stdout:
            said.append(line)
            if line.startswith("{") and hit(json.loads(line)):
                os.kill(proc.pid, sig)
                rest = proc.stdout.read()  # a SIGINT or SIGTERM: the run records and says why
                return True, proc.wait(), "".join(said) + rest
        return False, proc.wait(), "".join(said)
    finally:
        hung.cancel()
        if proc.poll() is None:  # the event's check raised: the run is not left behind
            proc.kill()
            proc.wait()
