"""`leap merge SLICE [--holder NAME]` (L8, L9): land a complete slice on the spine."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from leapgit.ledger import layout
from leapgit.ledger.workspace import open_workspace
from leapgit.records.types import INTEGRATOR
from leapgit.scoring.merge import MergeResult, merge
from leapgit.tribunal.worktree import once_a_tree


@once_a_tree
def merge_slice(slice_id: str, holder: str = INTEGRATOR, builder: str | None = None,
                start: Path | str = ".", echo: Callable[[str], None] = print) -> MergeResult:
    return merge(open_workspace(start), slice_id, holder, builder, echo)


def lines(result: MergeResult) -> list[str]:
    r = result.record
    out = [f"reopened {o.slice}/{o.ball} (L8): {o.reason}" for o in result.reopened]
    if result.published is not None:
        pub = result.published
        before = pub.old[:12] if pub.old else "none"
        given = "given back" if pub.released else \
            f"given back here; `leap sync {result.remote}` gives it back there"
        return [*out, f"slice {r.slice} was merged in this clone only: its merges pushed to "
                f"{result.remote}'s {r.spine} ({before} -> {pub.new[:12]}) under lease "
                f"{pub.lease}, {given}"]
    if result.already:
        return [*out, f"slice {r.slice} is already merged: every ball's pass is on "
                f"{r.spine}, last at {r.tip[:12]} ({layout.merge_path(r.slice, r.number)}); "
                "nothing to do"]
    out.append(f"lease {r.lease} on {r.spine} taken by {r.holder}")
    for m in r.merges:
        out.append(f"  merged {r.slice}/{m.ball}: {m.commit[:12]} (candidate "
                   f"{m.candidate[:12]}, tribunal {m.run_id})")
    out.append(f"  merged result: {len(r.tests)} test run(s) green; aggregate review "
               f"{r.aggregate_run}: pass")
    out.append(f"spine {r.spine}: {r.base[:12]} -> {r.tip[:12]}"
               + (f", pushed to {result.remote}" if result.remote else ""))
    out.append(f"slice pass record {layout.merge_path(r.slice, r.number)} written; lease "
               f"{r.lease} released")
    return out
