"""`leap tribunal convene`: grade one change blind (T1-T9). Reads the criteria from a file
when the value names one; everything else is the tribunal package's work."""

from __future__ import annotations

import errno
from pathlib import Path

from leapgit.errors import InvalidRecord
from leapgit.ledger.workspace import require_folder
from leapgit.records import yamlio
from leapgit.tribunal.convene import Convened, Echo, Request, convene
from leapgit.tribunal.worktree import once_a_tree


def read_criteria(value: str) -> str:
    path = Path(value)
    try:
        named = "\n" not in value and len(value) < 4096 and path.is_file()
    except OSError as exc:  # is_file() lets all but a missing file through
        if exc.errno != errno.ENAMETOOLONG:
            raise InvalidRecord(f"cannot read: {exc.strerror}", file=value,
                                field="--criteria") from None
        named = False  # a line of text longer than any file name: the criteria themselves
    if named:
        return yamlio.decode(yamlio.read_bytes(path), str(path))
    return value


@once_a_tree
def convene_command(*, intent: str, criteria: str, builder: str, base: str | None = None,
                    head: str | None = None, slice_id: str | None = None,
                    ball_id: str | None = None, out: Path | None = None,
                    round_no: int | None = None,
                    tests: str | None = None, red: str | None = None,
                    start: Path | str = ".", echo: Echo = print) -> Convened:
    if out is not None:  # before the envelope is built: nothing to write it into
        require_folder(out, field="--out", hint="pick another --out")
    request = Request(intent=intent, criteria=read_criteria(criteria), builder=builder,
                      base=base, head=head, slice=slice_id, ball=ball_id, out=out,
                      round=round_no, tests=tests, red=red)
    return convene(request, start=start, echo=echo)
