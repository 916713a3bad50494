"""The one reader and writer of ``Leap-*`` trailers: what it writes, git reads the same way
(`git interpret-trailers --parse`), and what it reads back is what was written."""

from __future__ import annotations

import subprocess

import pytest

from leapgit.records import trailers as tr

PAIRS = [(tr.SLICE, "s1"), (tr.BALL, "a"), (tr.ROUND, "2"), (tr.OUTCOME, "-1"),
         (tr.EVIDENCE, "ran   the proof\nand it failed"), (tr.RECORD, "slices/s1/x.yaml"),
         (tr.RECORD, "slices/s1/y.yaml")]


def _git_reads(message: bytes) -> list[tuple[str, str]]:
    out = subprocess.run(["git", "interpret-trailers", "--parse"], input=message,
                         capture_output=True, check=True).stdout.decode()
    return [(k, v.strip()) for k, _, v in (line.partition(":") for line in out.splitlines())]


def test_what_leapgit_writes_git_and_leapgit_read_alike() -> None:
    message = tr.format_message("round 2 of s1/a: refuse", PAIRS)
    assert message.startswith(b"round 2 of s1/a: refuse\n\nLeap-Slice: s1\n")
    found = tr.parse(message)
    assert list(found.pairs) == _git_reads(message)
    assert found.get(tr.EVIDENCE) == "ran the proof and it failed"  # one line: no forged one
    assert found.all(tr.RECORD) == ["slices/s1/x.yaml", "slices/s1/y.yaml"]
    assert (found.slice, found.ball) == ("s1", "a")
    assert tr.round_trailers(message) == tr.RoundTrailers(2, -1, "ran the proof and it failed")


def test_a_body_sits_between_subject_and_trailers() -> None:
    message = tr.format_message("subject", [(tr.SLICE, "s")], body="why\n\nmore")
    assert message == b"subject\n\nwhy\n\nmore\n\nLeap-Slice: s\n"
    assert tr.parse(message).slice == "s"


@pytest.mark.parametrize(("text", "want"), [
    (b"x\n\nleap-round: 3\nLEAP-OUTCOME: 1\n", tr.RoundTrailers(3, 1, None)),  # any case
    (b"x\n\nLeap-Round: 1\nLeap-Round: 2\nLeap-Outcome: 0\n", tr.RoundTrailers(2, 0, None)),
    (b"x\n\nLeap-Round: two\nLeap-Outcome: 2\n", tr.RoundTrailers(None, None, None)),
    (b"x\n\nLeap-Round: 1\n\nnot a trailer paragraph\n", tr.RoundTrailers(None, None, None)),
    (b"Leap-Round: 1\n", tr.RoundTrailers(None, None, None)),  # a subject is no trailer
    (b"", tr.RoundTrailers(None, None, None)),
])
def test_round_trailers_read_git_s_way(text: bytes, want: tr.RoundTrailers) -> None:
    assert tr.round_trailers(text) == want
    assert tr.parse(text).get(tr.SLICE) is None
