"""Issue 17 item 4 (T9): a juror's claimed surviving mutant is re-run in an isolated tree of
the candidate under the test time cap. One that survives is confirmed (the lens refuses with
the evidence); one killed, one timing out, one whose patch does not apply, one that patches
a test and one that breaks collection each get their status and are reported as
unsupported; a red mutation-free baseline makes every verdict INVALID (exit 1)."""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

import pytest

from tests.tribunal.conftest import HEAD_FILES, Repo, rung
from tests.tribunal.jurors import Call, JurorServer, Reply, detailed_pass, load

CALC = HEAD_FILES["src/calc.py"]
RUNNER = """\
import sys
sys.path.insert(0, ".")
try:
    from src.calc import div
except Exception as exc:  # a collection error: not a kill
    print("collection error:", exc)
    sys.exit(2)
assert div(4, 2) == {want}, div(4, 2)
print("ok")
"""


def patch(path: str, old: str, new: str, text: str = CALC) -> str:
    after = text.replace(old, new)
    assert after != text
    return "".join(difflib.unified_diff(text.splitlines(True), after.splitlines(True),
                                        f"a/{path}", f"b/{path}"))


MUTANTS = {
    "survives": (patch("src/calc.py", "a / b", "a // b"), "SURVIVED"),
    "killed": (patch("src/calc.py", "a / b", "a * b"), "KILLED"),
    "times-out": (patch("src/calc.py", "    return a / b",
                        "    while True:\n        pass"), "INVALID"),
    "does-not-apply": (patch("src/calc.py", "a / b", "a - b").replace(
        "return a / b", "return b / a"), "INVALID"),
    "patches-a-test": (patch("tests/test_calc.py", "== 2", "== 2 or True",
                             HEAD_FILES["tests/test_calc.py"]), "INVALID"),
    "breaks-collection": (patch("src/calc.py", "return a / b", "return a /"), "INVALID"),
}
DETAILS = {"survives": "the mutant survives", "killed": "exit 1): killed",
           "times-out": "timed out after 3 s: a timeout is not a survivor",
           "does-not-apply": "the patch does not apply",
           "patches-a-test": "it patches tests/test_calc.py, not the candidate's own code",
           "breaks-collection": "exit 2: a collection or usage error is not a kill"}


def _claiming(mutant: str, said: str = "pass") -> object:
    def script(call: Call) -> Reply:
        if call.lens != "defect":
            return detailed_pass(call)
        import json
        return Reply(json.dumps({"verdict": said, "findings": [{
            "severity": "minor", "file": "src/calc.py", "claim": "div is not pinned down",
            "evidence": "return a / b", "mutant": mutant}], "lens": "defect"}))
    return script


def _tests(tmp: Path, want: int = 2) -> str:
    runner = tmp / "runner.py"
    runner.write_text(RUNNER.format(want=want))
    return f"{sys.executable} {runner}"


def _convene(repo: Repo, tmp: Path, mutant: str, said: str = "pass", want: int = 2):
    with JurorServer("openai", _claiming(mutant, said)) as server:  # type: ignore[arg-type]
        repo.config([rung("r1", "openai", server.url, response_format="none")],
                    test_timeout=3)
        result = repo.convene(tests=_tests(tmp, want))
    return result, next(r for r in result.results if r.lens == "defect")


@pytest.mark.parametrize("case", sorted(MUTANTS))
def test_a_claimed_mutant_is_rerun_and_gets_its_status(repo: Repo, tmp_path: Path,
                                                       case: str) -> None:
    mutant, status = MUTANTS[case]
    result, defect = _convene(repo, tmp_path, mutant)
    assert defect.primary.verdict is not None
    [finding] = defect.primary.verdict.findings
    assert finding.rerun is not None and finding.rerun.status == status, finding.rerun
    assert DETAILS[case] in finding.rerun.detail
    recorded = load(result.out / "verdicts" / "defect.yaml")["findings"][0]["mutant"]
    assert (recorded["status"], recorded["patch"]) == (status, mutant)
    summary = load(result.out / "summary.yaml")
    assert [f["mutant"]["status"] for f in summary["findings"] if "mutant" in f] == [status]
    if status == "SURVIVED":  # a confirmed survivor is a refuse with the evidence
        assert defect.outcome == "refuse"
        assert "a mutant survived: div is not pinned down" in defect.reason
        assert result.decision.outcome == "refuse" and result.decision.exit_code == 1
        assert any("mutant defect primary finding 1: SURVIVED (confirmed)" in line
                   for line in repo.lines)
    else:  # an unconfirmed claim is reported as unsupported; the verdict stands
        assert defect.outcome == "pass"
        assert f"unsupported mutant claim(s): {status}" in defect.reason
        assert any(f"mutant defect primary finding 1: {status} (unsupported)" in line
                   for line in repo.lines)


def test_a_red_baseline_makes_every_verdict_invalid(repo: Repo, tmp_path: Path) -> None:
    mutant, _ = MUTANTS["survives"]
    result, defect = _convene(repo, tmp_path, mutant, want=3)  # the candidate's tests fail
    assert result.decision.outcome == "refuse" and result.decision.exit_code == 1
    assert "INVALID" in result.decision.reason
    assert all(r.outcome == "refuse" and r.reason.startswith(
        "INVALID: the mutation-free baseline is not cleanly green (exit 1:")
        for r in result.results)
    assert defect.primary.verdict is not None
    assert defect.primary.verdict.findings[0].rerun is not None
    assert defect.primary.verdict.findings[0].rerun.status == "INVALID"
    checks = load(result.out / "summary.yaml")["mechanical"]["checks"]
    assert {"name": "mutation-free baseline is green", "result": "invalid"}.items() <= \
        next(c for c in checks if c["name"] == "mutation-free baseline is green").items()
    for lens in ("defect", "telemetry"):
        assert load(result.out / "verdicts" / f"{lens}.yaml")["reason"].startswith("INVALID")


def test_without_a_tests_command_a_claim_is_not_rerun_and_is_unsupported(
        repo: Repo, tmp_path: Path) -> None:
    with JurorServer("openai", _claiming(MUTANTS["survives"][0])) as server:  # type: ignore[arg-type]
        repo.config([rung("r1", "openai", server.url, response_format="none")])
        result = repo.convene()
    defect = next(r for r in result.results if r.lens == "defect")
    assert defect.primary.verdict is not None
    rerun = defect.primary.verdict.findings[0].rerun
    assert rerun is not None and rerun.status == "INVALID" and "--tests" in rerun.detail
    assert defect.outcome == "pass"
