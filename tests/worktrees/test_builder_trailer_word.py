"""A builder that commits by itself and says its outcome in a `Leap-Outcome:` trailer that
is no outcome (`2`, `pass`, an empty value) gave a malformed answer: its round is refused
(-1) naming the trailer, as a malformed `$LEAP_REPORT` is. Before, the trailer was read as
no word at all and the builder's exit 0 made the round a claim of 1."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from leapgit.ledger import query
from leapgit.ledger.store import Ledger
from tests.support import leap
from tests.worktrees.conftest import set_config

Builder = Callable[..., str]


@pytest.mark.parametrize("word", ["2", "pass", "+1"])
def test_an_outcome_trailer_that_is_no_outcome_is_a_malformed_answer(
        diamond: Path, builder: Builder, word: str) -> None:
    set_config(diamond, builder=builder(
        "import subprocess\n"
        "pathlib.Path('src/a.py').write_text('A = 2\\n')\n"
        "subprocess.run(['git', 'commit', '-qam', 'a\\n\\nLeap-Round: 1\\n"
        f"Leap-Outcome: {word}\\nLeap-Evidence: done'], check=True)\n"))
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond)
    assert r.code == 1, r
    with Ledger(diamond / ".git") as ledger:
        (got,) = query.receipts(ledger.require(), "dia", "A", 1)
    assert got.outcome == -1, got
    assert got.evidence == (f"malformed builder commit trailer Leap-Outcome: {word}: "
                            "needs -1, 0 or 1"), got.evidence


def test_evidence_past_the_receipts_cap_is_cut_not_refused(diamond: Path,
                                                          builder: Builder) -> None:
    """A builder's commit whose Leap-Evidence trailer holds 3 MB: its receipt keeps the
    first 64 KiB. Before: "leapgit could not close the round: ...receipts/1.yaml: too large
    (3000370 bytes)", a claimed round recorded as -1."""
    set_config(diamond, builder=builder(
        "import subprocess\n"
        "pathlib.Path('src/a.py').write_text('A = 2\\n')\n"
        "subprocess.run(['git', 'commit', '-qa', '-F', '-'], check=True, input=b'a\\n\\n"
        "Leap-Round: 1\\nLeap-Outcome: 1\\nLeap-Evidence: ' + b'e' * 3_000_000 + b'\\n')\n"))
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond)
    assert r.code == 0, r.out
    with Ledger(diamond / ".git") as ledger:
        (got,) = query.receipts(ledger.require(), "dia", "A", 1)
    assert got.outcome == 1 and got.claim and got.commit, got.evidence[-200:]
    assert got.evidence == "e" * 65536 + "… (cut at 65536 of 3000000 characters)"
