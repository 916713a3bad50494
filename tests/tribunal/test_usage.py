"""Issue 15 item 9: every verdict records what its provider reported it charged (Ollama
``prompt_eval_count``/``eval_count``, OpenAI ``usage.prompt_tokens``/``completion_tokens``,
Anthropic ``usage.input_tokens``/``output_tokens``), priced at the rung's declared
``usd_per_mtok_in``/``usd_per_mtok_out``; a command rung reports none, recorded as
unmeasured, never as 0 tokens measured; the summary sums every verdict."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from leapgit.records.tribunal_run import SummaryRecord, VerdictRecord
from tests.tribunal.conftest import Repo, command_rung, rung
from tests.tribunal.jurors import Call, JurorServer, Reply, detailed_pass, finding, load, verdict


def lens_records(repo: Repo) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    out = repo.root.parent / "out"
    verdicts = [load(p) for p in sorted((out / "verdicts").glob("*.yaml"))]
    return verdicts, load(out / "summary.yaml")


def numbered(call: Call) -> Reply:
    """A detailed pass whose reply reports counts of its own per lens."""
    n = len(call.lens or "")
    return Reply(verdict(call.lens or "?", "pass", [finding("info", "fine")]),
                 usage=(1000 + n, 40 + n))


@pytest.mark.parametrize("provider", ["ollama", "openai", "anthropic"])
def test_each_verdict_records_its_providers_usage_and_the_summary_sums_them(
        repo: Repo, provider: str) -> None:
    script = detailed_pass if provider == "ollama" else numbered  # ollama: counts read whole
    with JurorServer(provider, script) as server:
        repo.config([rung("r1", provider, server.url)])
        repo.convene()
    verdicts, summary = lens_records(repo)
    assert len(server.sent) == len(verdicts) == 8
    for v in verdicts:
        call = v["seat"]["attempts"][0]["usage"]
        assert call["usd"] is None  # no price declared: unknown, never 0
        assert (call["tokens_in"], call["tokens_out"]) in server.sent
        assert v["usage"] == {**call}
    tokens_in, tokens_out = server.spent()
    assert summary["usage"] == {"tokens_in": tokens_in, "tokens_out": tokens_out, "usd": None}
    assert tokens_in > 8 * 100 and tokens_out > 0


def test_declared_prices_give_each_verdict_its_cost(repo: Repo) -> None:
    with JurorServer("openai", numbered) as server:
        repo.config([rung("r1", "openai", server.url, usd_per_mtok_in=3,
                          usd_per_mtok_out=15)])
        repo.convene()
    verdicts, summary = lens_records(repo)
    for v in verdicts:
        u = v["usage"]
        assert u["usd"] == pytest.approx((u["tokens_in"] * 3 + u["tokens_out"] * 15) / 1e6)
        assert v["seat"]["attempts"][0]["usage"]["usd"] == u["usd"]
    tokens_in, tokens_out = server.spent()
    assert summary["usage"]["usd"] == pytest.approx((tokens_in * 3 + tokens_out * 15) / 1e6)
    assert summary["usage"]["usd"] > 0


def test_one_price_missing_leaves_the_cost_unknown(repo: Repo) -> None:
    with JurorServer("anthropic", numbered) as server:
        repo.config([rung("r1", "anthropic", server.url, usd_per_mtok_in=3)])
        repo.convene()
    verdicts, summary = lens_records(repo)
    assert {v["usage"]["usd"] for v in verdicts} == {None}
    assert summary["usage"]["usd"] is None
    assert (summary["usage"]["tokens_in"], summary["usage"]["tokens_out"]) == server.spent()


def test_a_command_rung_reports_no_usage_recorded_as_unmeasured(
        repo: Repo, tmp_path: Path) -> None:
    repo.config([command_rung(tmp_path, "pass", usd_per_mtok_in=1, usd_per_mtok_out=1)])
    repo.convene()
    verdicts, summary = lens_records(repo)
    for v in verdicts:
        assert "usage" not in v["seat"]["attempts"][0]  # absent, not 0 tokens
        assert v["usage"] == {"tokens_in": 0, "tokens_out": 0, "usd": None, "unmeasured": 1}
    assert summary["usage"] == {"tokens_in": 0, "tokens_out": 0, "usd": None,
                                "unmeasured": 8}


def test_a_reply_without_usage_is_unmeasured_and_its_cost_unknown(repo: Repo) -> None:
    def script(call: Call) -> Reply:
        reply = numbered(call)
        reply.usage = None if call.lens == "defect" else reply.usage
        return reply

    with JurorServer("openai", script) as server:
        repo.config([rung("r1", "openai", server.url, usd_per_mtok_in=1,
                          usd_per_mtok_out=2)])
        repo.convene()
    verdicts, summary = lens_records(repo)
    defect = next(v for v in verdicts if v["lens"] == "defect")
    assert "usage" not in defect["seat"]["attempts"][0]
    assert defect["usage"] == {"tokens_in": 0, "tokens_out": 0, "usd": None, "unmeasured": 1}
    tokens_in, tokens_out = server.spent()  # the seven replies that reported counts
    assert summary["usage"] == {"tokens_in": tokens_in, "tokens_out": tokens_out, "usd": None,
                                "unmeasured": 1}


def test_every_rung_a_seat_walked_is_paid_for(repo: Repo) -> None:
    # an off-lens answer spent tokens too: the verdict sums both calls of its ladder
    off = lambda c: Reply(verdict("proportion", "pass", [finding("info")]),  # noqa: E731
                          usage=(700, 7))
    with JurorServer("openai", off) as cheap, JurorServer("anthropic", numbered) as dear:
        repo.config([rung("cheap", "openai", cheap.url, cost=1, usd_per_mtok_in=1,
                          usd_per_mtok_out=1),
                     rung("dear", "anthropic", dear.url, cost=5, usd_per_mtok_in=10,
                          usd_per_mtok_out=10)])
        repo.convene()
    verdicts, summary = lens_records(repo)
    defect = next(v for v in verdicts if v["lens"] == "defect")
    first, second = defect["seat"]["attempts"]
    assert first["result"] == "off_lens" and first["usage"]["tokens_in"] == 700
    assert first["usage"]["usd"] == pytest.approx(707 / 1e6)
    assert defect["usage"]["tokens_in"] == 700 + second["usage"]["tokens_in"]
    assert defect["usage"]["usd"] == pytest.approx(first["usage"]["usd"]
                                                   + second["usage"]["usd"])
    spent_in = cheap.spent()[0] + dear.spent()[0]
    assert summary["usage"]["tokens_in"] == spent_in


def test_usage_reads_back_typed(repo: Repo) -> None:
    with JurorServer("openai", numbered) as server:
        repo.config([rung("r1", "openai", server.url, usd_per_mtok_in=2, usd_per_mtok_out=4)])
        repo.convene()
    _, raw = lens_records(repo)
    summary = SummaryRecord.from_dict(raw)
    assert summary.usage is not None and summary.usage.to_dict() == raw["usage"]
    one = load(repo.root.parent / "out" / "verdicts" / "defect.yaml")
    typed = VerdictRecord.from_dict(one)
    assert typed.usage is not None and typed.seat.attempts[0].usage == typed.usage
    assert typed.to_dict() == one


def test_a_convening_that_sent_nothing_records_a_known_zero(repo: Repo) -> None:
    # T2: a HALT before dispatch sent no prompt; its summary says nothing was spent (a
    # known 0), so a slice's spend stays known; its verdicts made no call to record
    with JurorServer("openai") as primary:
        repo.config([rung("main", "openai", primary.url),
                     rung("check", "anthropic", primary.url, family="buildfam")],
                    verifiers=[{"lens": "telemetry", "rungs": ["check"]}],
                    required_verifiers=["telemetry"])
        result = repo.convene()
        assert primary.calls == []
    assert result.decision.halted
    verdicts, summary = lens_records(repo)
    assert not any("usage" in v for v in verdicts)
    assert summary["usage"] == {"tokens_in": 0, "tokens_out": 0, "usd": 0.0}


def test_a_seat_that_never_answered_reported_nothing_and_is_not_counted(repo: Repo) -> None:
    with JurorServer("openai", lambda c: Reply(raw=b"down", status=503)) as down, \
            JurorServer("openai", numbered) as up:
        repo.config([rung("down", "openai", down.url, cost=0, usd_per_mtok_in=1,
                          usd_per_mtok_out=1),
                     rung("up", "openai", up.url, cost=2, usd_per_mtok_in=1,
                          usd_per_mtok_out=1)])
        repo.convene()
    verdicts, summary = lens_records(repo)
    for v in verdicts:
        first, second = v["seat"]["attempts"]
        assert first["result"] == "never_answered" and "usage" not in first
        assert v["usage"] == second["usage"]
    tokens_in, tokens_out = up.spent()
    assert summary["usage"] == {"tokens_in": tokens_in, "tokens_out": tokens_out,
                                "usd": pytest.approx((tokens_in + tokens_out) / 1e6)}


def test_the_convene_command_prints_what_the_seats_spent(repo: Repo) -> None:
    from tests.support import leap
    from tests.tribunal.conftest import BUILDER

    with JurorServer("openai", numbered) as server:
        repo.config([rung("r1", "openai", server.url, usd_per_mtok_in=2, usd_per_mtok_out=8)])
        result = leap("tribunal", "convene", "--base", repo.base, "--head", repo.head,
                      "--intent", "add integer division", "--criteria", "div divides",
                      "--builder", BUILDER, "--out", str(repo.root.parent / "cli-out"),
                      cwd=repo.root)
    assert result.code == 0, result
    tokens_in, tokens_out = server.spent()
    usd = (tokens_in * 2 + tokens_out * 8) / 1e6
    assert f"spent on jurors: {tokens_in} in, {tokens_out} out, ${usd:.6f}" in \
        result.out.splitlines()
