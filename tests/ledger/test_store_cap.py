"""The ledger never takes a record its readers refuse: one past the 1 MiB cap is refused
before the commit (a bad-input hunt: a tribunal summary of 1.6 MB was committed, and the
server's pre-receive then refused every later push of that ledger, for good)."""

from __future__ import annotations

from pathlib import Path

import pytest

from leapgit.errors import InvalidRecord
from leapgit.ledger.store import Ledger
from leapgit.records import yamlio
from tests.support import leap, make_repo, ref


def test_a_record_past_the_cap_is_not_written(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a.py": "a\n"})
    assert leap("init", cwd=root).code == 0
    tip = ref(root, "leap/ledger")
    big = yamlio.dumps({"kind": "note", "text": "x" * yamlio.MAX_BYTES})
    with Ledger(root / ".git") as ledger, pytest.raises(InvalidRecord) as refused:
        ledger.append({"notes/big.yaml": big}, "too big")
    assert f"larger than the {yamlio.MAX_BYTES} byte cap" in str(refused.value)
    assert ref(root, "leap/ledger") == tip
