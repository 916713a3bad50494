"""The audit's timeline reads the lease every slice pass record names: merge 1
(``merge.yaml``) and each re-merge after a reopen (``merges/<n>.yaml``)."""

from __future__ import annotations

from leapgit.audit.timeline import _merge_lease
from leapgit.ledger.layout import merge_path

SHA = "a" * 40


def test_a_re_merge_record_places_its_merges_under_its_lease() -> None:
    data = (f"kind: merge\nformat: 1\nslice: s\nmerge: 2\nspine: main\nlease: 7\n"
            f"tip: \"{SHA}\"\nmerges: []\n").encode()
    for number in (1, 2):
        under: dict[int, str] = {}
        _merge_lease(merge_path("s", number), data, "main", {SHA.encode(): 0}, under)
        assert under == {0: "7"}, merge_path("s", number)
