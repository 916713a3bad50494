"""Issue 15 item 9, issue 14 item 11: each score record carries what its tribunal run cost
(the tokens the scripted juror server reported, summed, priced at the rung's declared
prices); ``history.spent`` sums every scoring of a slice, refused ones too; `leap status`
shows each thrown ball's last score and spend, and the slice's sum."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from leapgit.ledger import history
from leapgit.ledger.store import Ledger
from leapgit.records import yamlio
from leapgit.records.usage import NOTHING
from tests.scoring.test_refusals import ball, unit_test
from tests.scoring.world import Project, build_project
from tests.support import git
from tests.templates import Served
from tests.tribunal.jurors import Call, JurorServer, Reply, finding, verdict

S = "spend"
USD_IN, USD_OUT = 2.5, 10.0
DRAFT = f"slice: {S}\nspine: integrator\nballs:\n" + "".join([
    ball("paid", ["calc/paid.py", "tests/test_paid.py"]),
    ball("refused", ["calc/refused.py", "tests/test_refused.py"]),
    ball("idle", ["calc/idle.py", "tests/test_idle.py"]),
])
PLAN = {
    "paid": {"calc/paid.py": "def p():\n    return 1\n"},
    "refused": {"calc/refused.py": "def h(a, b):\n    return a / b  # REFUSE-ME\n"},
}
REDS = {
    "paid": unit_test("paid", "self.assertEqual(p(), 1)", "from calc.paid import p"),
    "refused": unit_test("refused", "self.assertEqual(h(4, 2), 2)",
                         "from calc.refused import h"),
}


def jurors(call: Call) -> Reply:
    n = len(call.lens or "")  # counts of its own per lens, so a mix-up shows
    text = json.dumps(call.body.get("messages", []))
    if "REFUSE-ME" in text and call.lens == "defect":
        return Reply(verdict("defect", "refuse", [finding("major")]), usage=(2000 + n, 90))
    quote = "return a / b" if "REFUSE-ME" in text else "return 1"  # evidence in the envelope
    return Reply(verdict(call.lens or "?", "pass", [finding("info", "looks fine", quote)]),
                 usage=(1000 + n, 40 + n))


def cost(tokens: tuple[int, int]) -> float:
    return (tokens[0] * USD_IN + tokens[1] * USD_OUT) / 1e6


def priced(p: Project) -> None:
    path = p.work / ".leap" / "config.yaml"
    data = yamlio.loads(path.read_bytes(), str(path))
    data["tribunal"]["rungs"][0].update(usd_per_mtok_in=USD_IN, usd_per_mtok_out=USD_OUT)
    path.write_bytes(yamlio.dumps(data))


@pytest.fixture(scope="module")
def proj(isolated: Path, served: Served) -> Iterator[Project]:
    with JurorServer("openai", jurors) as server:
        p = build_project(served.folder("spend"), served.daemon, server.url, DRAFT, {}, PLAN)
        priced(p)
        for name in ("paid", "refused"):
            res = p.red(name, S, (f"tests/test_{name}.py", REDS[name]))
            assert res.code == 0, res
        thrown = p.leap("throw", S, "--run")
        assert thrown.code == 0, thrown
        p.scored = {}  # type: ignore[attr-defined]
        for name, code in (("paid", 0), ("refused", 1)):
            before = len(server.sent)
            res = p.leap("score", S, name)
            assert res.code == code, res
            sent = server.sent[before:]
            p.scored[name] = (sum(n for n, _ in sent), sum(n for _, n in sent))  # type: ignore[attr-defined]
        yield p


def score_record(p: Project, name: str) -> dict[str, Any]:
    path = f"slices/{S}/balls/{name}/scores/1.yaml"
    data: dict[str, Any] = yamlio.loads(git("show", f"leap/ledger:{path}", cwd=p.work).encode(),
                                        path)
    return data


@pytest.mark.parametrize("name,outcome", [("paid", 1), ("refused", -1)])
def test_the_score_record_sums_the_servers_usage(proj: Project, name: str,
                                                 outcome: int) -> None:
    rec = score_record(proj, name)
    tokens = proj.scored[name]  # type: ignore[attr-defined]
    assert rec["outcome"] == outcome
    assert tokens[0] > 8 * 1000  # eight lenses answered, each reported its counts
    assert (rec["usage"]["tokens_in"], rec["usage"]["tokens_out"]) == tokens
    assert rec["usage"]["usd"] == pytest.approx(cost(tokens))
    summary = git("show", f"leap/ledger:slices/{S}/balls/{name}/tribunal/{rec['run_id']}/"
                  "summary.yaml", cwd=proj.work)
    assert yamlio.loads(summary.encode(), "summary")["usage"] == rec["usage"]


def test_spent_sums_every_scoring_of_the_slice_refused_ones_too(proj: Project) -> None:
    paid, refused = proj.scored["paid"], proj.scored["refused"]  # type: ignore[attr-defined]
    with Ledger(proj.work / ".git") as ledger:
        view = ledger.require()
        whole = history.spent(view, S)
        per_ball = {b: history.ball_spent(view, S, b) for b in ("paid", "refused", "idle")}
    assert (whole.tokens_in, whole.tokens_out) == (paid[0] + refused[0], paid[1] + refused[1])
    assert whole.usd == pytest.approx(cost(paid) + cost(refused))
    assert (per_ball["refused"].tokens_in, per_ball["refused"].tokens_out) == refused
    assert per_ball["refused"].usd == pytest.approx(cost(refused))
    assert per_ball["idle"] == NOTHING  # never thrown: nothing spent, and that is known


def test_status_shows_each_balls_last_score_and_spend_and_the_slices_sum(
        proj: Project) -> None:
    res = proj.leap("status", S)
    assert res.code == 0, res
    paid, refused = proj.scored["paid"], proj.scored["refused"]  # type: ignore[attr-defined]
    lines = res.out.splitlines()

    def under(ball: str) -> list[str]:
        start = next(i for i, line in enumerate(lines) if line.strip().startswith(ball + " "))
        rest = lines[start + 1:]
        end = next((i for i, line in enumerate(rest) if not line.startswith("      ")),
                   len(rest))
        return rest[:end]

    whole = (paid[0] + refused[0], paid[1] + refused[1])
    assert (f"  spent on jurors: {whole[0]} in, {whole[1]} out, "
            f"${cost(paid) + cost(refused):.6f}") in lines
    assert "      score 1: pass: all five steps hold (L7)" in under("paid")
    assert (f"      spent on jurors: {paid[0]} in, {paid[1]} out, ${cost(paid):.6f}"
            in under("paid"))
    refused_lines = under("refused")
    assert any(line.startswith("      score 1: refuse: tribunal: run ") and
               "refused by defect" in line for line in refused_lines), refused_lines
    assert (f"      spent on jurors: {refused[0]} in, {refused[1]} out, "
            f"${cost(refused):.6f}") in refused_lines
    assert not any("score" in line or "spent" in line for line in under("idle"))


def test_status_json_shows_the_same(proj: Project) -> None:
    res = proj.leap("status", S, "--json")
    assert res.code == 0, res
    data = json.loads(res.out)["slices"][0]
    balls = {b["ball"]: b for wave in data["waves"] for b in wave}
    paid = proj.scored["paid"]  # type: ignore[attr-defined]
    assert balls["paid"]["last_score"] == {"score": 1, "outcome": 1,
                                           "reason": "all five steps hold (L7)"}
    assert (balls["paid"]["spent"]["tokens_in"], balls["paid"]["spent"]["tokens_out"]) == paid
    assert balls["refused"]["last_score"]["outcome"] == -1
    assert balls["idle"]["last_score"] is None and balls["idle"]["spent"] is None
    total_in = balls["paid"]["spent"]["tokens_in"] + balls["refused"]["spent"]["tokens_in"]
    assert data["spent"]["tokens_in"] == total_in
    assert data["spent"]["usd"] == pytest.approx(balls["paid"]["spent"]["usd"]
                                                 + balls["refused"]["spent"]["usd"])



def test_the_server_takes_the_records_and_the_audit_holds(proj: Project) -> None:
    # the verdict, summary and score records with usage pass pre-receive's schemas
    res = proj.leap("sync")
    assert res.code == 0, res
    assert proj.remote_tip("refs/heads/leap/ledger") == proj.tip("leap/ledger")
    audit = proj.leap("audit")
    assert audit.code == 0, audit
