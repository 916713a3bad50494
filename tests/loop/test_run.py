"""`leap run` (issue 15) drives a five-ball, three-wave slice from its cut to the spine: the
test author writes every red, builders build in stacked waves, each claim is scored at once,
the tribunal's refusal goes back to c's builder with its finding (T7.6) and the next scoring
is round 2 of c's series (T9), every ball merges, the slice's live proof runs on the landed
tip, and `leap audit` holds on a fresh clone of the remote."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from leapgit.ledger import history, layout
from leapgit.ledger.store import Ledger
from leapgit.records import schema, yamlio
from leapgit.records.live import LiveProofRecord
from leapgit.records.tribunal_run import SummaryRecord
from tests.loop.world import DEPS, FINDING_TEST, S, build, events, jurors
from tests.scoring.world import Project
from tests.support import git, leap
from tests.templates import Served
from tests.tribunal.jurors import JurorServer


@pytest.fixture(scope="module")
def ran(isolated: Path, served: Served) -> Iterator[tuple[Project, object]]:
    with JurorServer("openai", jurors) as server:
        p = build(served.folder("run5"), served.daemon, server.url)
        res = p.leap("run", S, "--json", "--heartbeat", "0")
        yield p, res


def test_the_slice_lands_alone(ran: tuple[Project, object]) -> None:
    p, res = ran
    assert res.code == 0, (res.out[-3000:], res.err[-2000:])  # type: ignore[attr-defined]
    got = events(res.out)  # type: ignore[attr-defined]
    end = got[-1]
    assert end["event"] == "end" and end["outcome"] == "landed, live proof held", end
    log = git("log", "--first-parent", "--format=%s", "main", cwd=p.bare).splitlines()
    merged = [line for line in log if line.startswith("leap: integrate five/")]
    assert len(merged) == 5, log  # every ball's integration merge is on the remote's spine
    # waves: no ball was thrown before every one of its dependencies passed (L5)
    order = [e for e in got if e["event"] in ("throw", "score")]
    passed_at = {e["ball"]: i for i, e in enumerate(order)
                 if e["event"] == "score" and e.get("outcome") == "pass"}
    for ball, deps in DEPS.items():
        thrown = next(i for i, e in enumerate(order) if e["event"] == "throw"
                      and e["ball"] == ball)
        assert all(passed_at[d] < thrown for d in deps), (ball, order)


def test_every_event_line_validates_against_the_schema(ran: tuple[Project, object]) -> None:
    _, res = ran
    lines = [json.loads(line) for line in res.out.splitlines()]  # type: ignore[attr-defined]
    assert lines and all(line.get("event") for line in lines)
    for line in lines:
        schema.validate(line, "run-event", "leap run --json", rule="issue 15")
    kinds = {line["event"] for line in lines}
    assert {"start", "red", "throw", "round", "score", "findings", "merge", "live_proof",
            "table", "end"} <= kinds, kinds


def test_the_tribunal_refusal_went_back_to_the_builder(ran: tuple[Project, object]) -> None:
    p, _ = ran
    handoff = yamlio.loads((p.base_dir / "handoffs" / "c-1-2.yaml").read_bytes(), "handoff")
    told = handoff["findings"]["open"]
    assert [f["lens"] for f in told] == ["defect"] and "adds two" in told[0]["claim"], told
    assert told[0]["status"] == "new"
    first = yamlio.loads((p.base_dir / "handoffs" / "c-1-1.yaml").read_bytes(), "handoff")
    assert "findings" not in first
    with Ledger(p.work / ".git") as ledger:
        view = ledger.require()
        scores = history.scores(view, S, "c")
        assert [s.outcome for s in scores] == [-1, 1], scores
        summaries = [view.record(f"{layout.tribunal_dir(s.run_id or '', S, 'c')}"
                                 "/summary.yaml", SummaryRecord) for s in scores]
    assert [s.round for s in summaries if s] == [1, 2]
    assert summaries[1] is not None and summaries[1].resolved == (told[0]["fingerprint"],)


def test_the_finding_became_a_frozen_failing_test_first(ran: tuple[Project, object]) -> None:
    """T7.6: the test author turned the juror's finding into a new failing test on the
    refused candidate (a finding's red, frozen), and the builder's next round built on it."""
    p, _ = ran
    with Ledger(p.work / ".git") as ledger:
        view = ledger.require()
        contract = history.reds(view, S, "c")
        found = history.finding_reds(view, S, "c", 1)
        scores = history.scores(view, S, "c")
    assert len(contract) == 1 and len(found) == 1, (contract, found)
    red = found[0]
    assert red.answers == scores[0].score and red.base == scores[0].commit
    assert [t.path for t in red.tests] == [FINDING_TEST]
    assert red.proof.exit_code not in (0, None)  # it failed at the refused candidate
    passed = scores[-1]
    assert git("merge-base", "--is-ancestor", red.commit, passed.commit, cwd=p.work) == ""
    frozen = git("rev-parse", f"{passed.commit}:{FINDING_TEST}", cwd=p.work)
    assert frozen == red.tests[0].blob  # unchanged by the builder: frozen


def test_the_live_proof_is_recorded_against_the_merge(ran: tuple[Project, object]) -> None:
    p, _ = ran
    with Ledger(p.work / ".git") as ledger:
        view = ledger.require()
        live = view.record(layout.live_path(S, 1), LiveProofRecord)
        merged = history.merge_records(view, S)[-1]
    assert live is not None and live.outcome == 1 and live.tip == merged.tip
    assert "live: fe() is 6" in live.output_tail
    authored = (p.base_dir / "authored.log").read_text().split()
    # one red each by the test author, and c's finding once more (T7.6)
    assert sorted(authored) == sorted([*DEPS, "c"]), authored


def test_the_audit_holds_on_a_fresh_clone_of_the_remote(ran: tuple[Project, object],
                                                         tmp_path: Path) -> None:
    p, _ = ran
    clone = tmp_path / "clone"
    git("clone", "-q", str(p.bare), str(clone), cwd=tmp_path)
    git("fetch", "-q", "origin", "refs/heads/leap/ledger:refs/heads/leap/ledger", cwd=clone)
    listed = git("ls-tree", "-r", "--name-only", "leap/ledger", cwd=clone).splitlines()
    assert layout.live_path(S, 1) in listed  # the server took the live proof record (T9)
    audited = leap("audit", cwd=clone)
    assert audited.code == 0, audited


def test_a_second_run_finds_nothing_to_do(ran: tuple[Project, object]) -> None:
    p, _ = ran
    again = p.leap("run", S, "--heartbeat", "0")
    assert again.code == 0, again
    assert "already merged" in again.out and "landed, live proof held" in again.out, again.out


def test_the_server_refuses_a_forged_finding_red(ran: tuple[Project, object]) -> None:
    """T7.6 on the server: a finding's red must answer the latest refusal on the tribunal's
    findings, on that candidate; one naming a pass is refused and the remote keeps its
    ledger."""

    from tests.hooks.world import run_git

    p, _ = ran
    assert p.leap("sync").code == 0
    before = p.tip("leap/ledger")
    with Ledger(p.work / ".git") as ledger:
        view = ledger.require()
        real = history.finding_reds(view, S, "c", 1)[0]
        passed = history.scores(view, S, "a")[-1]
        number = history.next_number(view, f"{layout.ball_dir(S, 'a')}/reds")
        forged = real._replace(ball="a", red=number, answers=passed.score, episode=1,
                         base=passed.commit)
        ledger.append({layout.red_path(S, "a", number): yamlio.dumps(forged.to_dict())},
                      "forged by hand")
    pushed = run_git("push", "--no-verify", "origin", "leap/ledger", cwd=p.work)
    git("update-ref", "refs/heads/leap/ledger", before, cwd=p.work)
    assert pushed.returncode != 0 and "[T7.6]" in pushed.stderr, pushed.stderr
    assert "no refusal on the tribunal's findings" in pushed.stderr
    assert p.remote_tip("refs/heads/leap/ledger") == before


def test_the_server_refuses_a_finding_red_that_replaces_or_changes_more(
        ran: tuple[Project, object]) -> None:
    """T7.6 (blind review r3): a finding's red never replaces the contract red, and its
    commit adds exactly the new test files it names: one that also changes the code would
    be the builder's fix uncounted as a round."""

    from tests.hooks.world import run_git
    from tests.scoring.world import commit_files

    p, _ = ran
    assert p.leap("sync").code == 0
    before = p.tip("leap/ledger")
    with Ledger(p.work / ".git") as ledger:
        view = ledger.require()
        real = history.finding_reds(view, S, "c", 1)[0]
        number = history.next_number(view, f"{layout.ball_dir(S, 'c')}/reds")
    sneaky = commit_files(p.work, real.base, {FINDING_TEST: "x = 1\n",
                                              "calc/c.py": "def fc():\n    return 3\n"},
                          "red: c, and a fix")
    with Ledger(p.work / ".git") as ledger:
        forged = real._replace(red=number, replaces=1, commit=sneaky,
                         tests=(real.tests[0]._replace(blob=git(
                             "rev-parse", f"{sneaky}:{FINDING_TEST}", cwd=p.work)),))
        ledger.append({layout.red_path(S, "c", number): yamlio.dumps(forged.to_dict())},
                      "forged by hand")
    pushed = run_git("push", "--no-verify", "origin", "leap/ledger",
                     f"{sneaky}:refs/heads/scratch", cwd=p.work)
    git("update-ref", "refs/heads/leap/ledger", before, cwd=p.work)
    assert pushed.returncode != 0, pushed.stderr
    assert "a finding's red only adds" in pushed.stderr, pushed.stderr
    assert "calc/c.py beyond or short of the test files it names" in pushed.stderr
    assert p.remote_tip("refs/heads/leap/ledger") == before
