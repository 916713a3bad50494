"""T6: verdicts already paid for are never discarded, a kill included. A convening writes each
record to its folder the moment it exists (``recorder``) and commits them all, its summary
last, when it has decided. A run killed while its jurors sat (SIGKILL, the OOM killer, a
second Ctrl-C) left that folder and no ledger commit: the seats that answered were paid for,
and `run.max_usd` read the slice as if they never sat (a walk-away hunt: each kill bought
another whole convening past the cap).

The next run in this clone (`leap run`, or any convening) records what such a folder holds:
its envelope, its routing and every verdict that came back, with their spend. Never a summary
found there: a convening that decided nothing is no round of T9, and a decision that never
reached the ledger never happened (T2). A folder counts as left only once the convening that
wrote it is gone: it holds ``SITTING`` locked (``flock``) while it sits, and the kernel drops
that lock when it dies."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from leapgit.errors import InvalidRecord, LeapError
from leapgit.ledger import layout
from leapgit.ledger.store import Ledger
from leapgit.records import schema, yamlio
from leapgit.records import trailers as tr
from leapgit.tribunal.outdir import STAMP, VERDICTS

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: nothing is taken as left
    fcntl = None  # type: ignore[assignment]

SITTING = ".sitting"  # locked while the convening that owns the folder sits
FOLDER = "leap-tribunal"  # under the common git dir: a convening's folder by default
_FIRST = ("envelope.yaml", "routing.yaml")  # written before any seat is dispatched


@contextmanager
def sitting(folder: Path) -> Iterator[None]:
    """Held for as long as the convening whose folder this is sits. A convening that ended
    (its records committed) takes ``SITTING`` away: a later run does not read its folder
    again (every convening looks at every folder of the clone)."""
    if fcntl is None:  # pragma: no cover - Windows
        yield
        return
    fd = os.open(folder / SITTING, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
        _done(folder)  # not on an exception: what it paid for is left to the next run
    finally:
        os.close(fd)  # the lock goes with the descriptor


def _done(folder: Path) -> None:
    try:
        os.unlink(folder / SITTING)
    except FileNotFoundError:
        pass


def record_left(common_dir: Path, ledger: Ledger,
                say: Callable[[str], None] = lambda line: None) -> list[str]:
    """Record every convening a killed run left in this clone's tribunal folders; the run
    ids recorded. A folder that cannot be read whole is left as it is, and said."""
    root = common_dir / FOLDER
    try:
        folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return []
    done = []
    for folder in folders:
        if not (folder / STAMP).is_file() or not (folder / VERDICTS).is_dir():
            continue  # not a convening's, or no seat answered: nothing was paid for
        with _gone(folder) as gone:
            if not gone:
                continue
            try:
                if _record(folder, ledger, say):
                    done.append(folder.name)
                    say(f"recorded the verdicts a killed convening left in {folder} (T6): "
                        "their spend counts")
                _done(folder)  # recorded now, or before: nothing left to read there
            except LeapError as exc:
                say(f"left a killed convening's folder {folder} as it is: {exc.lines()[0]}")
    return done


@contextmanager
def _gone(folder: Path) -> Iterator[bool]:
    """Whether the convening that wrote ``folder`` is gone (its lock taken here, and held
    while its records are written, so two runs never record one folder twice)."""
    if fcntl is None or not (folder / SITTING).is_file():  # pragma: no cover - Windows
        yield False  # no lock to ask (a folder of a leapgit before this one): not taken
        return
    try:
        fd = os.open(folder / SITTING, os.O_RDWR | os.O_NOFOLLOW)
    except OSError:
        yield False
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False  # it sits now
            return
        yield True
    finally:
        os.close(fd)


def _record(folder: Path, ledger: Ledger, say: Callable[[str], None]) -> bool:
    """Its envelope, routing and verdicts, in one ledger commit; False when its run is
    recorded already (it ended, or an earlier run recorded what it left). A verdict file
    that cannot be read whole (cut short: a convening writes each aside and renames it, an
    older leapgit did not) is left out and said; it costs no other verdict its record (a
    suite under load: the kill landed mid-write, the folder was left unrecorded, and the
    next run paid a whole new convening past `run.max_usd`)."""
    run_id = folder.name
    first = {name: _read(folder / name, run_id) for name in _FIRST}
    routing = first["routing.yaml"]
    slice_id, ball_id = routing.get("slice"), routing.get("ball")
    base = layout.tribunal_dir(run_id, slice_id, ball_id)
    if ledger.require().exists(f"{base}/routing.yaml"):
        return False
    verdicts = {}
    for p in sorted((folder / VERDICTS).glob("*.yaml")):
        if p.is_symlink():
            continue
        try:
            verdicts[f"verdicts/{p.name}"] = _read(p, run_id)
        except InvalidRecord as exc:
            say(f"left out {p} of a killed convening's verdicts: {exc.lines()[0]}")
    if not verdicts:
        return False
    files = {}
    for name, raw in {**first, **verdicts}.items():
        path = f"{base}/{name}"
        if layout.path_for(raw) != path:
            raise InvalidRecord(f"belongs at {layout.path_for(raw)}, not in this run's folder",
                                file=str(folder / name))
        files[path] = yamlio.dumps(raw)
    trailers = [(tr.RUN, run_id), (tr.ROUND, str(routing["round"])),
                (tr.CANDIDATE, str(routing["candidate"])),
                (tr.ENVELOPE, str(routing["envelope_hash"]))]
    trailers += [(key, value) for key, value in ((tr.SLICE, slice_id), (tr.BALL, ball_id))
                 if value]
    ledger.append(files, f"tribunal {run_id} round {routing['round']}: left by a killed run, "
                  f"{len(verdicts)} verdict(s) paid for, no decision (T6)", trailers)
    return True


def _read(path: Path, run_id: str) -> dict[str, Any]:
    """A record of the folder, validated as the ledger would take it, of run ``run_id``."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InvalidRecord(f"cannot be read: {exc.strerror}", file=str(path)) from None
    raw = yamlio.loads(data, str(path))
    schema.validate_record(raw, str(path))
    if raw.get("run_id") != run_id:
        raise InvalidRecord(f"is of run {raw.get('run_id')!r}, not of its folder's",
                            file=str(path), field="run_id")
    return raw
