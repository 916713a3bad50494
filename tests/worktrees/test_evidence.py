"""Issue 14 item 11: a round refused under `leap throw --run` (a breach, L4/L9 -> -1, L6)
keeps its commit under refs/leap/evidence/<slice>/<ball>/<episode>-<round> before the
rollback; a prune that removes the refused ball's branch loses nothing, and `leap audit`
(text and --json) lists the ref against the ledger's receipt."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from leapgit.ledger import query
from leapgit.ledger.store import Ledger
from tests.support import git, leap, ref
from tests.worktrees.conftest import set_config

Builder = Callable[..., str]


def test_a_refused_round_is_kept_as_evidence_the_audit_lists(diamond: Path,
                                                              builder: Builder) -> None:
    set_config(diamond, builder=builder("""
        pathlib.Path("src/a.py").write_text("A = 2\\n")
        pathlib.Path("src/b.py").write_text("B = 'stolen'\\n")  # B's file: a breach
        pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 1\\nevidence: ok\\n")
    """))
    run = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond)
    assert run.code == 1, run
    assert "scope breach (L4, L9): src/b.py outside the scope of A" in run.out
    with Ledger(diamond / ".git") as ledger:
        [receipt] = query.receipts(ledger.require(), "dia", "A", 1)
    assert receipt.outcome == -1 and receipt.commit
    evidence = "refs/leap/evidence/dia/A/1-1"
    assert ref(diamond, evidence) == receipt.commit
    pruned = leap("worktree", "prune", cwd=diamond)
    assert "dia/A: removed: refused (-1) and rolled back" in pruned.out, pruned
    assert ref(diamond, "leap/ball/dia/A") is None
    assert git("show", f"{evidence}:src/b.py", cwd=diamond) == "B = 'stolen'"
    audit = leap("audit", cwd=diamond)
    assert f"evidence {evidence} at {receipt.commit[:12]}: round 1 of dia/A, refused (-1) " \
        "as the ledger records" in audit.out, audit.out
    data = json.loads(leap("audit", "--json", cwd=diamond).out)
    assert data["evidence"] == [{"ref": evidence, "slice": "dia", "ball": "A", "episode": 1,
                                 "round": 1, "commit": receipt.commit, "recorded": True}]


def test_an_evidence_ref_the_ledger_does_not_back_is_noted(diamond: Path) -> None:
    head = git("rev-parse", "HEAD", cwd=diamond)
    git("update-ref", "refs/leap/evidence/dia/A/1-3", head, cwd=diamond)
    audit = leap("audit", cwd=diamond)
    assert "evidence refs/leap/evidence/dia/A/1-3" in audit.out
    assert "the ledger records no refused round 3 of dia/A episode 1 at this commit" \
        in audit.out, audit.out
