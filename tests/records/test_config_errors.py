"""Issue 14 item 11: an unknown field is named with a "did you mean", together with any
missing field, and every problem of a config or a slice draft is reported at once: one line
each (file, field, rule id), the documented exit code 2, nothing written."""

from __future__ import annotations

from pathlib import Path

from tests.slices.drafts import DELETE, base_draft, with_ball, write
from tests.support import leap_inproc, ref

BAD_INPUT = 2


def _lines(err: str) -> list[str]:
    return [line for line in err.strip().splitlines() if line.startswith("leap: ")]


def test_every_config_problem_is_named_at_once_with_a_close_match(
    repo: Path, tmp_path: Path
) -> None:
    assert leap_inproc("init", cwd=repo).code == 0
    before = ref(repo, "leap/ledger")
    (repo / ".leap" / "config.yaml").write_text(
        "version: 1\nspine: main\nledger_ref: refs/heads/main\n"
        "round_limt: 3\n"                      # a typo of round_limit
        "builder:\n  comand: ./build.sh\n"     # a typo inside a section
        "worktrees:\n  root: ''\n"             # a bad value beside them
        "tribunal:\n  timeout: -1\n")          # and one more in another section
    draft = write(tmp_path / "d.yaml", base_draft())
    result = leap_inproc("slice", "cut", str(draft), cwd=repo)
    assert result.code == BAD_INPUT, result
    assert "Traceback" not in result.err
    lines = _lines(result.err)
    assert ("leap: .leap/config.yaml: round_limt: unknown field [config]; "
            "did you mean `round_limit`?") in lines, lines
    assert ("leap: .leap/config.yaml: builder.comand: unknown field [config]; "
            "did you mean `command`?") in lines, lines
    assert any(line.startswith("leap: .leap/config.yaml: worktrees.root: ")
               and line.endswith("[config]") for line in lines), lines
    assert any(line.startswith("leap: .leap/config.yaml: tribunal.timeout: ")
               and "[config]" in line for line in lines), lines
    # the rule a schema cannot say, in the same report
    assert any("ledger_ref: the ledger cannot live on the spine branch [config]" in line
               for line in lines), lines
    assert len(lines) == 5, lines
    assert ref(repo, "leap/ledger") == before  # nothing half-written
    assert "s1" not in leap_inproc("log", cwd=repo).out


def test_an_unknown_field_without_a_close_match_lists_the_known_ones(repo: Path) -> None:
    assert leap_inproc("init", cwd=repo).code == 0
    (repo / ".leap" / "config.yaml").write_text(
        "version: 1\nspine: main\nledger_ref: refs/heads/leap/ledger\n"
        "worktrees:\n  zzz: 1\n")
    result = leap_inproc("status", cwd=repo)
    assert result.code == BAD_INPUT, result
    assert _lines(result.err) == [
        "leap: .leap/config.yaml: worktrees.zzz: unknown field [config]; "
        "known fields: root, setup"], result.err


def test_a_misspelt_ball_field_is_named_with_the_missing_one(repo: Path, tmp_path: Path) -> None:
    assert leap_inproc("init", cwd=repo).code == 0
    before = ref(repo, "leap/ledger")
    d = with_ball(0, goal=DELETE, gaol="one outcome")
    d["balls"][1]["sepc"] = "typo"          # a second ball's problems in the same report
    d["balls"][1]["proof"] = ""
    d["descripton"] = "top-level typo"
    path = write(tmp_path / "d.yaml", d)
    for command in ("check", "cut"):
        result = leap_inproc("slice", command, str(path), cwd=repo)
        assert result.code == BAD_INPUT, result
        lines = _lines(result.err)
        assert f"leap: {path}: balls[0]: missing required field(s): goal [L1]" in lines, lines
        assert (f"leap: {path}: balls[0].gaol: unknown field [L1]; did you mean `goal`?"
                in lines), lines
        assert (f"leap: {path}: balls[1].sepc: unknown field [L1]; did you mean `spec`?"
                in lines), lines
        assert any(line.startswith(f"leap: {path}: balls[1].proof: ") and "[L1]" in line
                   for line in lines), lines
        assert (f"leap: {path}: descripton: unknown field [L1]; did you mean `description`?"
                in lines), lines
        assert len(lines) == 5, lines
        assert ref(repo, "leap/ledger") == before


def test_every_tribunal_config_problem_is_named_at_once(repo: Path) -> None:
    assert leap_inproc("init", cwd=repo).code == 0
    (repo / ".leap" / "config.yaml").write_text(
        "version: 1\nspine: main\nledger_ref: refs/heads/main\n"
        "tribunal:\n  rungs:\n"
        "  - {id: r1, provider: command, family: f, tiers: [generalist], context_tokens: 9000,"
        " cost: 1, command: \"juror 'unclosed\"}\n"
        "  - {id: r2, provider: command, family: f, tiers: [generalist], context_tokens: 9000,"
        " cost: 1, command: juror}\n"
        "  - {id: r2, provider: command, family: f, tiers: [generalist], context_tokens: 9000,"
        " cost: 1, command: \"   \"}\n"
        "  verifiers:\n  - {lens: defect, rungs: [r1, ghost]}\n"
        "  tests:\n  - {source: 'src/*.py', tests: ['t/{base}.py', 't/{stem']}\n")
    result = leap_inproc("status", cwd=repo)
    assert result.code == BAD_INPUT, result
    lines = _lines(result.err)
    expected = [
        "ledger_ref: the ledger cannot live on the spine branch [config]",
        "tribunal.rungs[0].command: cannot be split into words",
        "tribunal.rungs[2].command: names no program",
        "tribunal.rungs[2].id: rung id 'r2' is used twice [T2]",
        "tribunal.verifiers[0].rungs: names unknown rung 'ghost' [T2]",
        "tribunal.tests[0].tests[0]: template 't/{base}.py': unknown placeholder 'base'",
        "tribunal.tests[0].tests[1]: template 't/{stem': cannot be filled",
    ]
    for text in expected:
        assert any(f".leap/config.yaml: {text}" in line for line in lines), (text, lines)
    assert len(lines) == len(expected), lines
    # each names its rule: the rungs' T2, the test mapping's T5 (a bad-input hunt: some
    # named none)
    rules = sorted(line.split(" [", 1)[1].split("]", 1)[0] if " [" in line else ""
                   for line in lines)
    assert rules == ["T2", "T2", "T2", "T2", "T5", "T5", "config"], lines


def test_a_config_that_is_a_dangling_symlink_is_named_not_read_as_the_defaults(
        repo: Path) -> None:
    """The dogfooding review: `.leap/config.yaml` as a symlink to a file that is gone ran
    every command on the defaults, exit 0, without a word."""
    assert leap_inproc("init", cwd=repo).code == 0
    config = repo / ".leap" / "config.yaml"
    config.unlink()
    config.symlink_to(repo / "elsewhere.yaml")
    said = leap_inproc("status", cwd=repo)
    assert said.code == 2, said
    assert said.err.startswith("leap: .leap/config.yaml: (file): is a symlink to "), said.err
    assert "[config]" in said.err and "`leap init`" in said.err, said.err
    config.unlink()  # "remove it and run `leap init`"
    assert leap_inproc("init", cwd=repo).code == 0
    assert leap_inproc("status", cwd=repo).code == 0


def test_a_config_folder_that_is_a_dangling_symlink_is_named_not_read_as_the_defaults(
        repo: Path) -> None:
    """The dogfooding review, left open: `.leap` itself as a symlink to a folder that is
    gone read as no config, and every command ran on the defaults."""
    folder = repo / ".leap"
    folder.symlink_to(repo / "gone")
    said = leap_inproc("status", cwd=repo)
    assert said.code == 2, said
    assert said.err.startswith("leap: .leap: (file): is a symlink to "), said.err
    assert "[config]" in said.err and "remove it and run `leap init`" in said.err, said.err
    folder.unlink()  # the hint, exactly
    assert leap_inproc("init", cwd=repo).code == 0
    assert leap_inproc("status", cwd=repo).code == 0


def test_a_config_folder_that_is_a_file_is_named_not_read_as_the_defaults(
        repo: Path) -> None:
    """A blind review: `.leap` as a file (or a link to one) read as no config, and every
    command ran on the defaults."""
    (repo / ".leap").write_text("spine: trunk\n")
    said = leap_inproc("status", cwd=repo)
    assert said.code == 2, said
    assert said.err.startswith("leap: .leap: (file): is not a folder"), said.err
    assert "[config]" in said.err and "move it aside and run `leap init`" in said.err, said.err
    (repo / ".leap").rename(repo / "leap-aside")  # the hint, exactly
    assert leap_inproc("init", cwd=repo).code == 0
    assert leap_inproc("status", cwd=repo).code == 0


def test_a_rung_missing_a_field_is_not_sent_to_leap_init(repo: Path) -> None:
    """A blind review: the "move the file aside and run `leap init`" hint of a config that
    lacks version, spine and ledger_ref was given to a rung's missing field too, which
    `leap init`'s config does not hold either."""
    assert leap_inproc("init", cwd=repo).code == 0
    config = repo / ".leap" / "config.yaml"
    config.write_text(config.read_text().replace(
        "  rungs: []", "  rungs:\n    - {id: r, provider: openai, model: m, "
        "endpoint: 'http://127.0.0.1:9', family: f, tiers: [generalist], "
        "context_tokens: 1000}"))
    said = leap_inproc("status", cwd=repo)
    assert said.code == 2 and "tribunal.rungs[0]: missing required field(s): cost" \
        in said.err, said
    assert "leap init" not in said.err, said.err
