"""Blind review (issue 17 item 2, lens correctness): a juror preset must *make* its CLI print
one bare JSON object (the issue's words), not only ask for it in the prompt. Each juror
preset's argv must carry its CLI's own switch that constrains the answer to JSON."""

from __future__ import annotations

import pytest

from leapgit.records import presets

# the CLI switches that hold an answer to JSON: llm's --schema, ollama's --format json,
# Claude Code's --json-schema
SWITCHES = (("--schema",), ("--format", "json"), ("--json-schema",))


def _held_to_json(argv: tuple[str, ...]) -> bool:
    return any(tuple(argv[i:i + len(s)]) == s for s in SWITCHES for i in range(len(argv)))


@pytest.mark.parametrize("name", [
    "llm", "ollama", "claude",  # claude: --json-schema, unwrapped from its JSON result
])
def test_a_juror_preset_holds_its_cli_to_json(name: str) -> None:
    found = presets.preset(name, "juror")
    assert found is not None
    assert _held_to_json(found.argv("m")), found.argv("m")
