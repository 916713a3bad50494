"""T7, T9: new/recurring/resolved per round; a three-round oscillation stops with an
escalation (hold) naming the oscillating finding."""

from __future__ import annotations

import pytest

from leapgit.tribunal.convergence import PastRound, fingerprint, flat_or_rising_twice, progress
from tests.support import commit_all, write_files
from tests.tribunal.conftest import Repo, rung
from tests.tribunal.jurors import Call, JurorServer, Reply, finding, verdict

CLAIM_A = "division by zero is not handled"
CLAIM_B = "add does not check its types"


def test_fingerprint_normalises_the_claim() -> None:
    assert fingerprint("defect", "a.py", "Division  by ZERO!") == \
        fingerprint("defect", "a.py", "division by zero")
    assert fingerprint("defect", "a.py", "x") != fingerprint("telemetry", "a.py", "x")


def test_flat_or_rising_two_rounds_in_a_row() -> None:
    assert flat_or_rising_twice([1, 1, 1]) and flat_or_rising_twice([3, 1, 2, 2])
    assert not flat_or_rising_twice([3, 2, 2]) and not flat_or_rising_twice([2, 2])


def test_progress_classifies_findings() -> None:
    past = [PastRound(1, frozenset({"a", "b"}), 2)]
    p = progress(["b", "c"], past, passed=False)
    assert (p.new, p.recurring, p.resolved) == (("c",), ("b",), ("a",))


def _script(claim: str):  # type: ignore[no-untyped-def]
    def script(call: Call) -> Reply:
        if call.lens == "defect":
            return Reply(verdict("defect", "refuse", [finding("major", claim, "return a / b")]))
        return Reply(verdict(call.lens or "?"))  # bare: only the defect findings count
    return script


def test_three_round_oscillation_escalates(repo: Repo) -> None:
    outcomes = []
    for round_no, claim in ((1, CLAIM_A), (2, CLAIM_B), (3, CLAIM_A)):
        code = f"def div(a, b):\n    return a / b\n# r{round_no}\n"
        write_files(repo.root, {"src/calc.py": code})
        head = commit_all(repo.root, f"round {round_no}")
        with JurorServer("openai", _script(claim)) as server:
            repo.config([rung("r1", "openai", server.url)])
            outcomes.append(repo.convene(head=head, round=round_no,
                                         out=repo.root.parent / f"out{round_no}"))
    first, second, third = outcomes
    assert first.decision.outcome == "refuse" and not first.decision.escalated
    assert second.decision.outcome == "refuse"
    assert (len(second.progress.new), len(second.progress.resolved)) == (1, 1)
    assert third.decision.escalated and third.decision.exit_code == 3, third.progress
    assert third.progress.new_counts == (1, 1, 1)
    oscillating = fingerprint("defect", "src/calc.py", CLAIM_A)
    assert third.progress.oscillating == (oscillating,)
    assert oscillating in third.decision.reason and "(T9)" in third.decision.reason


def test_falling_new_findings_do_not_escalate(repo: Repo) -> None:
    claims = [[CLAIM_A, CLAIM_B, "third"], [CLAIM_A, "fourth"], [CLAIM_A]]
    last = None
    for round_no, these in enumerate(claims, start=1):
        def script(call: Call, these: list[str] = these) -> Reply:
            if call.lens == "defect":
                return Reply(verdict("defect", "refuse",
                                     [finding("minor", c, "return a / b") for c in these]))
            return Reply(verdict(call.lens or "?"))
        with JurorServer("openai", script) as server:
            repo.config([rung("r1", "openai", server.url)])
            last = repo.convene(round=round_no, out=repo.root.parent / f"o{round_no}")
    assert last is not None and last.progress.new_counts == (3, 1, 0)
    assert not last.decision.escalated and last.decision.outcome == "refuse"


def test_escalation_keeps_the_halt(repo: Repo) -> None:
    # three HALTed rounds: no new findings (0, 0, 0) is flat, so the loop escalates; the
    # decision must still say HALT (T2 outranks all)
    results = []
    with JurorServer("openai") as server:
        repo.config([rung("main", "openai", server.url),
                     rung("check", "anthropic", server.url, family="buildfam")],
                    verifiers=[{"lens": "telemetry", "rungs": ["check"]}],
                    required_verifiers=["telemetry"])
        for round_no in (1, 2, 3):
            results.append(repo.convene(round=round_no, out=repo.root.parent / f"h{round_no}"))
    third = results[-1]
    assert third.decision.escalated and third.decision.halted, third.decision
    assert third.decision.reason.startswith("HALT: required verifier missing for telemetry")
    assert "escalation" in third.decision.reason
    from tests.tribunal.jurors import load

    summary = load(third.out / "summary.yaml")
    assert summary["halted"] is True and summary["escalated"] is True


def test_rounds_no_juror_answered_measure_nothing_and_never_escalate(repo: Repo) -> None:
    """T9 measures NEW findings per round; a round in which no juror gave a verdict (every
    seat out of reach: T6, hold and re-seat) measured none. Three such rounds held, never
    escalated (a dead-end hunt: a T9 escalation then blamed the spec); once the jurors
    answer, the rounds before count for nothing."""
    outcomes = []
    for round_no in (1, 2, 3):
        repo.config([rung("r1", "openai", "http://127.0.0.1:9")])  # nobody answers
        outcomes.append(repo.convene(round=round_no, out=repo.root.parent / f"d{round_no}"))
    assert [o.decision.outcome for o in outcomes] == ["hold"] * 3
    assert not any(o.decision.escalated for o in outcomes), [o.decision for o in outcomes]
    assert outcomes[-1].progress.new_counts == (0,)  # the rounds before measured nothing
    with JurorServer("openai") as server:
        repo.config([rung("r1", "openai", server.url)])
        answered = repo.convene(round=4, out=repo.root.parent / "d4")
    assert not answered.decision.escalated, answered.decision


def test_a_convening_that_held_on_a_seat_out_of_reach_is_sat_again_as_its_round(
        repo: Repo) -> None:
    """T9 counts a round of the loop, not a sitting: the defect seat answers HTTP 500 once
    (T6: the convening holds), and the next convening of the same tree is that round sat
    again; once it decided, the next convening of that tree is the next round. (A walk-away
    hunt: each re-sit counted as a round, and a ball escalated after two builder rounds.)"""
    down = [1]

    def one_outage(call: Call) -> Reply:
        if call.lens == "defect" and down[0]:
            down[0] -= 1
            return Reply(raw=b'{"error": {"message": "upstream overloaded"}}', status=500)
        return Reply(verdict(call.lens or "?", "pass", [finding("info", "fine")]))

    with JurorServer("openai", one_outage) as server:
        repo.config([rung("r1", "openai", server.url)])
        sat = [repo.convene(out=repo.root.parent / f"s{n}") for n in range(3)]
    assert [(s.info.round, s.decision.outcome) for s in sat] == \
        [(1, "hold"), (1, "pass"), (2, "pass")], [(s.info.round, s.decision) for s in sat]
    assert sat[1].progress.new_counts == (8,)  # the held sitting measured no round of its own


@pytest.mark.parametrize("severity,evidence,outcome", [
    ("minor", "return a / b", "refuse"),  # supported by the envelope: open, never deferred
    ("minor", "text no file holds", "pass"),  # quotes what the envelope never held (T9)
    ("info", "return a / b", "pass"),  # an observation, no finding to close
])
def test_a_unanimous_pass_leaves_no_supported_minor_finding_open(
        repo: Repo, severity: str, evidence: str, outcome: str) -> None:
    """T7 (7): minor findings from the last round are closed too, never deferred ("blockers
    fixed, minors later" is the leak): a unanimous pass in which one juror lists a minor
    finding its evidence supports is a refuse on that finding, which goes back to the
    builder (T7.6)."""
    def script(call: Call) -> Reply:
        said = [finding(severity, "div does not guard b == 0", evidence)] \
            if call.lens == "defect" else [finding("info", "fine")]
        return Reply(verdict(call.lens or "?", "pass", said))

    with JurorServer("openai", script) as server:
        repo.config([rung("r1", "openai", server.url)])
        done = repo.convene()
    assert done.decision.outcome == outcome, done.decision
    if outcome == "refuse":
        assert "minor finding(s) open (defect)" in done.decision.reason, done.decision
