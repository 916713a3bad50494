"""What counts as a full pass: the one place that says so (L7, L8).

Until the scoring issue tightens it, a full pass for a ball is a receipt in the ledger with
outcome 1 that is not a builder's claim (``claim: false``), names exactly the candidate
(the tree id the integrator merges), and carries its provenance chain (L7.5) with the same
candidate hash. A claim is never a pass; missing proof is never a pass.
"""

from __future__ import annotations

from leapgit.errors import RuleViolation
from leapgit.ledger import query
from leapgit.ledger.store import LedgerView
from leapgit.records.types import Receipt


class NoFullPass(RuleViolation):
    """The ledger holds no full pass for this candidate; the message says what it holds."""


def is_pass_record(receipt: Receipt) -> bool:
    return receipt.outcome == 1 and not receipt.claim


def provenance_problems(receipt: Receipt) -> list[str]:
    """What a pass record lacks of its provenance (L7.5); empty when complete."""
    if not is_pass_record(receipt):
        return []
    problems = []
    if receipt.candidate is None:
        problems.append("the pass names no candidate hash")
    prov = receipt.provenance
    if prov is None:
        problems.append("the pass carries no provenance (builder, spec_version, reviewers, "
                        "verdicts, tests, live_proof, candidate)")
    elif receipt.candidate is not None and prov.candidate != receipt.candidate:
        problems.append(f"provenance names candidate {prov.candidate[:12]}, the receipt "
                        f"{receipt.candidate[:12]}: the same hash must appear in every record")
    return problems


def _all_receipts(view: LedgerView, slice_id: str, ball_id: str) -> list[Receipt]:
    out: list[Receipt] = []
    for episode in query.episodes(view, slice_id, ball_id):
        out.extend(query.receipts(view, slice_id, ball_id, episode))
    return out


def full_pass(view: LedgerView, slice_id: str, ball_id: str, candidate_tree: str) -> Receipt:
    """The pass record for exactly ``candidate_tree``, or ``NoFullPass`` saying why not."""
    receipts = _all_receipts(view, slice_id, ball_id)
    passes = [r for r in receipts if r.outcome == 1]
    if not passes:
        raise NoFullPass(f"the ledger holds no pass for ball {slice_id}/{ball_id}", rule="L7")
    real = [r for r in passes if not r.claim]
    if not real:
        raise NoFullPass(f"ball {slice_id}/{ball_id} has only a builder's claim of a pass "
                         "(claim: true); a claim is never a pass", rule="L7")
    matching = [r for r in real if r.candidate == candidate_tree]
    if not matching:
        have = ", ".join(sorted({(r.candidate or "none")[:12] for r in real}))
        raise NoFullPass(f"the pass of {slice_id}/{ball_id} is for candidate {have}, got "
                         f"{candidate_tree[:12]}", rule="L7")
    for receipt in matching:
        if not provenance_problems(receipt):
            return receipt
    raise NoFullPass("; ".join(provenance_problems(matching[-1])), rule="L7.5")


def is_full_pass(view: LedgerView, slice_id: str, ball_id: str, candidate_tree: str) -> bool:
    try:
        full_pass(view, slice_id, ball_id, candidate_tree)
    except NoFullPass:
        return False
    return True
