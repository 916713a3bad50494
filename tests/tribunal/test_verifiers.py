"""T2 verifiers (UNVERIFIED, HALT), T3 single rung, T6 last-holder unload, seat order."""

from __future__ import annotations

import pytest

from tests.support import commit_all, free_port, write_files
from tests.tribunal.conftest import HEAD_FILES, Repo, rung
from tests.tribunal.jurors import JurorServer, Reply, load, verdict


def test_optional_verifier_down_marks_unverified(repo: Repo) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    with JurorServer("openai") as primary:
        repo.config([rung("main", "openai", primary.url, cost=0),
                     rung("check", "anthropic", dead, tiers=["deep_state"], cost=3)],
                    verifiers=[{"lens": "defect", "rungs": ["check"]}])
        result = repo.convene()
    defect = next(r for r in result.results if r.lens == "defect")
    assert defect.unverified and defect.outcome == "pass" and "[UNVERIFIED]" in defect.reason
    assert load(result.out / "summary.yaml")["unverified"] == ["defect"]
    assert load(result.out / "verdicts" / "defect.yaml")["unverified"] is True
    assert result.decision.outcome == "pass"  # the primary stands on its own evidence


def test_optional_verifier_down_with_bare_primaries_holds(repo: Repo) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    with JurorServer("openai", lambda c: Reply(verdict(c.lens or "?"))) as primary:
        repo.config([rung("main", "openai", primary.url, cost=0),
                     rung("check", "anthropic", dead, tiers=["deep_state"], cost=3)],
                    verifiers=[{"lens": "defect", "rungs": ["check"]}])
        result = repo.convene()
    assert result.decision.outcome == "hold"
    assert next(r for r in result.results if r.lens == "defect").unverified


def test_required_verifier_with_no_rung_halts_before_dispatch(repo: Repo) -> None:
    with JurorServer("openai") as primary:
        repo.config([rung("main", "openai", primary.url),
                     rung("check", "anthropic", primary.url, family="buildfam")],
                    verifiers=[{"lens": "telemetry", "rungs": ["check"]}],
                    required_verifiers=["telemetry"])
        result = repo.convene()
        assert primary.calls == []
    assert result.decision.halted and result.decision.exit_code == 3
    assert "HALT: required verifier missing for telemetry (T2)" == result.decision.reason


def test_required_verifier_unreachable_halts(repo: Repo) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    with JurorServer("openai") as primary:
        repo.config([rung("main", "openai", primary.url, cost=0),
                     rung("check", "anthropic", dead, tiers=["deep_state"], cost=3)],
                    verifiers=[{"lens": "defect", "rungs": ["check"], "required": True}])
        result = repo.convene()
    assert result.decision.halted and result.decision.outcome == "hold"


def test_verifier_refuse_outweighs_a_bare_primary_pass(repo: Repo) -> None:
    def refuse(call):  # type: ignore[no-untyped-def]
        return Reply(verdict(call.lens, "refuse", [{"severity": "minor", "file": "src/calc.py",
                                                    "claim": "no zero check",
                                                    "evidence": "return a / b"}]))
    with JurorServer("openai", lambda c: Reply(verdict(c.lens or "?"))) as bare, \
            JurorServer("anthropic", refuse) as detailed:
        repo.config([rung("bare", "openai", bare.url, cost=0),
                     rung("detailed", "anthropic", detailed.url, tiers=["deep_state"], cost=3)],
                    verifiers=[{"lens": "defect", "rungs": ["detailed"]}])
        result = repo.convene()
    defect = next(r for r in result.results if r.lens == "defect")
    assert defect.outcome == "refuse" and defect.reason.startswith("verifier refused")
    assert defect.verifier and defect.verifier.verdict.findings[0].supported


def test_single_rung_is_recorded(repo: Repo) -> None:
    with JurorServer("ollama") as server:
        repo.config([rung("solo", "ollama", server.url)])
        result = repo.convene()
    assert load(result.out / "routing.yaml")["single_rung"] is True
    assert load(result.out / "summary.yaml")["single_rung"] is True
    assert any("single-rung configuration" in line for line in repo.lines)


def test_ollama_request_and_last_holder_unload(repo: Repo) -> None:
    with JurorServer("ollama") as a, JurorServer("ollama") as b:
        repo.config([rung("a", "ollama", a.url, tiers=["generalist"]),
                     rung("b", "ollama", b.url,
                          tiers=["operator_safety", "deep_state", "fast_structural"])])
        repo.convene()
    for server, chats in ((a, 2), (b, 6)):
        assert len(server.chats()) == chats
        unloads = [c for c in server.calls if not c.body.get("messages")]
        assert len(unloads) == 1 and unloads[0].body["keep_alive"] == 0
        assert server.calls[-1] is unloads[0]  # only after every holder is done
    body = a.chats()[0].body
    assert body["stream"] is False and body["truncate"] is False
    assert body["format"]["properties"]["lens"]["enum"] == [a.chats()[0].lens]
    assert 1024 <= body["options"]["num_ctx"] <= 100000


def test_ollama_num_ctx_holds_a_long_envelope_and_its_answer(repo: Repo) -> None:
    # T8: past Ollama's default of 4,096 tokens, num_ctx is sized to the prompt estimate
    # (3 chars a token, the cautious end) plus the answer budget; never the default
    long = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(1200))
    write_files(repo.root, {"src/calc.py": HEAD_FILES["src/calc.py"] + long})
    head = commit_all(repo.root, "long")
    with JurorServer("ollama") as server:
        repo.config([rung("big", "ollama", server.url, context_tokens=200000,
                          max_output_tokens=3000)])
        result = repo.convene(head=head)
        chats = server.chats()
    assert len(chats) == 8 and {r.outcome for r in result.results} == {"pass"}
    for call in chats:
        system, user = (m["content"] for m in call.body["messages"])
        estimate = len(f"{system}\n\n{user}") // 3 + 1
        assert estimate > 4096, estimate
        assert call.body["options"]["num_ctx"] >= estimate + 3000, (call.lens, estimate)


def test_seats_run_concurrently(repo: Repo) -> None:
    import time

    with JurorServer("openai", lambda c: Reply(verdict(c.lens or "?", "pass", [
            {"severity": "info", "file": "", "claim": "ok", "evidence": ""}]), delay=0.6)) as s:
        repo.config([rung("r1", "openai", s.url)])
        started = time.monotonic()
        repo.convene()
        # serial seats would take 8 x 0.6 s; concurrent ones about 0.6 s (loose for loaded CI)
        assert time.monotonic() - started < 0.6 * 8 * 0.75


@pytest.mark.parametrize("verifier_rung", ["shared", "twin"])
@pytest.mark.parametrize("required", [True, False])
def test_verifier_on_the_primarys_seated_route_counts_as_missing(
        repo: Repo, verifier_rung: str, required: bool) -> None:
    # the primary's first rung never answers, so it walks on to the rung the verifier sits
    # on (by id, or a twin: the same model on the same endpoint): no verifier agreed
    dead = f"http://127.0.0.1:{free_port()}"
    with JurorServer("openai") as shared:
        repo.config([rung("first", "openai", dead, cost=0),
                     rung("shared", "openai", shared.url, model="m-1", cost=1),
                     rung("twin", "openai", shared.url + "/", model="M-1", cost=2,
                          tiers=["fast_structural"])],
                    verifiers=[{"lens": "defect", "rungs": [verifier_rung],
                                "required": required}])
        result = repo.convene()
    defect = next(r for r in result.results if r.lens == "defect")
    assert defect.primary.rung is not None and defect.primary.rung.id == "shared"
    assert defect.verifier is not None and defect.verifier.outcome == "hold"
    assert "not independent" in defect.verifier.reason
    assert "verifier agreed" not in defect.reason
    if required:
        assert defect.halted and result.decision.halted and result.decision.exit_code == 3
    else:
        assert defect.unverified and "[UNVERIFIED]" in defect.reason
        assert load(result.out / "summary.yaml")["unverified"] == ["defect"]


def test_verifier_never_plans_on_a_twin_of_the_primarys_first_rung(repo: Repo) -> None:
    with JurorServer("openai") as server:
        repo.config([rung("main", "openai", server.url, model="m-1", cost=0),
                     rung("twin", "openai", server.url, model="m-1", cost=5)],
                    verifiers=[{"lens": "defect", "rungs": ["twin"]}])
        result = repo.convene()
    plan = result.routing.plan("defect")
    assert plan.verifier is not None and plan.verifier.rungs == ()
    defect = next(r for r in result.results if r.lens == "defect")
    assert defect.unverified


@pytest.mark.parametrize("other", [{"api_key_env": "LEAP_TEST_UNSET_KEY"},
                                   {"family": "buildfam"}])
def test_single_rung_counts_the_rungs_that_may_sit(repo: Repo, other: dict[str, str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # T3: two rungs configured, but only one can sit (T4 or a missing key): single-rung
    monkeypatch.delenv("LEAP_TEST_UNSET_KEY", raising=False)
    with JurorServer("openai") as server:
        repo.config([rung("solo", "openai", server.url),
                     rung("other", "openai", server.url, cost=0, **other)])
        result = repo.convene()
    assert result.routing.single_rung
    assert load(result.out / "summary.yaml")["single_rung"] is True
    assert any("single-rung configuration" in line for line in repo.lines)


def test_two_rungs_that_may_sit_are_not_single(repo: Repo) -> None:
    with JurorServer("openai") as a, JurorServer("openai") as b:
        repo.config([rung("a", "openai", a.url), rung("b", "openai", b.url, cost=0)],
                    verifiers=[{"lens": "defect", "rungs": ["a"]}])
        result = repo.convene()
    assert not result.routing.single_rung
