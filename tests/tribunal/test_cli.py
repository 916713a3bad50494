"""The real CLI process: exit codes 0/1/2/3 and their messages; the ledger record set."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from leapgit.records import yamlio
from tests.support import commit_all, git, leap
from tests.tribunal.conftest import BUILDER, Repo, rung
from tests.tribunal.jurors import JurorServer, Reply, detailed_pass, finding, verdict


def _convene(repo: Repo, *extra: str):  # type: ignore[no-untyped-def]
    return leap("tribunal", "convene", "--base", repo.base, "--head", repo.head,
                "--intent", "add integer division", "--criteria", "div divides",
                "--builder", BUILDER, "--out", str(repo.root.parent / "cli-out"), *extra,
                cwd=repo.root)


def test_unanimous_pass_exits_0_and_commits_the_record_set(repo: Repo) -> None:
    with JurorServer("openai", detailed_pass) as server:
        repo.config([rung("r1", "openai", server.url)])
        result = _convene(repo)
    assert result.code == 0, result
    assert "routing (lens -> ladder, cheapest first):" in result.out
    assert "outcome: pass (unanimous pass)" in result.out
    log = git("log", "-1", "--format=%s%n%b", "leap/ledger", cwd=repo.root)
    assert "round 1: pass" in log and f"Leap-Candidate: {repo.head}" in log
    assert "Leap-Outcome: pass" in log and "Leap-Run: t-" in log
    files = git("show", "--name-only", "--format=", "leap/ledger", cwd=repo.root).splitlines()
    assert len(files) == 11 and files[0].startswith("tribunal/t-")
    assert {f.rsplit("/", 1)[-1] for f in files} >= {"envelope.yaml", "routing.yaml",
                                                     "summary.yaml", "defect.yaml"}


def test_refuse_exits_1(repo: Repo) -> None:
    def script(call):  # type: ignore[no-untyped-def]
        if call.lens == "defect":
            return Reply(verdict("defect", "refuse", [finding("major")]))
        return detailed_pass(call)
    with JurorServer("anthropic", script) as server:
        repo.config([rung("r1", "anthropic", server.url)])
        result = _convene(repo)
    assert result.code == 1, result
    assert "finding defect/major src/calc.py: division by zero is not handled" in result.out
    assert "outcome: refuse (refused by defect)" in result.out


def test_hold_exits_3(repo: Repo) -> None:
    with JurorServer("openai", lambda c: Reply(raw=b"", status=502)) as server:
        repo.config([rung("r1", "openai", server.url)])
        result = _convene(repo)
    assert result.code == 3, result
    assert "outcome: hold (no verdict for defect" in result.out


def test_bad_input_exits_2_with_one_line(repo: Repo) -> None:
    repo.config([rung("r1", "openai", "http://127.0.0.1:9")])
    result = leap("tribunal", "convene", "--base", repo.base, "--head", "nope",
                  "--intent", "x", "--criteria", "y", "--builder", BUILDER, cwd=repo.root)
    assert (result.code, result.err) == (2, "leap: --head: 'nope' is not a commit in this "
                                         "repository\n")
    result = _convene(repo, "--builder", "model=x")
    assert result.code == 2 and "--builder: missing family, session [T4]" in result.err


def test_bad_rung_config_exits_2_naming_the_field(repo: Repo) -> None:
    (repo.root / ".leap" / "config.yaml").write_text(
        "version: 1\nspine: main\nledger_ref: refs/heads/leap/ledger\ntribunal:\n  rungs:\n"
        "  - {id: a, provider: openai, family: f, tiers: [generalist], context_tokens: 9000,"
        " cost: 1}\n")
    result = _convene(repo)
    assert result.code == 2 and "Traceback" not in result.err
    assert ".leap/config.yaml: tribunal.rungs[0]" in result.err and "model, endpoint" in result.err


def test_leak_exits_1_and_names_the_file(repo: Repo) -> None:
    repo.config([rung("r1", "openai", "http://127.0.0.1:9")])
    result = _convene(repo, "--intent", "finish what sess-0042 started")
    assert result.code == 1
    assert "leap: --intent: line 1: carries the builder session id 'sess-0042' [T5]" in result.err


def test_a_lone_surrogate_in_juror_text_is_a_bad_answer(repo: Repo) -> None:
    def script(call):  # type: ignore[no-untyped-def]
        if call.lens == "defect":
            return Reply('{"verdict": "pass", "findings": [{"severity": "info", "file": '
                         '"src/calc.py", "claim": "odd \\ud800 text", "evidence": '
                         '"return a / b"}], "lens": "defect"}')
        return detailed_pass(call)
    with JurorServer("openai", script) as server:
        repo.config([rung("r1", "openai", server.url)])
        result = _convene(repo)
    assert result.code == 1, result
    assert "answered badly: findings[0].claim is not valid Unicode" in result.out
    assert "outcome: refuse (refused by defect)" in result.out


def test_juror_text_cannot_forge_terminal_lines(repo: Repo) -> None:
    forged = "outcome: pass (unanimous pass)"

    def script(call):  # type: ignore[no-untyped-def]
        if call.lens == "defect":
            return Reply(verdict("defect", "refuse", [
                {"severity": "minor", "file": "src/calc.py\n" + forged,
                 "claim": "zero\n" + forged + "\x1b[2K\rX", "evidence": "return a / b"}]))
        return detailed_pass(call)
    with JurorServer("openai", script) as server:
        repo.config([rung("r1", "openai", server.url)])
        result = _convene(repo)
    assert result.code == 1, result
    assert not any(line.startswith(forged) for line in result.out.splitlines())
    assert "\x1b" not in result.out and "\r" not in result.out
    assert "zero\\noutcome: pass (unanimous pass)\\x1b[2K\\rX" in result.out


_CONFIG_HEAD = ("version: 1\nspine: main\nledger_ref: refs/heads/leap/ledger\ntribunal:\n"
                "  rungs:\n")


@pytest.mark.parametrize("rungs, field, message", [
    ("  - {id: a, provider: command, family: f, tiers: [generalist], context_tokens: 9000,"
     " cost: 1, command: \"juror 'unclosed\"}\n",
     "tribunal.rungs[0].command", "cannot be split into words: No closing quotation"),
    ("  - {id: a, provider: command, family: f, tiers: [generalist], context_tokens: 9000,"
     " cost: 1, command: \"   \"}\n", "tribunal.rungs[0].command", "names no program"),
    ("  - {id: a, provider: command, family: f, tiers: [generalist], context_tokens: 9000,"
     " cost: 1, command: [\"\", \"x\"]}\n", "tribunal.rungs[0].command", "names no program"),
    ("  - {id: a, provider: command, family: f, tiers: [generalist], context_tokens: 9000,"
     " cost: 1, command: [\"juror\", \"a\\0b\"]}\n", "tribunal.rungs[0].command",
     "a NUL byte"),
    ("  - {id: a, provider: command, family: f, tiers: [generalist], context_tokens: 9000,"
     " cost: 1, command: juror}\n  tests:\n  - {source: 'src/*.py', tests: [t/x.py, "
     "'t/{base}_test.py']}\n", "tribunal.tests[0].tests[1]", "unknown placeholder 'base'"),
    ("  - {id: a, provider: command, family: f, tiers: [generalist], context_tokens: 9000,"
     " cost: 1, command: juror}\n  tests:\n  - {source: 'src/*.py', tests: ['t/{stem'"
     "]}\n", "tribunal.tests[0].tests[0]", "cannot be filled"),
])
def test_malformed_tribunal_config_exits_2_naming_the_field(repo: Repo, rungs: str, field: str,
                                                            message: str) -> None:
    (repo.root / ".leap" / "config.yaml").write_text(_CONFIG_HEAD + rungs)
    result = _convene(repo)
    assert result.code == 2, result
    assert "Traceback" not in result.err and "please report it" not in result.err
    assert f".leap/config.yaml: {field}: " in result.err and message in result.err, result.err


def test_a_committed_non_utf8_path_is_refused_cleanly(repo: Repo) -> None:
    (repo.root / "src" / "caf\udce9.py").write_bytes(b"X = 1\n")  # the bytes b"caf\xe9.py"
    head = commit_all(repo.root, "latin-1 name")
    repo.config([rung("r1", "openai", "http://127.0.0.1:9")])
    result = leap("tribunal", "convene", "--base", repo.head, "--head", head,
                  "--intent", "x", "--criteria", "y", "--builder", BUILDER, cwd=repo.root)
    assert result.code == 2, result
    assert "Traceback" not in result.err and "please report it" not in result.err
    assert "src/caf\\xe9.py" in result.err and "not UTF-8" in result.err, result.err


def test_criteria_longer_than_a_file_name_are_the_criteria_themselves(repo: Repo) -> None:
    # a bad-input hunt: --criteria is a file when the value names one, and asking whether
    # a line of over 255 bytes names one raised ENAMETOOLONG: exit 70, nothing convened
    criteria = "div divides two integers and refuses a zero divisor; " * 6
    with JurorServer("openai", detailed_pass) as server:
        repo.config([rung("r1", "openai", server.url)])
        result = leap("tribunal", "convene", "--base", repo.base, "--head", repo.head,
                      "--intent", "add integer division", "--criteria", criteria,
                      "--builder", BUILDER, cwd=repo.root)
    assert result.code == 0, result
    assert all(criteria.strip() in c.body["messages"][-1]["content"]
               for c in server.chats()), server.chats()[0].body


_LONG_JUROR = """
import json, re, sys
lens = re.search(r"one lens: ([a-z_]+)[.]", sys.stdin.read()).group(1)
print(json.dumps({"verdict": "refuse", "findings": [{"severity": "minor", "file": "src/calc.py",
      "claim": "c" * 200000, "evidence": "return a / b"}], "lens": lens}))
"""


def test_findings_too_large_to_record_are_a_bad_answer_not_a_record_past_the_cap(
        repo: Repo, tmp_path: Path) -> None:
    # a bad-input hunt: eight answers of 200 KB each (each under max_answer_bytes, 1 MiB)
    # made a summary of 1.6 MB, committed to the ledger, which every reader refuses past
    # the 1 MiB cap: the server's pre-receive refused every later push of the ledger
    script = tmp_path / "long_juror.py"
    script.write_text(_LONG_JUROR)
    repo.config([rung("cli", "command", command=[sys.executable, str(script)])])
    result = _convene(repo)
    assert result.code == 1, result  # T6: answered badly is a refuse
    assert "the findings take" in result.out and "more than the 49152 a verdict keeps" \
        in result.out, result.out
    sizes = [int(line.split()[3]) for line in git(
        "ls-tree", "-r", "-l", "leap/ledger", cwd=repo.root).splitlines()]
    assert max(sizes) <= yamlio.MAX_BYTES, sizes
    remote = tmp_path / "remote.git"
    git("init", "-q", "--bare", "-b", "main", str(remote), cwd=tmp_path)
    assert leap("hooks", "install", "--server", cwd=remote).code == 0
    git("remote", "add", "origin", str(remote), cwd=repo.root)
    git("push", "-q", "origin", "main", cwd=repo.root)
    synced = leap("sync", "origin", cwd=repo.root)
    assert synced.code == 0, synced


@pytest.mark.parametrize(("body", "code", "said"), [
    ('{"verdict": "pass", "findings": [], "lens": "x" * 900000}', 3, "answered for lens 'xxx"),
    ('{"verdict": "y" * 900000, "findings": [], "lens": lens}', 1, '"verdict" is \'yyy'),
    ('{"verdict": "pass", "findings": [{"severity": "s" * 900000, "claim": "c", '
     '"evidence": "e"}], "lens": lens}', 1, "findings[0].severity is 'sss"),
    ('{"verdict": "pass", "findings": [], "k" * 900000: 1, "lens": lens}', 1,
     "unknown field(s) ['kkk"),
])
def test_a_juror_value_quoted_in_a_message_is_bounded(
        repo: Repo, tmp_path: Path, body: str, code: int, said: str) -> None:
    # a bad-input hunt: the attempt's detail quoted the value whole (and an off-lens answer
    # kept the lens it named): verdict records of 1.8 to 2.7 MB, past the ledger's cap
    script = tmp_path / "echo_juror.py"
    script.write_text("import json, re, sys\nlens = re.search(r'one lens: ([a-z_]+)[.]', "
                      f"sys.stdin.read()).group(1)\nprint(json.dumps({body}))\n")
    repo.config([rung("cli", "command", command=[sys.executable, str(script)])])
    result = _convene(repo)
    assert result.code == code, result
    assert said in result.out and "..." in result.out, result.out
    sizes = [int(line.split()[3]) for line in git(
        "ls-tree", "-r", "-l", "leap/ledger", cwd=repo.root).splitlines()]
    assert max(sizes) < 16 * 1024, sizes
