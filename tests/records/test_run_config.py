"""Issue 15 item 9: ``run.max_usd`` in `.leap/config.yaml`, the spend `leap run` stops
before; a bad value is one line naming the file, the field and the rule, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from leapgit.records.config import load_config
from tests.support import leap_inproc

BAD_INPUT = 2
HEAD = "version: 1\nspine: main\nledger_ref: refs/heads/leap/ledger\n"


def _lines(err: str) -> list[str]:
    return [line for line in err.strip().splitlines() if line.startswith("leap: ")]


def test_max_usd_is_read_into_the_config(repo: Path) -> None:
    assert leap_inproc("init", cwd=repo).code == 0
    (repo / ".leap" / "config.yaml").write_text(HEAD + "run:\n  max_usd: 2.5\n")
    assert load_config(repo).run_max_usd == 2.5
    (repo / ".leap" / "config.yaml").write_text(HEAD + "run:\n  max_usd: 3\n")
    assert load_config(repo).run_max_usd == 3.0
    (repo / ".leap" / "config.yaml").write_text(HEAD)
    assert load_config(repo).run_max_usd is None  # no cap unless one is declared
    assert leap_inproc("status", cwd=repo).code == 0


@pytest.mark.parametrize("value,why", [
    ("0", "must be bigger than 0"),
    ("-1", "must be bigger than 0"),
    ("ten", "must be number"),
    ("[1]", "must be number"),
])
def test_a_bad_max_usd_is_one_line_naming_file_field_and_rule(
        repo: Path, value: str, why: str) -> None:
    assert leap_inproc("init", cwd=repo).code == 0
    (repo / ".leap" / "config.yaml").write_text(HEAD + f"run:\n  max_usd: {value}\n")
    result = leap_inproc("status", cwd=repo)
    assert result.code == BAD_INPUT, result
    assert "Traceback" not in result.err
    assert _lines(result.err) == [f"leap: .leap/config.yaml: run.max_usd: {why} [config]"]


def test_a_misspelt_run_field_is_named_with_a_close_match(repo: Path) -> None:
    assert leap_inproc("init", cwd=repo).code == 0
    (repo / ".leap" / "config.yaml").write_text(HEAD + "run:\n  max_ud: 1\n")
    result = leap_inproc("status", cwd=repo)
    assert result.code == BAD_INPUT, result
    assert _lines(result.err) == ["leap: .leap/config.yaml: run.max_ud: unknown field "
                                  "[config]; did you mean `max_usd`?"]
