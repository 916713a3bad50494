"""The probe's canary (issue 17): a fixed tiny envelope with one planted defect, asked for
the strict verdict of one lens through the real provider code. Small enough for any rung
that can sit at all; a juror that reads it should refuse, quoting the defect."""

from __future__ import annotations

import hashlib

from leapgit.tribunal.envelope import Contract, Envelope, EnvelopeFile, render
from leapgit.tribunal.lenses import LENSES
from leapgit.tribunal.prompt import Prompt, build

LENS = "defect"
DEFECT = "return items[len(items)]"  # one past the end: every call raises IndexError
FILES = (
    ("src/last.py", "changed",
     'def last(items):\n    """The last item of a non-empty list."""\n'
     f"    {DEFECT}\n"),
    ("tests/test_last.py", "test",
     "from src.last import last\n\n\ndef test_last():\n    assert last([1, 2, 3]) == 3\n"),
)
CONTRACT = Contract("return the last item of a list",
                    "last(items) returns the final item of a non-empty list; the test passes")
FENCE = "c0ffee00c0ffee00"  # fixed: the canary is the same bytes every time
_NO_COMMIT = "0" * 40


def _blob(text: str) -> str:
    data = text.encode("utf-8")
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def envelope() -> Envelope:
    files = tuple(EnvelopeFile(path, role, "text", _blob(text), len(text.encode()), text)
                  for path, role, text in FILES)
    body = render(CONTRACT, files, FENCE)
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
    return Envelope(_NO_COMMIT, _NO_COMMIT, _NO_COMMIT, CONTRACT, files, body, digest, FENCE)


def prompt(probe_id: str, env: Envelope) -> Prompt:
    lens = next(x for x in LENSES if x.id == LENS)
    return build(f"probe-{probe_id}", lens, env.body)
