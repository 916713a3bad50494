"""Refused commits kept as evidence (L6: a rollback undoes only the ball's changes, and
loses nothing).

A round refused (-1) in a ball worktree, by a breach the post-commit hook or `leap round`
found or by the builder's own word, keeps its commit under
``refs/leap/evidence/<slice>/<ball>/<episode>-<round>`` before anything is rolled back, so
the commit outlives the ball's branch (a prune, a fresh throw after a respec) and git's gc;
a breach's commit then leaves the branch, which goes back to the round's start (``rewind``).
`leap audit` lists each ref against the ledger's receipt.

The refs are local: the server refuses refs under ``refs/leap/`` (their short names shadow
``leap/``, L8, ``rules.refs``), so they are never pushed; the ledger's receipt names the
commit for everyone else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dulwich.file import FileLocked

from leapgit import git
from leapgit.ledger import query

if TYPE_CHECKING:
    from leapgit.ledger.view import LedgerView

PREFIX = "refs/leap/evidence/"
LOCAL = "local: the server refuses refs under refs/leap/"
_ID = "[A-Za-z0-9][A-Za-z0-9_-]{0,63}"
_NAME = re.compile(rf"^refs/leap/evidence/({_ID})/({_ID})/([1-9][0-9]{{0,8}})-([1-9][0-9]{{0,8}})$")


def evidence_ref(slice_id: str, ball_id: str, episode: int, round_no: int) -> str:
    return f"{PREFIX}{slice_id}/{ball_id}/{episode}-{round_no}"


def keep(repo: Any, slice_id: str, ball_id: str, episode: int, round_no: int,
         commit: str) -> str | None:
    """Point the round's evidence ref at ``commit`` (a dulwich ``Repo`` of the common git
    dir); the ref's name, or None when it could not be written (it names another commit
    already, or the ref store is locked): the receipt on the ledger stands either way."""
    name = evidence_ref(slice_id, ball_id, episode, round_no)
    try:
        added = repo.refs.add_if_new(name.encode(), commit.encode(),
                                     message=b"leap: refused round kept as evidence (L6)")
    except (FileLocked, OSError):
        return None
    if added or repo.refs[name.encode()] == commit.encode():
        return name
    return None


@dataclass(frozen=True)
class Evidence:
    ref: str
    slice: str
    ball: str
    episode: int
    round: int
    commit: str
    recorded: bool  # the ledger holds a -1 receipt of that round naming this commit

    def to_json(self) -> dict[str, Any]:
        return {"ref": self.ref, "slice": self.slice, "ball": self.ball,
                "episode": self.episode, "round": self.round, "commit": self.commit,
                "recorded": self.recorded}

    def line(self) -> str:
        at = f"evidence {self.ref} at {self.commit[:12]}: "
        if self.recorded:
            return at + (f"round {self.round} of {self.slice}/{self.ball}, refused (-1) as the "
                         f"ledger records ({LOCAL})")
        return at + (f"the ledger records no refused round {self.round} of "
                     f"{self.slice}/{self.ball} episode {self.episode} at this commit")


def parse(name: str) -> tuple[str, str, int, int] | None:
    found = _NAME.match(name)
    if found is None:
        return None
    return found[1], found[2], int(found[3]), int(found[4])


def listed(root: Path, view: LedgerView) -> list[Evidence]:
    """Every evidence ref of the repository, each against the ledger's receipt of its round
    (one git call; a ref under the prefix of another shape is no evidence and not listed)."""
    raw = git.run(["for-each-ref", "--format=%(objectname) %(refname)", PREFIX], root).stdout
    out: list[Evidence] = []
    for line in raw.decode("utf-8", "surrogateescape").split("\n"):  # names may hold U+2028
        commit, _, name = line.partition(" ")
        found = parse(name)
        if found is None:
            continue
        slice_id, ball_id, episode, round_no = found
        recorded = any(r.round == round_no and r.outcome == -1 and r.commit == commit
                       for r in query.receipts(view, slice_id, ball_id, episode))
        out.append(Evidence(name, slice_id, ball_id, episode, round_no, commit, recorded))
    return out
