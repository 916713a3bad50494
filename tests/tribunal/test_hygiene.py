"""Issue 17 item 5 (T8): protocol hygiene on the scripted servers. A reasoning model that
spent its output budget with no usable verdict (openai finish_reason length, anthropic
stop_reason max_tokens, ollama done_reason length) is a failed seat, recorded as such,
and the next rung sits; a verdict must end with the literal lens footer."""

from __future__ import annotations

import pytest

from tests.tribunal.conftest import Repo, rung
from tests.tribunal.jurors import Call, JurorServer, Reply, detailed_pass, finding, load, verdict

BUDGET_STOPS = [("openai", "length", ""), ("anthropic", "max_tokens", ""),
                ("ollama", "length", ""), ("openai", "length", '{"verdict": "refuse", "fin')]


@pytest.mark.parametrize(("provider", "stop", "text"), BUDGET_STOPS)
def test_a_spent_budget_is_a_failed_seat_and_the_next_rung_sits(
        repo: Repo, provider: str, stop: str, text: str) -> None:
    def spent(call: Call) -> Reply:
        return Reply(text, finish=stop, usage=(900, 4096))

    with JurorServer(provider, spent) as thinker, JurorServer("openai") as next_rung:
        repo.config([rung("thinker", provider, thinker.url, cost=0),
                     rung("plain", "openai", next_rung.url, cost=1)])
        result = repo.convene()
    assert result.decision.outcome == "pass"
    for lens in result.results:
        first, second = lens.primary.attempts
        assert (first.rung, first.result) == ("thinker", "exhausted")
        assert "the budget was spent, failed seat (T8)" in first.detail
        assert first.usage is not None and first.usage.tokens_out == 4096  # it was paid for
        assert (second.rung, second.result) == ("plain", "answered")
        assert lens.primary.rung is not None and lens.primary.rung.id == "plain"
    recorded = load(result.out / "verdicts" / "defect.yaml")
    assert recorded["seat"]["attempts"][0]["result"] == "exhausted"


def test_a_usable_verdict_cut_at_the_budget_still_counts(repo: Repo) -> None:
    def complete(call: Call) -> Reply:  # the whole verdict arrived, then the budget ran out
        return Reply(verdict(call.lens or "?", "refuse", [finding("minor")]), finish="length")

    with JurorServer("openai", complete) as server:
        repo.config([rung("r1", "openai", server.url)])
        result = repo.convene()
    assert {r.outcome for r in result.results} == {"refuse"}
    assert {r.primary.attempts[0].result for r in result.results} == {"answered"}


def test_a_verdict_that_does_not_end_with_its_footer_is_refused_with_the_reason(
        repo: Repo) -> None:
    def footer_first(call: Call) -> Reply:
        if call.lens != "defect":
            return detailed_pass(call)
        return Reply('{"lens": "defect", "verdict": "pass", "findings": [{"severity": "info",'
                     ' "file": "src/calc.py", "claim": "ok", "evidence": "return a / b"}]}')

    with JurorServer("anthropic", footer_first) as server:
        repo.config([rung("r1", "anthropic", server.url)])
        result = repo.convene()
    defect = next(r for r in result.results if r.lens == "defect")
    assert defect.outcome == "refuse"
    assert defect.primary.attempts[0].result == "bad_answer"
    assert 'the "lens" footer is not the last field (it ends with \'findings\')' in defect.reason
    assert result.decision.outcome == "refuse"
