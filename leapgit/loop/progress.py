"""The builders' progress (``worktrees.progress.Progress``) as `leap run` events: each round's
state change is a ``round`` event, each heartbeat and note a ``log`` line of the ball."""

from __future__ import annotations

import io

from leapgit.loop.events import Events
from leapgit.worktrees.progress import Progress


class EventProgress(Progress):
    def __init__(self, events: Events, slice_id: str, balls: list[tuple[str, int]],
                 round_cap: int) -> None:
        super().__init__(io.StringIO(), slice_id, balls, round_cap, live=False)
        self._events = events
        self._waves = dict(balls)
        self._only = balls[0][0] if len(balls) == 1 else None

    def update(self, ball: str, round_no: int, state: str) -> None:
        self._events.emit("round", ball, self._waves.get(ball), round=round_no,
                          step="build", outcome=state)

    def beat(self, ball: str, round_no: int, seconds: float, line: str) -> None:
        self._events.emit("heartbeat", ball, self._waves.get(ball), round=round_no,
                          step="build", seconds=round(seconds, 1), line=line)

    def note(self, text: str) -> None:
        self._events.emit("log", self._only, line=text)
