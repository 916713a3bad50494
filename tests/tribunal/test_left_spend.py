"""Blind review (state/honest outcomes): ``ledger.history._runs_spent`` reads a run a
killed convening left (``tribunal.left``: verdicts, no summary) by its verdicts, and takes
a verdict with no usage as an unmeasured call (usd unknown). A verdict records no usage
when no call of it answered (a seat out of reach: HTTP 500, a timeout, refused
connection), and the summary of the very same convening sums it as nothing spent. So one
seat out of reach in a killed convening makes the slice's spend "not fully priced" for
good (the ledger is add-only), and `run.max_usd` stops every later `leap run` with
"Price every rung", though every rung is priced."""

from __future__ import annotations

from leapgit.ledger import history
from leapgit.ledger.store import Ledger
from leapgit.records import yamlio
from leapgit.records.usage import Usage
from leapgit.tribunal.left import record_left
from tests.tribunal.conftest import Repo, rung
from tests.tribunal.jurors import Call, JurorServer, Reply, detailed_pass
from tests.tribunal.test_left import _lost


def _defect_out_of_reach(call: Call) -> Reply:
    if call.lens == "defect":
        return Reply(raw=b'{"error": {"message": "upstream overloaded"}}', status=500)
    return detailed_pass(call)


def test_a_left_run_with_a_seat_out_of_reach_is_priced_as_its_summary_prices_it(
        repo: Repo) -> None:
    with JurorServer("openai", _defect_out_of_reach) as server:
        repo.config([rung("r1", "openai", server.url, usd_per_mtok_in=1.0,
                          usd_per_mtok_out=1.0)])
        folder, run_id = _lost(repo)  # its ledger commit taken back: as if killed
    summary = yamlio.loads((folder / "summary.yaml").read_bytes(), "summary")
    priced = Usage.from_dict(summary["usage"])
    assert priced.usd is not None  # the convening itself knew what it spent
    defect = yamlio.loads((folder / "verdicts" / "defect.yaml").read_bytes(), "defect")
    assert defect["outcome"] == "hold" and "usage" not in defect  # no call answered
    with Ledger(repo.root / ".git") as ledger:
        assert record_left(repo.root / ".git", ledger) == [run_id]
        spent = history._runs_spent(ledger.require(), "tribunal")
    assert spent is not None
    assert spent.usd is not None, (
        f"the left run's spend reads as unpriced ({spent}); its summary priced it {priced}")
    assert abs(spent.usd - priced.usd) < 1e-9, (spent, priced)
