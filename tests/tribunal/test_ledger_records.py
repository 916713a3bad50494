"""The tribunal's ledger records are typed (``records.tribunal_run``, issue 13): what a
convening commits reads back as its type, and that type writes the same bytes again."""

from __future__ import annotations

from leapgit.ledger.store import Ledger
from leapgit.records import yamlio
from leapgit.records.tribunal_run import (
    EnvelopeRecord,
    RoutingRecord,
    SummaryRecord,
    VerdictRecord,
)
from tests.support import git
from tests.tribunal.conftest import Repo, rung
from tests.tribunal.jurors import JurorServer, Reply, finding, verdict

TYPES = {"envelope.yaml": EnvelopeRecord, "routing.yaml": RoutingRecord,
         "summary.yaml": SummaryRecord}


def test_every_record_of_a_convening_reads_back_as_its_type_byte_for_byte(repo: Repo) -> None:
    def script(call):  # type: ignore[no-untyped-def]
        return Reply(verdict(call.lens or "?", "pass", [finding("minor")]))

    with JurorServer("openai", script) as primary, JurorServer("anthropic", script) as check:
        repo.config([rung("main", "openai", primary.url, cost=0),
                     rung("check", "anthropic", check.url, cost=3)],
                    verifiers=[{"lens": "defect", "rungs": ["check"]}])
        result = repo.convene(tests="true")
    assert result.mechanical is not None
    tip = git("rev-parse", "leap/ledger", cwd=repo.root)
    paths = git("show", "--name-only", "--format=", tip, cwd=repo.root).splitlines()
    seen = set()
    with Ledger(repo.root / ".git") as ledger:
        view = ledger.view()
        for path in paths:
            name = path.rsplit("/", 1)[-1]
            record_type = VerdictRecord if "/verdicts/" in path else TYPES[name]
            typed = view.record(path, record_type)
            assert typed is not None, path
            assert yamlio.dumps(typed.to_dict()) == view.read(path), path
            seen.add(type(typed).__name__)
            if isinstance(typed, SummaryRecord):
                summary = typed
            if isinstance(typed, VerdictRecord) and typed.lens == "defect":
                defect = typed
    assert seen == {"EnvelopeRecord", "RoutingRecord", "VerdictRecord", "SummaryRecord"}
    assert summary.tree == result.info.tree and summary.run_id == result.info.run_id
    assert summary.mechanical is not None and summary.mechanical.checks
    assert [f.status for f in summary.findings] == ["new"] * len(summary.findings)
    assert defect.verifier is not None and defect.verifier.rung == "check"
    assert defect.findings and defect.findings[0].severity == "minor"
