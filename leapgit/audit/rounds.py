"""The audit's round count of a pass (L6): the candidate's commits since its base, the red
test aside, against the receipts of its episode. The same count as the ball branch's rule
(``rules.balls.count_rounds``): the receipts plus the commits no receipt records,
commits of earlier episodes aside. A ball branch holds no merge (L9), so the candidate's
history is a line, read from the commit graph git listed once for the whole audit."""

from __future__ import annotations

from leapgit.audit.graph import Graph
from leapgit.ledger.view import LedgerView
from leapgit.records.scoring import ScoreRecord
from leapgit.records.types import Config
from leapgit.rules.balls import count_rounds, recorded_rounds


def round_problems(graph: Graph, view: LedgerView, config: Config, s: ScoreRecord,
                   red: str, findings: frozenset[str] = frozenset()
                   ) -> list[tuple[str, str]]:
    """(commit, why) for each way the pass's candidate holds rounds its receipts do not;
    ``findings``: the episode's findings' red commits (T7.6), red tests and no rounds."""
    if graph.node(s.commit) is None:
        return []  # the candidate is not here: the candidate check notes it
    line = graph.line_since(s.commit, s.base)
    if line is None:
        return [(s.commit, f"the candidate's history since its base {s.base[:12]} is no "
                 "line of rounds (a merge, or another base): its rounds cannot be counted")]
    rounds = line[:line.index(red)] if red in line else line
    rounds = [c for c in rounds if c not in findings]
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
