"""Land, then prove it live (T9): the slice's own ``live_proof`` runs on the spine tip its
merge left, in a clean worktree of that commit, and its result is recorded against the merge
(``records.live``). A proof already recorded for the merge is read back, never run twice."""

from __future__ import annotations

import sys
from typing import NamedTuple

from leapgit import git
from leapgit.errors import LeapError
from leapgit.ledger import history, layout, query
from leapgit.ledger import sync as syncing
from leapgit.ledger.workspace import Workspace
from leapgit.records import trailers as tr
from leapgit.records import yamlio
from leapgit.records.live import LiveProofRecord
from leapgit.records.scoring import MergeRecord
from leapgit.scoring.commands import run_command
from leapgit.timeutil import now_iso
from leapgit.tribunal.worktree import temporary


class Proved(NamedTuple):
    record: LiveProofRecord | None  # None: the slice declares no live proof
    ran: bool  # False: read back from the ledger


def _landing(ws: Workspace, slice_id: str
             ) -> tuple[str, MergeRecord, list[LiveProofRecord]] | None:
    """The slice's live proof command, its latest merge and that merge's attempts; None
    when it declares no live proof or has not landed."""
    with ws.ledger() as ledger:
        view = ledger.require()
        rec = query.load_slice(view, slice_id)
        merges = history.merge_records(view, slice_id)
        if not rec.live_proof or not merges:
            return None
        return rec.live_proof, merges[-1], history.live_proofs(view, slice_id,
                                                               merges[-1].number)


def _synced(ws: Workspace, remote: str) -> bool:
    """The remote's ledger replayed here; False, said on stderr, when it is out of reach."""
    try:
        syncing.sync(remote, start=ws.paths.root, push=False)
    except (LeapError, OSError) as exc:
        print(f"leap: warning: {remote}'s ledger could not be read ({exc}); no later live "
              f"proof is tried until it can (another clone may have recorded one)",
              file=sys.stderr)
        return False
    return True


def _spine_tip(ws: Workspace, remote: str | None) -> str | None:
    """The spine's tip as the merge's remote holds it (its commits fetched here), which is
    where a fix landed from any clone is, and the only tip the server takes a later attempt
    on; this clone's own spine when there is no remote or it is out of reach."""
    root, ref = ws.paths.root, f"refs/heads/{ws.config.spine}"
    if remote is not None:
        listed = git.run(["ls-remote", remote, ref], root, check=False)
        words = listed.stdout.decode().split()
        if listed.returncode == 0 and words:
            git.run(["fetch", "--quiet", "--no-tags", remote, ref], root, check=False)
            if git.rev_parse(f"{words[0]}^{{commit}}", root) is not None:
                return words[0]
    return git.rev_parse(ref, root)


def prove_live(ws: Workspace, slice_id: str) -> Proved:
    """The latest merge's live proof: read back when recorded; run on the merge's tip the
    first time, and again, as the next attempt, on the spine's tip once that moved past a
    failed attempt (a fix landed since)."""
    root = ws.paths.root
    found = _landing(ws, slice_id)
    if found is None:
        return Proved(None, False)
    live_proof, merged, tried = found
    if tried and tried[-1].outcome != 1 and merged.remote is not None:
        # a later attempt: the remote's ledger first, which holds any attempt another clone
        # made on the fix it landed (writing ours beside it would be a lasting conflict)
        if not _synced(ws, merged.remote):
            return Proved(tried[-1], False)
        live_proof, merged, tried = _landing(ws, slice_id) or found
    number, tip = merged.number, merged.tip
    if tried:
        done = tried[-1]
        if done.outcome == 1:
            return Proved(done, False)
        spine = _spine_tip(ws, merged.remote)
        if spine is None or spine == done.tip or not git.is_ancestor(root, done.tip, spine):
            return Proved(done, False)  # nothing landed since it failed
        tip = spine
    attempt = len(tried) + 1
    with temporary(root, tip, prefix="leap-live-") as tree:
        run = run_command("live_proof", live_proof, tree,
                          timeout=ws.config.tribunal.test_timeout)
    record = LiveProofRecord(slice_id, number, tip, live_proof, run.exit_code,
                             run.seconds, run.output_tail[-8000:], 1 if run.ok else -1,
                             now_iso(), attempt)
    with ws.ledger() as ledger:
        path = layout.live_path(slice_id, number, attempt)
        if ledger.require().exists(path):  # a run killed after its write, or a twin
            twin = ledger.require().record(path, LiveProofRecord)
            return Proved(twin, False)
        ledger.append({path: yamlio.dumps(record.to_dict())},
                      f"live proof of {slice_id} at {tip[:12]}"
                      + (f" (attempt {attempt})" if attempt > 1 else "")
                      + f": {'held' if run.ok else 'failed'}",
                      [(tr.SLICE, slice_id), (tr.OUTCOME, str(record.outcome)),
                       (tr.CANDIDATE, tip)])
    return Proved(record, True)
