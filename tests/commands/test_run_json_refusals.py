"""`leap run --json` is read by an orchestrating agent from stdout. A refusal before the run
starts (bad input, a folder that is no repository, a remote that is not there) wrote only
stderr, and the agent read nothing; each is a `stop` then an `end` event, valid against the
schema, with the exit code the process exits with."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from leapgit.errors import InvalidRecord, Problem
from leapgit.loop.events import Events, stop_fields
from leapgit.records.schema import validate
from tests.support import leap, make_repo


@pytest.mark.parametrize("where", ["no-repository", "no-such-remote", "unknown-slice"])
def test_a_refusal_before_the_run_is_a_stop_and_an_end_on_stdout(tmp_path: Path,
                                                                  where: str) -> None:
    if where == "no-repository":
        folder = tmp_path / "plain"
        folder.mkdir()
        args = ["run", "s1", "--json"]
    else:
        folder = make_repo(tmp_path / "work", {"README.md": "# x\n"})
        assert leap("init", cwd=folder).code == 0
        args = ["run", "s1", "--json"] + (["--remote", "nosuch"] if where == "no-such-remote"
                                          else [])
    res = leap(*args, cwd=folder)
    assert res.code != 0 and res.err, res
    said = [json.loads(line) for line in res.out.splitlines() if line.startswith("{")]
    assert [e["event"] for e in said] == ["stop", "end"], res
    for event in said:
        validate(event, "run-event", "leap run --json")
        assert event["exit_code"] == res.code, (event, res)
    assert said[0]["reason"] and said[0]["reason"] in res.err, (said, res.err)


def test_bad_input_in_two_fields_reaches_the_agent_whole_with_file_and_field(
        tmp_path: Path) -> None:
    """Bad input names the file, the field and the rule (the brief), on stdout too: the
    stop said "must be smaller than or equal to 4" alone (no file, no field), and only the
    first of the config's two problems, which stderr names both."""
    folder = make_repo(tmp_path / "work", {"README.md": "# x\n"})
    assert leap("init", cwd=folder).code == 0
    config = folder / ".leap" / "config.yaml"
    config.write_text(config.read_text().replace("round_limit: 4", "round_limit: 9")
                      .replace("  # timeout: 1800", "  timeout: -5"))
    res = leap("run", "s1", "--json", cwd=folder)
    assert res.code == 2, res
    said = [json.loads(line) for line in res.out.splitlines() if line.startswith("{")]
    assert [e["event"] for e in said] == ["stop", "end"], res
    for event in said:
        validate(event, "run-event", "leap run --json")
    stop = said[0]
    assert stop["reason"] == (".leap/config.yaml: round_limit: must be smaller than or "
                              "equal to 4"), stop
    assert stop["rule"] == "config", stop
    assert [(p["file"], p["field"], p["rule"]) for p in stop["problems"]] == [
        (".leap/config.yaml", "round_limit", "config"),
        (".leap/config.yaml", "builder.timeout", "config")], stop
    for problem in stop["problems"]:  # each as stderr says it
        assert f"leap: {problem['line']}" in res.err.splitlines(), (problem, res.err)


def test_a_stop_with_several_problems_reads_as_lines_for_a_person() -> None:
    """A blind review: without --json the stop line printed `problems=line: ..., message:
    ...` after its reason. A person gets the first problem as the reason and each further
    one on a line of its own; the JSON carries them all."""
    error = InvalidRecord(problems=[
        Problem("must be smaller than or equal to 4", "c.yaml", "round_limit", "config"),
        Problem("must be bigger than 0", "c.yaml", "builder.timeout", "config")])
    out = io.StringIO()
    Events(out, "s1").emit("stop", "a", 0, **stop_fields(error, "build: "))
    first, *rest = out.getvalue().splitlines()
    assert "problems=" not in first and "build: c.yaml: round_limit: must be smaller" in first
    assert rest == ["            also: c.yaml: builder.timeout: must be bigger than 0 [config]"]
    out = io.StringIO()
    Events(out, "s1", as_json=True).emit("stop", "a", 0, **stop_fields(error))
    said = json.loads(out.getvalue())
    validate(said, "run-event", "leap run --json")
    assert [p["field"] for p in said["problems"]] == ["round_limit", "builder.timeout"]


def test_a_log_event_carries_its_line() -> None:
    """A blind review: a `log` event with no `line` validated, and a person's renderer
    printed an empty line for it."""
    out = io.StringIO()
    Events(out, "s1", as_json=True).emit("log", "a", 0, line="the branch was put back")
    validate(json.loads(out.getvalue()), "run-event", "leap run --json")
    with pytest.raises(InvalidRecord, match="line"):
        validate({"event": "log", "slice": "s1", "elapsed": 0.1, "at": "2026-12-07T00:00:00Z"},
                 "run-event", "leap run --json")
