"""Blind review (state/honest outcomes): T7 (7) in ``tribunal.tally`` says a claimed
mutant that did not survive its re-run is refuted ("``tribunal.mutants`` marks it
unsupported"), but nothing marks it so: a minor finding whose mutant the tests KILL keeps
``supported`` (its evidence is in the envelope) and turns a unanimous pass into a refuse,
and the builder is told to answer a claim the re-run refuted."""

from __future__ import annotations

from pathlib import Path

from leapgit.tribunal import tally
from tests.tribunal.conftest import Repo
from tests.tribunal.test_mutants import MUTANTS, _convene


def test_a_minor_finding_whose_mutant_was_killed_does_not_refuse_a_unanimous_pass(
        repo: Repo, tmp_path: Path) -> None:
    result, defect = _convene(repo, tmp_path, MUTANTS["killed"][0])
    assert defect.primary.verdict is not None
    [finding] = defect.primary.verdict.findings
    assert finding.rerun is not None and finding.rerun.status == "KILLED"  # refuted
    assert defect.outcome == "pass"  # the lens itself passes
    # (the fixture's base is green, so its mechanical checks refuse on their own: the
    # seats' tally is decided here as convene decides it, without those checks)
    decided = tally.decide(list(result.results))
    # the refuted claim must not stand as an open minor finding that refuses the pass
    assert decided.outcome != "refuse", decided


def test_end_to_end_a_killed_mutant_claim_leaves_a_green_unanimous_pass_a_pass(
        tmp_path: Path) -> None:
    """The same through a whole convening whose mechanical checks all pass (red, then
    green): the one finding is a minor mutant claim the re-run KILLED, every lens passes,
    and the convening passes: the claim was refuted (it refused on it before)."""
    import difflib
    import json

    from tests.support import commit_all, write_files
    from tests.tribunal.conftest import rung
    from tests.tribunal.jurors import Call, JurorServer, Reply, detailed_pass
    from tests.tribunal.test_mechanical import RUN, _repo

    root, base = _repo(tmp_path)
    write_files(root, {"tests/div.sh": "grep -q 'def div' src/calc.py\n"})
    red = commit_all(root, "red")
    green = "def div(a, b):\n    return a / b\n"
    write_files(root, {"src/calc.py": green})
    head = commit_all(root, "green")
    mutant = "".join(difflib.unified_diff(
        green.splitlines(True), green.replace("def div", "def dv").splitlines(True),
        "a/src/calc.py", "b/src/calc.py"))  # the grep test kills it

    def script(call: Call) -> Reply:
        if call.lens != "defect":
            return detailed_pass(call)
        return Reply(json.dumps({"verdict": "pass", "findings": [{
            "severity": "minor", "file": "src/calc.py", "claim": "div is not pinned down",
            "evidence": "return a / b", "mutant": mutant}], "lens": "defect"}))

    repo = Repo(root, base, head)
    with JurorServer("openai", script) as server:
        repo.config([rung("r1", "openai", server.url, response_format="none")],
                    test_timeout=10)
        result = repo.convene(tests=RUN, red=red)
    assert result.mechanical is not None
    assert [c.result for c in result.mechanical.checks] == ["ok"] * 4, result.mechanical
    defect = next(r for r in result.results if r.lens == "defect")
    assert defect.primary.verdict is not None
    [finding] = defect.primary.verdict.findings
    assert finding.rerun is not None and finding.rerun.status == "KILLED", finding.rerun
    assert all(r.outcome == "pass" for r in result.results)
    assert result.decision.outcome == "pass", result.decision
