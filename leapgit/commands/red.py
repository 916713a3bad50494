"""`leap red SLICE BALL COMMIT` (T7.1): record the red commit before the build."""

from __future__ import annotations

from pathlib import Path

from leapgit.ledger.workspace import open_workspace
from leapgit.scoring.red import RedResult, carry_red, record_red
from leapgit.tribunal.worktree import once_a_tree


@once_a_tree
def carry(slice_id: str, ball_id: str, start: Path | str = ".") -> RedResult:
    return carry_red(open_workspace(start), slice_id, ball_id)


@once_a_tree
def red(slice_id: str, ball_id: str, commit: str, start: Path | str = ".") -> RedResult:
    return record_red(open_workspace(start), slice_id, ball_id, commit)


def lines(result: RedResult) -> list[str]:
    r = result.record
    out = [f"red {r.red} of {r.slice}/{r.ball}: commit {r.commit[:12]}, the proof fails there "
           f"(`{r.proof.command}` exited {r.proof.exit_code}) [T7.1]"]
    if r.carries is not None:
        out.append(f"  carries red {r.carries} onto the fresh stack base {r.base[:12]}: the "
                   "same frozen tests, on the dependencies' passes that stand now [L5]")
    if r.replaces is not None:
        out.append(f"  replaces red {r.replaces}: no round was built on it, so the newest red "
                   "before the first round is the one that counts")
    out += [f"  frozen: {t.path} {t.blob[:12]}" for t in r.tests]
    out.append(f"recorded in the ledger at {result.ledger_commit[:12]}")
    return out
