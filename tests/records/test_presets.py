"""Issue 17 item 2: each builder preset's command line, run by the real builder runner
through `sh -c`, reaches a stand-in of its program with exactly the argv, stdin and
environment written here by hand; unknown or conflicting presets are bad config."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from leapgit.errors import InvalidRecord
from leapgit.records import presets, yamlio
from leapgit.records.config import parse_config
from leapgit.records.tribunal_config import Rung
from leapgit.worktrees.builder import Stop, run_builder
from tests.standins import BUILDER_ACT, calls, path_with, stand_in

PROMPT = (presets.BUILDER_PROMPT.replace("${LEAP_HANDOFF}", "@HANDOFF@")
          .replace("${LEAP_REPORT}", "@REPORT@"))
NO_GIT = "Bash(git commit:*),Bash(git push:*),Bash(git checkout:*),Bash(git switch:*)"

BUILDERS = {  # what each builder preset must run, written out by hand
    "claude": (["-p", PROMPT, "--output-format", "text", "--permission-mode", "acceptEdits",
                "--allowedTools", "Bash,Read,Edit,Write,Glob,Grep", "--disallowedTools",
                NO_GIT], {"DISABLE_AUTOUPDATER": "1"}),
    "codex": (["exec", "--full-auto", "--ephemeral", PROMPT], {}),
    "aider": (["--message", PROMPT, "--yes-always", "--no-auto-commits", "--no-dirty-commits",
               "--no-gitignore", "--map-tokens", "0", "--chat-history-file", "/dev/null",
               "--input-history-file", "/dev/null", "--no-check-update", "--no-analytics",
               "--no-pretty", "--no-stream", "src/a.py", "tests/a.sh"], {}),
    "gemini": (["-p", PROMPT, "--approval-mode", "yolo"], {}),
    "opencode": (["run", PROMPT], {}),
}
MODELS = {"claude": ["--model", "m-1"], "codex": ["-m", "m-1"], "aider": ["--model", "m-1"],
          "gemini": ["-m", "m-1"], "opencode": ["-m", "m-1"]}


def _round_env(tmp: Path, bin_dir: Path) -> dict[str, str]:
    private = tmp / "private"
    private.mkdir(exist_ok=True)
    return {"PATH": path_with(bin_dir), "HOME": str(tmp), "LEAP_HANDOFF": str(private / "h.yaml"),
            "LEAP_REPORT": str(private / "report.yaml"), "LEAP_SCOPE": "src/a.py\ntests/a.sh"}


def test_every_builder_and_juror_named_in_issue_17_has_a_preset() -> None:
    assert set(presets.names("builder")) == set(BUILDERS)
    assert set(presets.names("juror")) == {"llm", "ollama", "claude"}


@pytest.mark.parametrize("name", sorted(BUILDERS))
@pytest.mark.parametrize("model", [None, "m-1"])
def test_a_builder_preset_runs_exactly_its_documented_argv(tmp_path: Path, name: str,
                                                           model: str | None) -> None:
    argv, env = BUILDERS[name]
    if model:  # after the subcommand: `codex exec -m M`, `opencode run -m M`
        at = 1 if name in ("codex", "opencode") else 0
        argv = argv[:at] + MODELS[name] + argv[at:]
    program = presets.preset(name, "builder")
    assert program is not None
    bin_dir, tree = tmp_path / "bin", tmp_path / "tree"
    (tree / "src").mkdir(parents=True)
    log = stand_in(bin_dir, program.program, argv, act=BUILDER_ACT, env=env)
    ex = run_builder(program.command(model), tree, _round_env(tmp_path, bin_dir),
                     tmp_path / "round.log", 20, Stop())
    assert ex.code == 0, (tmp_path / "round.log").read_text()
    [call] = calls(log)
    assert call["stdin"] == ""  # the builder's stdin is /dev/null
    assert call["cwd"] == str(tree)
    assert (tree / "src" / "a.py").read_text() == "A = 2\n"


def _config(builder: dict[str, object]) -> bytes:
    return yamlio.dumps({"version": 1, "spine": "main", "ledger_ref": "refs/heads/leap/ledger",
                         "builder": builder})


def test_a_builder_preset_becomes_the_builder_command() -> None:
    config = parse_config(_config({"preset": "aider", "model": "m-1"}), ".leap/config.yaml")
    assert config.builder_preset == "aider"
    assert config.builder_command is not None
    assert config.builder_command.startswith("aider --model m-1 --message \"You build")
    assert config.builder_command.endswith(" $LEAP_SCOPE")


@pytest.mark.parametrize(("builder", "message"), [
    ({"preset": "vim"}, "builder.preset: unknown builder preset 'vim'"),
    ({"preset": "aider", "command": "x"}, "builder.preset: names both a preset and a command"),
])
def test_a_bad_builder_preset_is_named_with_field_and_rule(builder: dict[str, object],
                                                          message: str) -> None:
    with pytest.raises(InvalidRecord, match="config") as caught:
        parse_config(_config(builder), ".leap/config.yaml")
    assert message in str(caught.value)


def _rung(**extra: object) -> dict[str, object]:
    return {"id": "j", "provider": "command", "family": "f", "tiers": ["generalist"],
            "context_tokens": 1000, "cost": 0, **extra}


def test_a_juror_preset_expands_to_its_argv_and_environment() -> None:
    rung = Rung.from_dict(_rung(preset="ollama", model="qwen3:8b"), 5)
    assert rung.command == ("ollama", "run", "qwen3:8b", "--format", "json")
    claude = Rung.from_dict(_rung(preset="claude"), 5)
    assert claude.command[:6] == ("claude", "-p", "--output-format", "json", "--json-schema",
                                  presets.VERDICT_SCHEMA)
    assert claude.env == (("DISABLE_AUTOUPDATER", "1"),)
    assert (claude.reply, rung.reply) == ("claude-json", "bare")


@pytest.mark.parametrize(("extra", "message"), [
    ({"preset": "aider"}, "unknown juror preset 'aider'"),
    ({"preset": "ollama"}, "preset 'ollama' needs the rung's model"),
    ({"preset": "llm", "command": "llm"}, "names both a preset and a command"),
])
def test_a_bad_juror_preset_is_bad_config(extra: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidRecord, match=message):
        Rung.from_dict(_rung(**extra), 5)


def test_the_presets_listing_shows_each_expansion(tmp_path: Path) -> None:
    from tests.support import leap

    r = leap("presets", "--json", cwd=tmp_path)
    assert r.code == 0, r
    import json

    listed = {(p["kind"], p["name"]): p for p in json.loads(r.out)}
    assert listed[("juror", "ollama")]["expansion"] == "ollama run MODEL --format json"
    assert listed[("builder", "codex")]["expansion"].startswith(
        "codex exec --full-auto --ephemeral \"You build one leapgit ball.")
    text = leap("presets", cwd=tmp_path, env={"PATH": os.environ.get("PATH", "")})
    assert "juror claude  (rung: {provider: command, preset: claude}" in text.out


def test_the_readme_presets_table_is_the_table_leap_runs() -> None:
    from leapgit.commands.presets import expansion
    from tests.support import ROOT

    text = (ROOT / "README.md").read_text("utf-8")
    table = text.split("| name | kind | expansion | model |\n|---|---|---|---|\n", 1)[1]
    rows = table.split("\n\n", 1)[0].splitlines()
    wanted = []
    for p in presets.PRESETS:
        shown = expansion(p).replace(f'"{presets.BUILDER_PROMPT}"', '"$PROMPT"').replace(
            f"'{presets.VERDICT_SCHEMA}'", "'$VERDICT_SCHEMA'")
        flag = " ".join(w.format(model="MODEL") for w in p.model_flag)
        wanted.append(f"| `{p.name}` | {p.kind} | `{shown}` | `{flag}`"
                      f"{' (required)' if p.needs_model else ''} |")
    assert rows == wanted
