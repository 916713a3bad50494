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
from tests.standins import JUROR_ACT, calls, stand_in
from tests.tribunal.conftest import Repo, rung

JURORS = {  # preset -> (model, the argv after the program, the environment it must see)
    "llm": ("gpt-4o-mini", ["-m", "gpt-4o-mini", "--no-stream", "--no-log", "--schema",
                            VERDICT_SCHEMA], {}),
    "ollama": ("qwen3:8b", ["run", "qwen3:8b", "--format", "json"], {}),
    "claude": (None, ["-p", "--output-format", "text", "--allowedTools", "Read,Grep,Glob",
                      "--disallowedTools", "Bash,Edit,Write,NotebookEdit,WebFetch,WebSearch"],
               {"DISABLE_AUTOUPDATER": "1"}),
}


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
                   act=JUROR_ACT, stdin_starts="Tribunal run ", env={**env, "LEAP_LENS": None},
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
