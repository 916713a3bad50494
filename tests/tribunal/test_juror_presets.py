"""Issue 17 item 2: a juror preset seated in a convening. A stand-in of its program on PATH
checks the exact argv, that the prompt arrives on stdin and what environment it gets (its
preset's switches, the lens, no other keys); a preset whose program is missing is refused
before any seat (T2)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from leapgit.errors import UsageError
from leapgit.records.presets import VERDICT_SCHEMA
from tests.standins import CLAUDE_JUROR_ACT, JUROR_ACT, calls, stand_in
from tests.tribunal.conftest import Repo, rung

JURORS = {  # preset -> (model, the argv after the program, the environment it must see)
    "llm": ("gpt-4o-mini", ["-m", "gpt-4o-mini", "--no-stream", "--no-log", "--schema",
                            VERDICT_SCHEMA], {}),
    "ollama": ("qwen3:8b", ["run", "qwen3:8b", "--format", "json"], {}),
    "claude": (None, ["-p", "--output-format", "json", "--json-schema", VERDICT_SCHEMA,
                      "--allowedTools", "Read,Grep,Glob",
                      "--disallowedTools", "Bash,Edit,Write,NotebookEdit,WebFetch,WebSearch"],
               {"DISABLE_AUTOUPDATER": "1"}),
}
ACTS = {"claude": CLAUDE_JUROR_ACT}  # its answer is Claude Code's JSON result object


def _preset_rung(rung_id: str, **extra: object) -> dict[str, object]:
    out = rung(rung_id, "command", command="unused", **extra)
    del out["command"]  # the preset is the command line
    return out


@pytest.mark.parametrize("name", sorted(JURORS))
def test_a_juror_preset_is_seated_with_its_exact_argv(repo: Repo, tmp_path: Path, name: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    model, argv, env = JURORS[name]
    bin_dir = tmp_path / "bin"
    log = stand_in(bin_dir, name, argv,
                   act=ACTS.get(name, JUROR_ACT), stdin_starts="Tribunal run ",
                   env={**env, "LEAP_LENS": None},
                   env_absent=("OPENAI_API_KEY", "GIT_DIR", "LEAP_HANDOFF"))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-jurors")
    extra = {"model": model} if model else {}
    repo.config([_preset_rung(f"{name}-rung", preset=name, **extra)])
    result = repo.convene()
    assert result.decision.outcome == "pass", repo.lines
    seen = calls(log)
    assert sorted(c["env"]["LEAP_LENS"] for c in seen) == sorted(r.lens for r in result.results)
    assert len(seen) == 8
    assert all("return a / b" in c["stdin"] for c in seen)  # the envelope, on stdin
    assert all(r.primary.rung is not None and r.primary.rung.id == f"{name}-rung"
               for r in result.results)


def test_a_juror_preset_whose_program_is_missing_sits_no_seat(
        repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    git_dir = os.path.dirname(os.popen("command -v git").read().strip())
    repo.config([_preset_rung("local", preset="ollama", model="qwen3:8b")])
    monkeypatch.setenv("PATH", f"{empty}{os.pathsep}{git_dir}")
    with pytest.raises(UsageError) as caught:
        repo.convene()
    assert str(caught.value) == (
        ".leap/config.yaml: tribunal.rungs[0].preset: preset 'ollama': its program 'ollama' "
        "is not on PATH; no seat sat [T2]; install ollama, or remove rung 'local'")
    assert not (repo.root.parent / "out").exists()  # nothing written, nothing sent


def _claude(repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, act: str,
            *fallback: dict[str, object]) -> None:
    """The claude juror preset's rung first (its stand-in acts ``act``), then ``fallback``."""
    bin_dir = tmp_path / "bin"
    stand_in(bin_dir, "claude", JURORS["claude"][1], act=act, stdin_starts="Tribunal run ")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    repo.config([_preset_rung("claude-cli", preset="claude", cost=0), *fallback])


def test_the_claude_jurors_verdict_and_usage_come_from_its_json_result(
        repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its input is counted whole: the uncached rest (4) and the cache's creation and reads
    (blind review: only the 4 were counted, so run.max_usd saw almost no spend)."""
    _claude(repo, tmp_path, monkeypatch, CLAUDE_JUROR_ACT)
    result = repo.convene()
    assert result.decision.outcome == "pass", repo.lines
    attempts = [a for r in result.results for a in r.primary.attempts]
    assert {a.result for a in attempts} == {"answered"}
    assert [(a.usage.tokens_in, a.usage.tokens_out) for a in attempts if a.usage] == \
        [(1200, 80)] * 8


@pytest.mark.parametrize(("old", "new"), [
    # --json-schema holds the fields, not their order: a structured verdict whose "lens"
    # came first is data leapgit writes out with the footer last (blind review: it was
    # refused as a footer out of place)
    ('verdict = {"verdict": "pass"', 'verdict = {"lens": lens, "verdict": "pass"'),
    # no structured_output: the result text is the verdict
    ('"result": "", "structured_output": verdict', '"result": json.dumps(verdict)'),
], ids=["lens-first", "result-text"])
def test_a_claude_result_in_another_honest_shape_passes(
        repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old: str, new: str
        ) -> None:
    act = CLAUDE_JUROR_ACT.replace(old, new)
    assert act != CLAUDE_JUROR_ACT
    _claude(repo, tmp_path, monkeypatch, act)
    assert repo.convene().decision.outcome == "pass", repo.lines


def test_a_claude_result_that_is_an_error_never_answered_and_the_next_rung_sits(
        repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """T6: is_error (a turn limit, an API error) is no verdict: a hold, re-seated."""
    act = CLAUDE_JUROR_ACT.replace('"subtype": "success", "is_error": False',
                                   '"subtype": "error_max_turns", "is_error": True')
    assert act != CLAUDE_JUROR_ACT
    stand_in(tmp_path / "bin", "llm", JURORS["llm"][1][2:], act=JUROR_ACT,
             stdin_starts="Tribunal run ")
    _claude(repo, tmp_path, monkeypatch, act, _preset_rung("llm-cli", preset="llm", cost=1))
    result = repo.convene()
    assert result.decision.outcome == "pass", repo.lines
    for lens in result.results:
        first, second = lens.primary.attempts
        assert (first.rung, first.result) == ("claude-cli", "never_answered"), first
        assert "claude reported an error ('error_max_turns')" in first.detail
        assert (second.rung, second.result) == ("llm-cli", "answered"), second


def test_claude_output_that_is_no_json_result_answered_badly(
        repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """T6: garbage counts as refuse, never a pass: here a bare verdict outside the result
    object the preset asked for."""
    _claude(repo, tmp_path, monkeypatch, JUROR_ACT)
    result = repo.convene()
    assert result.decision.outcome == "refuse", repo.lines
    attempts = [a for r in result.results for a in r.primary.attempts]
    assert {a.result for a in attempts} == {"bad_answer"}
    assert all("not Claude Code's JSON result object" in a.detail for a in attempts)
