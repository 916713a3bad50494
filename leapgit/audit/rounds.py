"""The audit's round count of a pass (L6), re-derived with plain git: the candidate's
commits since its base, the red test aside, against the receipts of its episode. The same
count as the ball branch's rule (``rules.balls.count_rounds``): the receipts plus the
commits no receipt records, commits of earlier episodes aside. A ball branch holds
no merge (L9), so the candidate's history is a line walked parent by parent through one
`git cat-file --batch` process for the whole audit."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import IO

from leapgit import git
from leapgit.ledger.store import LedgerView
from leapgit.records.scoring import ScoreRecord
from leapgit.records.types import Config
from leapgit.rules.balls import count_rounds, recorded_rounds

_MAX_LINE = 10_000  # a longer "line of rounds" is no ball branch


class Parents:
    """The parents of commits, read through one `git cat-file --batch` process."""

    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen(["git", "cat-file", "--batch"], cwd=root,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env=git.scrubbed_env())

    def of(self, sha: str) -> list[str] | None:
        """The parents of commit ``sha``; None when it is not a commit here."""
        stdin, stdout = self._pipes()
        stdin.write(sha.encode() + b"\n")
        stdin.flush()
        header = stdout.readline().split()
        if len(header) != 3:
            return None
        body = stdout.read(int(header[2]) + 1)
        if header[1] != b"commit":
            return None
        head = body.split(b"\n\n", 1)[0].splitlines()
        return [line[7:].decode() for line in head if line.startswith(b"parent ")]

    def _pipes(self) -> tuple[IO[bytes], IO[bytes]]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        return self.proc.stdin, self.proc.stdout

    def close(self) -> None:
        stdin, _ = self._pipes()
        stdin.close()
        self.proc.wait()


def line_since(parents: Parents, head: str, base: str) -> list[str] | None:
    """The commits from ``head`` back to ``base`` (excluded), newest first; None when the
    history is no line leading back to ``base`` (a merge, a root, a missing commit)."""
    out: list[str] = []
    sha = head
    while sha != base and len(out) < _MAX_LINE:
        found = parents.of(sha)
        if found is None or len(found) != 1:
            return None
        out.append(sha)
        sha = found[0]
    return out if sha == base else None


def round_problems(parents: Parents, view: LedgerView, config: Config, s: ScoreRecord,
                   red: str) -> list[tuple[str, str]]:
    """(commit, why) for each way the pass's candidate holds rounds its receipts do not."""
    if parents.of(s.commit) is None:
        return []  # the candidate is not here: the candidate check notes it
    line = line_since(parents, s.commit, s.base)
    if line is None:
        return [(s.commit, f"the candidate's history since its base {s.base[:12]} is no "
                 "line of rounds (a merge, or another base): its rounds cannot be counted")]
    rounds = line[:line.index(red)] if red in line else line
    recorded = recorded_rounds(view, s.slice, s.ball, s.episode)
    count = count_rounds(reversed(rounds), recorded)  # the branch rule's own count
    out = []
    last = next((r for r in reversed(recorded.receipts) if r.round == s.rounds), None)
    if last is not None and last.commit and last.commit != s.commit:
        out.append((s.commit, f"the scored commit is not {last.commit[:12]}, the commit of "
                    f"its last receipt (round {last.round})"))
    if count.over(config.round_cap):
        out.append((s.commit, f"{count.used} rounds: {count.recorded} receipt(s) and "
                    f"{len(count.unrecorded)} commit(s) since the base that no receipt records; "
                    "no fifth round"))
    return out
