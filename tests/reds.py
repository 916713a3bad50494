"""Red first (T7.1) for test worlds: a ball is thrown only after its red, so a world whose
balls are thrown records each ball's red the way a thrower does: the failing contract test
committed with plumbing (no checkout moves) on the base the ball builds on, then `leap red`.
A dependent ball's red waits until its dependencies passed (L5: it builds on their code)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tests.support import leap


def red_of(repo: Path, slice_id: str, ball: str, files: Mapping[str, str],
           base: str | None = None) -> str:
    """Record ``files``, committed on ``base`` (default: the ball's base), as the red of
    ``slice_id/ball``; the red commit (the ball's branch starts there when thrown)."""
    from tests.scoring.world import commit_files

    sha = commit_files(repo, base or red_base(repo, slice_id, ball), files, f"red: {ball}")
    r = leap("red", slice_id, ball, sha, cwd=repo)
    assert r.code == 0, r
    return sha


def red_commit(repo: Path, slice_id: str, ball: str) -> str:
    """The commit of the ball's red that counts now."""
    from leapgit.ledger import history
    from leapgit.ledger.store import Ledger

    with Ledger(repo / ".git") as ledger:
        red = history.latest_red(ledger.require(), slice_id, ball)
    assert red is not None, f"{slice_id}/{ball} has no red"
    return red.commit


def red_base(repo: Path, slice_id: str, ball: str) -> str:
    """The commit the ball's red is built on, as `leap ball base` names it; the slice's
    base where leapgit has no such command."""
    from leapgit.ledger import query
    from leapgit.ledger.store import Ledger

    named = leap("ball", "base", slice_id, ball, cwd=repo)
    if named.code == 0:
        return named.out.split()[0]
    with Ledger(repo / ".git") as ledger:
        return query.load_slice(ledger.require(), slice_id).base


def red_ready(repo: Path, slice_id: str, reds: Mapping[str, Mapping[str, str]]
              ) -> dict[str, str]:
    """The red of every ball in ``reds`` that is ready to throw (L5) and has none yet:
    ball -> red commit."""
    from leapgit.ledger import history, query
    from leapgit.ledger.store import Ledger
    from leapgit.rules.readiness import assess

    with Ledger(repo / ".git") as ledger:
        view = ledger.require()
        rec = query.load_slice(view, slice_id)
        standing = assess(view, rec)
        todo = [b for b in rec.balls if b in reds and standing[b].verdict == "ready"
                and history.latest_red(view, slice_id, b) is None]
    return {b: red_of(repo, slice_id, b, reds[b]) for b in todo}


def shell_red(ball: str, path: str, wanted: str) -> dict[str, str]:
    """A shell contract test for ``ball``: it fails until ``path`` holds ``wanted``."""
    return {f"tests/{ball.lower()}.sh": f"grep -q '{wanted}' {path}\n"}
