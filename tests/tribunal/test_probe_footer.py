"""Blind review (issue 17, lens correctness; T8): the probe record's ``footer`` says whether
the lens footer was right, and right means literal *and last*: a canary answer whose "lens"
comes first fails the probe, and its record must not say the footer was right."""

from __future__ import annotations

import json

from tests.support import leap
from tests.tribunal.conftest import Repo, rung
from tests.tribunal.jurors import Call, JurorServer, Reply
from tests.tribunal.test_probe import latest_probe


def _footer_first(call: Call) -> Reply:
    return Reply(json.dumps({"lens": call.lens, "verdict": "pass", "findings": []}))


def test_a_footer_that_is_not_last_is_recorded_as_not_right(repo: Repo) -> None:
    with JurorServer("openai", _footer_first) as server:
        repo.config([rung("first", "openai", server.url, timeout=2)])
        result = leap("tribunal", "rungs", "--probe", cwd=repo.root)
    assert result.code == 3, result
    [entry] = latest_probe(repo.root).rungs
    assert (entry.result, entry.live, entry.json) == ("bad_answer", False, True)
    assert "is not the last field" in entry.detail
    assert entry.footer is False, entry


def test_probe_ids_sort_in_the_order_they_were_made() -> None:
    # routing takes the latest probe by name (T2): two probes in one second must not be
    # ordered by a random suffix, or an older probe's "live" outranks a newer failure
    from leapgit.tribunal.probe import new_probe_id

    made = [new_probe_id() for _ in range(50)]
    assert made == sorted(made) and len(set(made)) == len(made)
