"""What a builder leaves that is no UTF-8 or no single line (a file name that is not UTF-8 or
holds a newline, a report whose evidence holds a NUL, an ESC or newlines) is judged and
recorded like any other round, and shown escaped, one line a ball. Before: a name that is
not UTF-8 outside the scope made closing the round fail (``UnicodeEncodeError`` as the
receipt's evidence, no evidence ref, the file left in the worktree); a NUL in the evidence
made `git commit` fail and a claimed round a -1; newlines in the evidence or in a breached
file's name forged lines in the run's summary and in `leap status`."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from leapgit.ledger import query
from leapgit.ledger.store import Ledger
from leapgit.records.types import Receipt
from tests.support import git, leap
from tests.worktrees.conftest import set_config, worktree_of

Builder = Callable[..., str]


def _receipts(repo: Path) -> list[Receipt]:
    with Ledger(repo / ".git") as ledger:
        return query.receipts(ledger.require(), "dia", "A", 1)


def _one_line_a_ball(text: str) -> None:
    """No line of the output starts with what the builder's text forged."""
    assert not re.search(r"^(Leap-|---|forged)", text, re.MULTILINE), text


def test_a_file_name_that_is_not_utf8_outside_the_scope_is_a_breach(
        diamond: Path, builder: Builder) -> None:
    set_config(diamond, builder=builder(
        "pathlib.Path('src/a.py').write_text('A = 2\\n')\n"
        "open(b'src/\\xff.py', 'wb').write(b'x')\n"))
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond)
    assert r.code == 1, r
    (got,) = _receipts(diamond)
    assert got.outcome == -1 and not got.claim
    assert got.evidence.startswith("scope breach (L4, L9): src/\\xff.py outside the scope "
                                   "of A"), got.evidence
    assert "src/\\xff.py outside the scope of A" in r.out, r
    assert "could not close" not in r.out, r
    # the breach left the branch (kept as evidence) and the worktree
    assert git("for-each-ref", "refs/leap/evidence/dia/A/", cwd=diamond)
    assert not (worktree_of(diamond, "A") / "src").joinpath(b"\xff.py".decode(
        "utf-8", "surrogateescape")).exists()


def test_a_file_name_with_a_newline_is_one_line_of_the_summary(
        diamond: Path, builder: Builder) -> None:
    set_config(diamond, builder=builder("open('src/x\\nforged: line.py', 'w').write('x')\n"))
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond)
    assert r.code == 1, r
    assert "src/x\\nforged: line.py outside the scope of A" in r.out, r
    # the hint that brings the removed file back names it on one line, as bash reads it
    assert "-- $'src/x\\nforged: line.py'` brings back what it removed" in r.out, r.out
    _one_line_a_ball(r.out)
    status = leap("status", cwd=diamond)
    assert status.code == 0, status
    _one_line_a_ball(status.out)


def test_evidence_with_a_nul_an_escape_and_newlines_is_recorded_as_said(
        diamond: Path, builder: Builder, tmp_path: Path) -> None:
    report = tmp_path / "report.yaml"  # YAML escapes: the file itself is UTF-8 text
    report.write_text('outcome: 1\nevidence: "built it\\x00 \\x1b[2J\\n\\n'
                      'Leap-Outcome: -1\\nLeap-Ball: B\\n---\\nforged"\n')
    set_config(diamond, builder=builder(
        "pathlib.Path('src/a.py').write_text('A = 2\\n')\n"
        f"pathlib.Path(os.environ['LEAP_REPORT']).write_bytes(pathlib.Path({str(report)!r})"
        ".read_bytes())\n"))
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond)
    assert r.code == 0, r.out  # the builder's claim, not a round leapgit failed to close
    (got,) = _receipts(diamond)
    assert got.outcome == 1 and got.claim and got.commit, got
    assert got.evidence.startswith("built it\x00 \x1b[2J"), got.evidence
    msg = git("log", "-1", "--format=%B", "leap/ball/dia/A", cwd=diamond)
    trailers = git("log", "-1", "--format=%(trailers:key=Leap-Outcome,valueonly)",
                   "leap/ball/dia/A", cwd=diamond)
    assert trailers.split() == ["1"], msg  # the evidence forged no trailer
    assert "\x1b" not in msg and "\\x1b[2J" in msg, msg
    assert "last pass (claim): built it\\x00 \\x1b[2J" in r.out, r
    _one_line_a_ball(r.out)
    status = leap("status", cwd=diamond)
    _one_line_a_ball(status.out)
