"""The misbehaviour corpus (T6, T8): every way a juror can answer wrongly or not at all, each
with its exact outcome; none of them is ever a pass."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support import free_port
from tests.tribunal.conftest import Repo, command_rung, rung
from tests.tribunal.jurors import Call, JurorServer, Reply, detailed_pass, finding, load, verdict

Script = Callable[[Call], Reply]


def on_defect(reply: Callable[[Call], Reply]) -> Script:
    """``reply`` for the defect lens; a detailed pass everywhere else."""
    return lambda call: reply(call) if call.lens == "defect" else detailed_pass(call)


def half_read(call: Call) -> int:
    """Half of the cautious token estimate (3 chars a token) of the prompt the server got."""
    chars = sum(len(m["content"]) for m in call.body["messages"]) + 2
    return chars // 3 // 2


def convene_one(repo: Repo, provider: str, script: Script, **rung_extra: object):
    with JurorServer(provider, script) as server:
        repo.config([rung("r1", provider, server.url, **rung_extra)])
        result = repo.convene()
    return result, next(r for r in result.results if r.lens == "defect"), server


DEEP = "[" * 100000 + "]" * 100000  # past the JSON decoder's recursion limit

CASES: list[tuple[str, str, Script, str, str, str]] = [
    # id, provider, script, defect outcome, attempt result, reason fragment
    ("garbage", "openai", on_defect(lambda c: Reply("%%% not json at all")),
     "refuse", "bad_answer", "not one bare JSON object"),
    ("prose-around-json", "openai",
     on_defect(lambda c: Reply("Sure! Here it is: " + verdict("defect") + " Hope it helps.")),
     "refuse", "bad_answer", "prose"),
    ("refusal-text", "ollama", on_defect(lambda c: Reply("I'm sorry, I can't help with that.")),
     "refuse", "bad_answer", "not one bare JSON object"),
    ("code-fence", "anthropic",
     on_defect(lambda c: Reply("```json\n" + verdict("defect") + "\n```")),
     "refuse", "bad_answer", "code fence"),
    ("pass-with-blocker", "openai",
     on_defect(lambda c: Reply(verdict("defect", "pass", [finding("blocker")]))),
     "refuse", "answered", "lists a blocker finding"),
    ("pass-with-major", "anthropic",
     on_defect(lambda c: Reply(verdict("defect", "pass", [finding("major")]))),
     "refuse", "answered", "lists a major finding"),
    ("duplicate-keys", "openai",
     on_defect(lambda c: Reply('{"verdict": "refuse", "verdict": "pass", "findings": [], '
                               '"lens": "defect"}')),
     "refuse", "bad_answer", "not valid JSON"),
    ("unknown-severity", "ollama",
     on_defect(lambda c: Reply(verdict("defect", "pass", [finding("trivial")]))),
     "refuse", "bad_answer", "severity"),
    ("all-off-lens", "openai", on_defect(lambda c: Reply(verdict("telemetry"))),
     "hold", "off_lens", "every rung answered off-lens"),
    ("placeholder-lens", "anthropic", on_defect(lambda c: Reply(verdict("<lens>"))),
     "hold", "off_lens", "every rung answered off-lens"),
    ("truncated-prompt", "ollama",
     on_defect(lambda c: Reply(verdict("defect"), prompt_eval_count=50)),
     "hold", "capacity", "no rung gave a verdict"),
    ("half-read-prompt", "ollama",
     on_defect(lambda c: Reply(verdict("defect"), prompt_eval_count=half_read(c))),
     "hold", "capacity", "no rung gave a verdict"),
    ("no-prompt-eval-count", "ollama",
     on_defect(lambda c: Reply(verdict("defect"), prompt_eval_count=None)),
     "hold", "capacity", "no rung gave a verdict"),
    ("ollama-400-too-long", "ollama",
     on_defect(lambda c: Reply(raw=b'{"error": "input length exceeds the context length"}',
                               status=400)),
     "hold", "capacity", "no rung gave a verdict"),
    # T8 (issue 17 item 5): a budget spent with no usable output is a failed seat, walk on
    ("finish-length", "openai", on_defect(lambda c: Reply("", finish="length")),
     "hold", "exhausted", "no rung gave a verdict (1 tried: exhausted)"),
    ("finish-length-cut-json", "openai",
     on_defect(lambda c: Reply('{"verdict": "pass", "findi', finish="length")),
     "hold", "exhausted", "no rung gave a verdict (1 tried: exhausted)"),
    ("ollama-done-length", "ollama", on_defect(lambda c: Reply("", finish="length")),
     "hold", "exhausted", "no rung gave a verdict (1 tried: exhausted)"),
    ("footer-not-last", "openai",
     on_defect(lambda c: Reply('{"lens": "defect", "verdict": "pass", "findings": []}')),
     "refuse", "bad_answer", 'the "lens" footer is not the last field'),
    ("openai-refusal", "openai", on_defect(lambda c: Reply(None, refusal="I can't review this")),
     "refuse", "bad_answer", "refusal"),
    ("anthropic-max-tokens", "anthropic", on_defect(lambda c: Reply("", finish="max_tokens")),
     "hold", "exhausted", "no rung gave a verdict (1 tried: exhausted)"),
    ("anthropic-refusal", "anthropic", on_defect(lambda c: Reply("no", finish="refusal")),
     "refuse", "bad_answer", "stop_reason refusal"),
    ("anthropic-context-window", "anthropic",
     on_defect(lambda c: Reply("", finish="model_context_window_exceeded")),
     "hold", "capacity", "no rung gave a verdict"),
    ("http-500", "openai", on_defect(lambda c: Reply(raw=b"boom", status=500)),
     "hold", "never_answered", "no rung gave a verdict"),
    ("http-401", "anthropic", on_defect(lambda c: Reply(raw=b'{"error": "auth"}', status=401)),
     "hold", "never_answered", "no rung gave a verdict"),
    ("timeout", "ollama", on_defect(lambda c: Reply(verdict("defect"), delay=2.5)),
     "hold", "never_answered", "no rung gave a verdict"),
    ("slow-trickle", "openai", on_defect(lambda c: Reply(trickle=0.2)),
     "hold", "never_answered", "no rung gave a verdict"),
    ("endless-body", "openai", on_defect(lambda c: Reply(endless=True)),
     "refuse", "bad_answer", "answer larger than"),
    ("oversized-10mb", "anthropic", on_defect(lambda c: Reply(raw=b"x" * (10 << 20))),
     "refuse", "bad_answer", "answer larger than"),
    ("deeply-nested-answer", "openai",
     on_defect(lambda c: Reply('{"verdict": "pass", "findings": ' + DEEP + ', "lens": '
                               '"defect"}')),
     "refuse", "bad_answer", "not valid JSON"),
    ("deeply-nested-reply", "anthropic", on_defect(lambda c: Reply(raw=('{"x": ' + DEEP +
                                                                        '}').encode())),
     "refuse", "bad_answer", "reply is not JSON"),
    ("server-reply-not-json", "ollama", on_defect(lambda c: Reply(raw=b"<html>oops</html>")),
     "refuse", "bad_answer", "reply is not JSON"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_misbehaviour(repo: Repo, case: tuple[str, str, Script, str, str, str]) -> None:
    _, provider, script, outcome, attempt, reason = case
    result, defect, _ = convene_one(repo, provider, script, timeout=1.5)
    assert defect.outcome == outcome, defect.reason
    assert defect.primary.attempts[-1].result == attempt
    assert reason in defect.reason
    assert result.decision.outcome == outcome  # every other lens passed in detail
    assert result.decision.outcome != "pass"


def test_connection_refused_holds(repo: Repo) -> None:
    repo.config([rung("gone", "openai", f"http://127.0.0.1:{free_port()}")])
    result = repo.convene()
    assert {r.outcome for r in result.results} == {"hold"}
    assert result.results[0].primary.attempts[0].result == "never_answered"
    assert "ConnectError" in result.results[0].primary.attempts[0].detail
    assert result.decision.exit_code == 3


def test_wrong_lens_then_right_lens_on_the_next_rung(repo: Repo) -> None:
    off = on_defect(lambda c: Reply(verdict("proportion", "pass", [finding("info")])))
    right = on_defect(lambda c: Reply(verdict("defect", "refuse", [finding("major")])))
    with JurorServer("openai", off) as cheap, JurorServer("anthropic", right) as dear:
        repo.config([rung("cheap", "openai", cheap.url, cost=1),
                     rung("dear", "anthropic", dear.url, cost=5)])
        result = repo.convene()
    defect = next(r for r in result.results if r.lens == "defect")
    first, second = defect.primary.attempts
    assert (first.rung, first.result, first.answered_lens) == ("cheap", "off_lens", "proportion")
    assert first.raw_tail and '"lens": "proportion"' in first.raw_tail
    assert (second.rung, second.result) == ("dear", "answered")
    assert defect.outcome == "refuse" and defect.primary.rung.id == "dear"
    assert result.decision.outcome == "refuse"


def test_500_is_reseated_from_the_ladder(repo: Repo) -> None:
    with JurorServer("openai", lambda c: Reply(raw=b"down", status=503)) as down, \
            JurorServer("ollama") as up:
        repo.config([rung("down", "openai", down.url, cost=0),
                     rung("up", "ollama", up.url, cost=2)])
        result = repo.convene()
    for r in result.results:
        assert [a.result for a in r.primary.attempts] == ["never_answered", "answered"]
        assert r.primary.rung.id == "up"


def test_bare_passes_only_hold(repo: Repo) -> None:
    with JurorServer("openai", lambda c: Reply(verdict(c.lens or "?"))) as server:
        repo.config([rung("r1", "openai", server.url)])
        result = repo.convene()
    assert all(r.outcome == "pass" and r.bare for r in result.results)
    assert result.decision.outcome == "hold"
    assert "every pass is bare" in result.decision.reason


@pytest.mark.parametrize("evidence", ["", "a quote from no file in the envelope"])
def test_passes_with_only_unsupported_findings_are_bare(repo: Repo, evidence: str) -> None:
    # T6: a finding whose evidence is not in the envelope is no evidence: the pass is bare
    def script(call: Call) -> Reply:
        return Reply(verdict(call.lens or "?", "pass", [finding("info", "ok", evidence)]))
    with JurorServer("openai", script) as server:
        repo.config([rung("r1", "openai", server.url)])
        result = repo.convene()
    assert all(r.outcome == "pass" and r.bare for r in result.results)
    assert result.decision.outcome == "hold"
    assert "every pass is bare" in result.decision.reason
    assert load(result.out / "verdicts" / "defect.yaml")["bare"] is True


def test_bare_passes_never_outvote_a_detailed_refuse(repo: Repo) -> None:
    def script(call: Call) -> Reply:
        if call.lens == "defect":
            return Reply(verdict("defect", "refuse", [finding("minor")]))
        return Reply(verdict(call.lens or "?"))
    with JurorServer("openai", script) as server:
        repo.config([rung("r1", "openai", server.url)])
        result = repo.convene()
    assert sum(1 for r in result.results if r.bare) == 7
    assert result.decision.outcome == "refuse"
    assert result.decision.reason == "refused by defect"


def test_builder_family_as_the_only_rung_holds_and_sends_nothing(repo: Repo) -> None:
    with JurorServer("openai") as server:
        repo.config([rung("mine", "openai", server.url, family="BuildFam")])
        result = repo.convene()
        assert server.calls == []  # T4: refused before any dispatch
    assert all(r.outcome == "hold" for r in result.results)
    assert "never falls back to the builder" in result.results[0].reason
    skip = result.routing.plans[0].primary.skipped[0]
    assert skip.kind == "builder" and "builder's family" in skip.reason
    assert any("skip mine: family 'BuildFam' is the builder's family (T4)" in line
               for line in repo.lines)


def test_a_rung_resuming_the_builders_session_is_skipped_and_sends_nothing(repo: Repo) -> None:
    # T4: the builder's own session (declared sess-0042) never sits, however cheap; a rung
    # with another session does
    with JurorServer("openai") as mine, JurorServer("openai") as fresh:
        repo.config([rung("mine", "openai", mine.url, session="sess-0042", cost=0),
                     rung("fresh", "openai", fresh.url, session="sess-9999", cost=1)])
        result = repo.convene()
        assert mine.calls == []  # refused before any dispatch
        assert len(fresh.chats()) == 8
    for plan in result.routing.plans:
        skip = plan.primary.skipped[0]
        assert (skip.rung, skip.kind) == ("mine", "builder")
        assert skip.reason == "resumes the builder's session (T4)"
    assert {r.primary.rung.id for r in result.results} == {"fresh"}
    assert any("skip mine: resumes the builder's session (T4)" in line for line in repo.lines)


@pytest.mark.parametrize("spelling", ["Builder-Model-7", "builder-model-7:latest",
                                      "acme/builder-model-7", "ACME/Builder-Model-7:q4_K_M"])
def test_the_builders_model_is_excluded_however_it_is_spelled(repo: Repo, spelling: str) -> None:
    # T4: the builder declared model=builder-model-7; another spelling is the same model
    with JurorServer("openai") as server:
        repo.config([rung("same", "openai", server.url, model=spelling)])
        result = repo.convene()
        assert server.calls == []
    skip = result.routing.plans[0].primary.skipped[0]
    assert skip.kind == "builder" and f"model {spelling!r} is the builder's model" in skip.reason
    assert all(r.outcome == "hold" for r in result.results)


def test_rung_too_small_is_skipped_and_recorded(repo: Repo) -> None:
    with JurorServer("ollama") as small, JurorServer("openai") as big:
        repo.config([rung("small", "ollama", small.url, context_tokens=600, cost=0),
                     rung("big", "openai", big.url, cost=9)])
        result = repo.convene()
        assert small.calls == []
    skipped = load(result.out / "routing.yaml")["lenses"][0]["skipped"]
    assert skipped[0]["rung"] == "small" and skipped[0]["kind"] == "capacity"
    assert "holds 600 (T6)" in skipped[0]["reason"]
    assert all(r.primary.rung.id == "big" for r in result.results)


def test_command_juror_misbehaviour(repo: Repo, tmp_path: Path) -> None:
    for mode, outcome, kind in (("garbage", "refuse", "bad_answer"),
                                ("fail", "hold", "never_answered"),
                                ("sleep", "hold", "never_answered"),
                                ("write", "hold", "annulled")):
        repo.config([command_rung(tmp_path, mode, timeout=1)])
        result = repo.convene()
        assert {r.outcome for r in result.results} == {outcome}, mode
        assert result.results[0].primary.attempts[0].result == kind, mode
        assert result.decision.outcome != "pass"


def test_command_juror_sees_a_plain_read_only_copy_and_an_allow_listed_env(
        repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # T5: no .git (no authors, trailers or ledger), no inherited secrets or session variables
    monkeypatch.setenv("JUROR_KEY", "k-juror")
    monkeypatch.setenv("OTHER_API_KEY", "k-other")
    monkeypatch.setenv("BUILDER_SESSION_ID", "sess-0042")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    repo.config([command_rung(tmp_path, "snoop", api_key_env="JUROR_KEY")])
    result = repo.convene()
    seat = result.results[0].primary
    assert seat.verdict is not None, seat.reason
    seen = json.loads(seat.verdict.findings[0].claim)
    assert seen["has_file"] and not seen["git"] and not seen["writable"]
    assert seen["log"] == ""  # not a repository: no author to read
    assert "JUROR_KEY" in seen["env"] and "LEAP_LENS" in seen["env"]
    allowed = {"PATH", "HOME", "LANG", "TMPDIR", "LEAP_LENS", "JUROR_KEY",
               "GIT_CEILING_DIRECTORIES"}
    assert {k for k in seen["env"] if not k.startswith("LC_")} <= allowed, seen["env"]


def test_a_loud_crash_keeps_a_bounded_tail_and_is_recorded(repo: Repo, tmp_path: Path) -> None:
    # T8: the raw tail of a juror that died shouting is bounded like every other tail
    repo.config([command_rung(tmp_path, "fail-loud")])
    result = repo.convene()
    attempt = result.results[0].primary.attempts[0]
    assert attempt.result == "never_answered" and attempt.detail == "exit 4"
    assert attempt.raw_tail is not None and 0 < len(attempt.raw_tail) <= 2000
    assert result.decision.outcome == "hold" and result.ledger_commit
    tails = load(result.out / "verdicts" / "defect.yaml")["seat"]["attempts"][0]["raw_tail"]
    assert tails == attempt.raw_tail


def test_the_one_tail_bound_is_the_schema_bound() -> None:
    from leapgit.tribunal.verdict import RAW_TAIL

    schema = json.loads((Path(__file__).parents[2] / "schemas" / "records" /
                         "verdict.schema.json").read_text())
    attempt = schema["properties"]["seat"]["properties"]["attempts"]["items"]
    assert attempt["properties"]["raw_tail"]["maxLength"] == RAW_TAIL


def test_an_exploding_seat_keeps_the_verdicts_paid_for(
        repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    # T6: an unexpected exception in one seat (no juror can cause one by answering, so the
    # provider is made to raise): the other verdicts, the failure per lens and the summary
    # are written and committed, then the convening holds
    from leapgit.tribunal.errors import TribunalHold
    from leapgit.tribunal.providers import openai
    from tests.support import git

    real = openai.ask

    async def exploding(rung, prompt, ctx):  # type: ignore[no-untyped-def]
        if prompt.lens == "defect":
            raise RuntimeError("boom")
        return await real(rung, prompt, ctx)
    monkeypatch.setattr(openai, "ask", exploding)
    with JurorServer("openai") as server:
        repo.config([rung("r1", "openai", server.url)])
        with pytest.raises(TribunalHold, match=r"the defect seat exploded: RuntimeError: boom "
                           r"\[T6\]; verdicts and summary are in .*out"):
            repo.convene()
        assert len(server.chats()) == 7  # every other seat was paid for
    out = repo.root.parent / "out"
    defect = load(out / "verdicts" / "defect.yaml")
    assert defect["outcome"] == "hold" and "seat exploded: RuntimeError: boom" in defect["reason"]
    others = [load(out / "verdicts" / f"{lens}.yaml") for lens in
              ("proportion", "telemetry", "boundary_condition")]
    assert all(v["outcome"] == "pass" and v["findings"] for v in others)
    summary = load(out / "summary.yaml")
    assert summary["outcome"] == "hold" and summary["lenses"]["defect"] == "hold"
    assert sum(1 for o in summary["lenses"].values() if o == "pass") == 7
    files = git("show", "--name-only", "--format=%s", "leap/ledger", cwd=repo.root).split()
    assert "hold" in files[:6] and any(f.endswith("verdicts/defect.yaml") for f in files)
    assert any(f.endswith("summary.yaml") for f in files)
