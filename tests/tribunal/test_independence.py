"""Issue 17 item 3: the jurors' independence measured from the ledger's verdicts. A ledger is
built with rungs voting at known rates (identical, independent, agreeing 80%, never
refusing); `leap tribunal report` must give the figures computed here from the design (the
correlation with the standard library, the participation ratio from the eigenvalues of the
correlation matrix worked out by hand), and a convening whose seats are one family, or
under 2 effective jurors by that history, says so in its summary (T3)."""

from __future__ import annotations

import hashlib
import json
import statistics
from pathlib import Path

from leapgit.ledger import layout
from leapgit.ledger.store import Ledger
from leapgit.records import schema, yamlio
from leapgit.records.tribunal_run import SeatRecord, SummaryRecord, VerdictRecord
from tests.support import leap
from tests.tribunal.conftest import Repo, rung
from tests.tribunal.jurors import JurorServer, detailed_pass

SHA = "ab" * 20
N = 20
A = [1] * 10 + [0] * 10  # 1: refuse
B = list(A)  # identical to A: phi 1
C = [1, 0] * 10  # refuses half of A's refusals and half of its passes: phi 0
D = [0] * N  # never refuses
E = [0, 0] + [1] * 8 + [1, 1] + [0] * 8  # agrees with A on 16 of 20


def seat(rung_id: str, family: str, vote: int | None) -> SeatRecord:
    if vote is None:
        return SeatRecord("hold", "never answered", None)
    said = "refuse" if vote else "pass"
    return SeatRecord(said, "scripted", rung_id, (), "openai", family, f"{rung_id}-model",
                      said, vote == 0)


def write_history(root: Path, jurors: dict[str, tuple[str, str, list[int | None]]]) -> None:
    """``jurors``: rung -> (family, lens, votes per envelope); envelope i is run i."""
    with Ledger(root / ".git") as ledger:
        for i in range(N):
            envelope = hashlib.sha256(f"envelope {i}".encode()).hexdigest()
            files = {}
            for rung_id, (family, lens, votes) in jurors.items():
                s = seat(rung_id, family, votes[i])
                rec = VerdictRecord(f"t-20260101T0000{i:02d}Z-aaaaaa", 1, SHA, SHA, envelope,
                                    lens, s.outcome, s.reason, s, (), "2026-01-01T00:00:00Z")
                raw = rec.to_dict()
                path = layout.path_for(raw)
                schema.validate_record(raw, path)
                files[path] = yamlio.dumps(raw)
            ledger.append(files, f"test: run {i}")


def eigen_pr(eigenvalues: list[float]) -> float:
    """The participation ratio: (sum of eigenvalues)^2 / sum of their squares."""
    return sum(eigenvalues) ** 2 / sum(x * x for x in eigenvalues)


def test_the_report_gives_the_designed_agreement_and_effective_count(repo: Repo) -> None:
    with_hold: list[int | None] = [*D[:-1], None]  # its last seat never answered
    write_history(repo.root, {"a": ("fam1", "defect", list(A)),
                              "b": ("fam1", "proportion", list(B)),
                              "c": ("fam2", "telemetry", list(C)),
                              "d": ("fam3", "boundary_condition", with_hold)})
    result = leap("tribunal", "report", "--json", cwd=repo.root)
    assert result.code == 0, result
    got = json.loads(result.out)
    pairs = {(p["a"], p["b"]): p for p in got["rung_pairs"]}
    for (x, y), (xs, ys) in {("a", "b"): (A, B), ("a", "c"): (A, C), ("b", "c"): (B, C)
                             }.items():
        agree = sum(u == v for u, v in zip(xs, ys, strict=True))
        assert pairs[(x, y)]["shared"] == N and pairs[(x, y)]["agree"] == agree
        assert abs(pairs[(x, y)]["phi"] - statistics.correlation(xs, ys)) < 1e-9
    assert pairs[("a", "b")]["agreement"] == 1.0 and pairs[("a", "c")]["agreement"] == 0.5
    assert pairs[("a", "d")]["shared"] == N - 1 and pairs[("a", "d")]["phi"] is None
    # R over a, b, c = [[1,1,0],[1,1,0],[0,0,1]]: eigenvalues 2, 1, 0
    assert got["effective_rungs"] == {"value": round(eigen_pr([2, 1, 0]), 3),
                                      "jurors": ["a", "b", "c"], "constant": ["d"],
                                      "why": None}
    assert got["effective_rungs"]["value"] == 1.8
    families = {(p["a"], p["b"]): p for p in got["family_pairs"]}
    assert families[("fam1", "fam2")]["agreement"] == 0.5
    assert families[("fam1", "fam2")]["phi"] == 0.0
    assert got["effective_families"]["value"] == 2.0  # fam1 and fam2 independent, fam3 mute
    refusals = {x["lens"]: x for x in got["refusals"]}
    assert refusals["defect"] == {"lens": "defect", "verdicts": N, "refused": 10, "held": 0}
    assert refusals["boundary_condition"] == {"lens": "boundary_condition", "verdicts": N,
                                              "refused": 0, "held": 1}
    assert got["never_refuse"] == ["d"]
    text = leap("tribunal", "report", cwd=repo.root).out
    assert "  a ~ c: 20 shared envelope(s), agree 10 (0.500), phi 0.000" in text
    assert "effective independent rungs: 1.8 of 3; never varied, left out: d" in text
    assert "  boundary_condition: refused 0 of 20 verdict(s) (0.000), held 1" in text
    assert "never refuse: d" in text


def test_a_rung_agreeing_80_percent(repo: Repo) -> None:
    write_history(repo.root, {"a": ("fam1", "defect", list(A)),
                              "e": ("fam2", "proportion", list(E))})
    got = json.loads(leap("tribunal", "report", "--json", cwd=repo.root).out)
    (p,) = got["rung_pairs"]
    rho = statistics.correlation(A, E)
    assert (p["agree"], p["agreement"]) == (16, 0.8) and abs(p["phi"] - rho) < 1e-9
    assert abs(rho - 0.6) < 1e-9  # 16 of 20 alike, both refusing half: (0.8 - 0.5) / 0.5
    # R = [[1, rho], [rho, 1]]: eigenvalues 1 + rho and 1 - rho
    assert got["effective_rungs"]["value"] == round(eigen_pr([1 + rho, 1 - rho]), 3)


def test_an_unmeasured_pair_is_said_never_guessed(repo: Repo) -> None:
    short: list[int | None] = [1, 0, 1, *([None] * (N - 3))]
    write_history(repo.root, {"a": ("fam1", "defect", list(A)),
                              "f": ("fam2", "telemetry", short)})
    got = json.loads(leap("tribunal", "report", "--json", cwd=repo.root).out)
    assert got["effective_rungs"]["value"] is None
    assert got["effective_rungs"]["why"] == "a and f share 3 envelope(s), fewer than 5"


def test_a_convening_says_one_family_and_under_2_in_its_summary(repo: Repo) -> None:
    write_history(repo.root, {"r1": ("fa", "defect", list(A)),
                              "r2": ("fb", "telemetry", list(B))})
    generalist = ["generalist", "operator_safety"]
    others = ["deep_state", "fast_structural"]
    with JurorServer("openai", detailed_pass) as server:
        repo.config([rung("r1", "openai", server.url, family="fa", tiers=generalist),
                     rung("r2", "openai", server.url, family="fb", tiers=others)])
        two = repo.convene()
        two_lines = repo.lines
        repo.config([rung("r1", "openai", server.url, family="fa", tiers=generalist),
                     rung("r3", "openai", server.url, family="fa", tiers=others)])
        one = repo.convene(out=repo.root.parent / "out2")
        result = leap("tribunal", "convene", "--base", repo.base, "--head", repo.head,
                      "--intent", "add integer division", "--criteria", "div divides",
                      "--builder", "model=x,family=buildfam,session=s", "--out",
                      str(repo.root.parent / "out3"), cwd=repo.root)
    summary = _summary(repo, two.info.run_id)
    assert summary.independence is not None
    assert summary.independence.rungs == ("r1", "r2")
    assert summary.independence.families == ("fa", "fb")
    assert summary.independence.effective_jurors == 1.0  # identical votes: one opinion
    note = ("effective independent jurors from history: 1 of 2 seated rung(s), under 2")
    assert summary.independence.notes == (note,)
    assert two.independence == (note,)
    assert not any(line.startswith("independence") for line in two_lines)  # said at the end
    single = _summary(repo, one.info.run_id).independence
    assert single is not None and single.single_family
    assert single.notes[0].startswith("every seat came from one family (fa)")
    assert single.notes[1] == ("effective independent jurors: unmeasured (no recorded "
                               "verdict of r3)")
    assert result.code == 0, result
    assert "independence: every seat came from one family (fa)" in result.out


def _summary(repo: Repo, run_id: str) -> SummaryRecord:
    with Ledger(repo.root / ".git") as ledger:
        found = ledger.require().record(f"tribunal/{run_id}/summary.yaml", SummaryRecord)
    assert found is not None
    return found
