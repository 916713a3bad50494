"""Blind review (issue 17, lens correctness; T3): the effective number of independent jurors
is never claimed where the data is too thin. A rung "never varied" only when it voted on at
least ``MIN_SHARED`` envelopes; with fewer votes it is unmeasured, said, not left out (left
out, one or two alike votes made the figure 1 or 0 and the summary said "under 2")."""

from __future__ import annotations

import json

from tests.support import leap
from tests.tribunal.conftest import Repo, rung
from tests.tribunal.jurors import JurorServer, detailed_pass
from tests.tribunal.test_independence import A, N, _summary, write_history


def test_a_rung_with_two_votes_is_unmeasured_not_constant(repo: Repo) -> None:
    few: list[int | None] = [0, 0, *([None] * (N - 2))]
    write_history(repo.root, {"a": ("fam1", "defect", list(A)),
                              "g": ("fam2", "telemetry", few)})
    got = json.loads(leap("tribunal", "report", "--json", cwd=repo.root).out)
    assert got["effective_rungs"]["value"] is None, got["effective_rungs"]
    assert got["effective_rungs"]["why"] == "g voted on 2 envelope(s), fewer than 5"
    text = leap("tribunal", "report", cwd=repo.root).out
    assert "effective independent rungs: unmeasured (g voted on 2 envelope(s)" in text


def test_a_rung_that_never_varied_on_enough_votes_is_still_left_out(repo: Repo) -> None:
    quiet: list[int | None] = [0] * 5 + [None] * (N - 5)
    write_history(repo.root, {"a": ("fam1", "defect", list(A)),
                              "q": ("fam2", "telemetry", quiet)})
    got = json.loads(leap("tribunal", "report", "--json", cwd=repo.root).out)
    assert got["effective_rungs"] == {"value": 1.0, "jurors": ["a"], "constant": ["q"],
                                      "why": None}


def test_one_past_run_gives_no_effective_figure_in_the_summary(repo: Repo) -> None:
    once: list[int | None] = [0, *([None] * (N - 1))]
    write_history(repo.root, {"r1": ("fa", "defect", once), "r2": ("fb", "telemetry", once)})
    generalist = ["generalist", "operator_safety"]
    others = ["deep_state", "fast_structural"]
    with JurorServer("openai", detailed_pass) as server:
        repo.config([rung("r1", "openai", server.url, family="fa", tiers=generalist),
                     rung("r2", "openai", server.url, family="fb", tiers=others)])
        result = repo.convene()
    summary = _summary(repo, result.info.run_id).independence
    assert summary is not None
    assert summary.effective_jurors is None, summary
    assert result.independence == (
        "effective independent jurors: unmeasured (r1 voted on 1 envelope(s), fewer than 5)",)


def test_a_ledger_with_no_verdict_gives_no_effective_figure(repo: Repo) -> None:
    got = json.loads(leap("tribunal", "report", "--json", cwd=repo.root).out)
    for key in ("effective_rungs", "effective_families"):
        assert got[key]["value"] is None, got[key]
        assert got[key]["why"] == "no recorded verdict"
    text = leap("tribunal", "report", cwd=repo.root).out
    assert "effective independent rungs: unmeasured (no recorded verdict)" in text
