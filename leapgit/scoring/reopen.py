"""Reopen on byte change (L8): any byte change to a passed or merged candidate (a commit on
the ball branch after its pass, or a spine commit outside an integration that changes files
of a merged ball) reopens that ball: a reopen record voids its pass, so the ball is no
longer passed anywhere (readiness, merge, pre-receive, audit) and the slice must be
re-scored. Reopen records are written by the post-commit hook, `leap score` and
`leap merge`; the server's pre-receive refuses the spine commit itself."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from leapgit import git
from leapgit.ledger import layout
from leapgit.ledger.store import Ledger
from leapgit.records import yamlio
from leapgit.records.scoring import ReopenRecord, ScoreRecord
from leapgit.records.types import Config, SliceRecord
from leapgit.scoring import history
from leapgit.timeutil import now_iso

Where = Literal["ball-branch", "spine"]


def write_reopen(ledger: Ledger, rec: ScoreRecord, found: str | None, where: Where,
                 commit: str | None, reason: str) -> ReopenRecord:
    view = ledger.require()
    folder = f"{layout.ball_dir(rec.slice, rec.ball)}/reopens"
    number = history.next_number(view, folder)
    reopen = ReopenRecord(rec.slice, rec.ball, number, rec.score, rec.candidate, found, where,
                          commit, reason, now_iso())
    trailers = [("Leap-Slice", rec.slice), ("Leap-Ball", rec.ball),
                ("Leap-Candidate", rec.candidate), ("Leap-Outcome", "reopen")]
    ledger.append({layout.reopen_path(rec.slice, rec.ball, number):
                   yamlio.dumps(reopen.to_dict())},
                  f"reopen {rec.slice}/{rec.ball}: {reason}", trailers)
    return reopen


def reopen_if_moved(ledger: Ledger, slice_id: str, ball_id: str, tree: str,
                    commit: str | None) -> ReopenRecord | None:
    """The ball branch now holds ``tree``: reopen its standing pass when that is another."""
    from leapgit.hookimpl.rules.passes import standing_pass

    rec = standing_pass(ledger.require(), slice_id, ball_id)
    if rec is None or rec.candidate == tree:
        return None
    return write_reopen(ledger, rec, tree, "ball-branch", commit,
                        f"the ball branch moved to tree {tree[:12]} after the pass of "
                        f"{rec.candidate[:12]} (a byte change)")


def _spine_changes(root: Path, since: str, spine: str) -> list[tuple[str, bool, set[str]]]:
    """(commit, is an integration merge, paths it changes) on the spine's first-parent line."""
    fmt = "%x00%H %P%x00%(trailers:key=Leap-Slice,valueonly)"
    out = git.run(["log", "--first-parent", "-m", "--name-only", f"--format={fmt}",
                   f"{since}..refs/heads/{spine}"], root, check=False).stdout.decode()
    found: list[tuple[str, bool, set[str]]] = []
    parts = out.split("\0")
    for i in range(1, len(parts) - 1, 2):
        ids = parts[i].split()
        rest = parts[i + 1].splitlines()
        trailer = rest[0].strip() if rest else ""
        paths = {p for p in rest[1:] if p.strip()}
        found.append((ids[0], len(ids) == 3 and bool(trailer), paths))
    return found


def scan(ledger: Ledger, root: Path, config: Config, rec: SliceRecord) -> list[ReopenRecord]:
    """Reopen every ball of the slice whose passed bytes changed; return the new reopens."""
    from leapgit.hookimpl.rules.passes import standing_pass

    out: list[ReopenRecord] = []
    merged = history.merge_record(ledger.require(), rec.slice)
    late = _spine_changes(root, merged.tip, config.spine) if merged else []
    for ball in rec.balls:
        passed = standing_pass(ledger.require(), rec.slice, ball)
        if passed is None:
            continue
        tip = git.rev_parse(f"refs/heads/{config.ball_branch(rec.slice, ball)}", root)
        tree = git.out(["rev-parse", f"{tip}^{{tree}}"], root) if tip else None
        if tree is not None and tree != passed.candidate and merged is None:
            found = reopen_if_moved(ledger, rec.slice, ball, tree, tip)
            if found:
                out.append(found)
            continue
        files = {t.path for t in passed.touched}
        hit = next(((c, p) for c, integrated, p in late if not integrated and p & files), None)
        if hit is not None:
            out.append(write_reopen(
                ledger, passed, None, "spine", hit[0],
                f"spine commit {hit[0][:12]} changes {', '.join(sorted(hit[1] & files))} of "
                "the merged ball outside an integration"))
    return out
