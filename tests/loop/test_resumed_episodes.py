"""L3, L6: what a ball's earlier episodes say about its next step, read from the ledger as
`leap run` (``loop.steps.next_step``) and `leap status` read it. An episode leap stopped
(a Ctrl-C, a deadline) is no hold of the builder's, but only when the builder said 0 in
none of its rounds; and a ledger whose throw names itself in ``resumed_from`` (which an
older server took) ends the walk back instead of hanging every command (a blind review)."""

from __future__ import annotations

from pathlib import Path

from leapgit.ledger import layout, query
from leapgit.ledger.store import Ledger
from leapgit.loop.steps import Step, next_step
from leapgit.records import yamlio
from leapgit.records.types import STOPPED, Checkpoint, Receipt, ThrowRecord
from leapgit.rules.readiness import assess
from tests.slices.drafts import base_draft, draft_repo, write
from tests.support import git, leap

NOW = "2025-01-01T00:00:00Z"
STOP = "interrupted: leap stopped the builder; the round ended at 0"  # claim: False
HOLD = "outcome 0: I am stuck on the contract"  # the builder's own word, claim: True


def _ledger(tmp_path: Path, episodes: list[list[str]], stopped: bool,
            resumed_from: dict[int, int] | None = None) -> Path:
    """Slice s1 cut, and ball a's ``episodes`` written straight to the ledger: each a
    throw, its rounds at 0 (``HOLD`` the builder's, ``STOP`` leap's) and a checkpoint
    (``stopped``: leap stopped its last round)."""
    root = draft_repo(tmp_path / "repo")
    assert leap("init", cwd=root).code == 0
    git("add", ".leap/config.yaml", cwd=root)
    git("commit", "-q", "-m", "config", cwd=root)
    assert leap("slice", "cut", str(write(tmp_path / "s.yaml", base_draft())),
                cwd=root).code == 0
    base = git("rev-parse", "HEAD", cwd=root)
    records: dict[str, bytes] = {}
    for number, rounds in enumerate(episodes, start=1):
        back = (resumed_from or {}).get(number, number - 1 if number > 1 else None)
        thrown = ThrowRecord("s1", "a", number, 1, base, "leap/ball/s1/a", NOW,
                             resumed_from=back)
        records[layout.throw_path("s1", "a", number)] = yamlio.dumps(thrown.to_dict())
        for n, said in enumerate(rounds, start=1):
            receipt = Receipt(slice="s1", ball="a", episode=number, round=n, outcome=0,
                              evidence=said, recorded_at=NOW, claim=said == HOLD)
            records[layout.receipt_path("s1", "a", number, n)] = yamlio.dumps(
                receipt.to_dict())
        checkpoint = Checkpoint(
            slice="s1", ball="a", episode=number, rounds_used=len(rounds),
            tried=tuple(rounds), last_evidence=rounds[-1], recorded_at=NOW,
            reason=f"{STOPPED}: interrupted" if stopped else
            f"round limit {len(rounds)} reached without a pass (L6)")
        records[layout.checkpoint_path("s1", "a", number)] = yamlio.dumps(checkpoint.to_dict())
    with Ledger(root / ".git") as ledger:  # as a ledger synced from elsewhere holds them
        ledger.append(records, "episodes")
    return root


def _step(root: Path) -> Step:
    with Ledger(root / ".git") as ledger:
        view = ledger.require()
        standing = assess(view, query.load_slice(view, "s1"))["a"]
        return next_step(view, "s1", standing, 4, True, False)


def test_an_episode_the_builder_held_is_its_hold_though_leap_stopped_the_last_round(
        tmp_path: Path) -> None:
    """The builder said 0 three times and leap stopped round 4 (a `--max-minutes` deadline,
    say): the builder held the episode. Before, the last round alone decided, so `leap run`
    resumed it by itself, episode after episode, and never reached the L3 stop."""
    root = _ledger(tmp_path, [[HOLD] * 3 + [STOP]], stopped=True)
    step = _step(root)
    assert step.kind == "stop" and "--resume-holds" in (step.hint or ""), step
    three = _ledger(tmp_path / "three", [[HOLD] * 3 + [STOP]] * 3, stopped=True)
    assert "spec needs repair" in _step(three).reason


def test_an_episode_leap_stopped_in_every_round_is_resumed_by_itself(tmp_path: Path) -> None:
    root = _ledger(tmp_path, [[STOP] * 4], stopped=True)
    step = _step(root)
    assert step.kind == "resume" and "leap stopped its last round" in step.reason, step


def test_a_throw_that_names_itself_in_resumed_from_ends_the_walk_back(tmp_path: Path) -> None:
    """Episode 2 says it resumed episode 2: `leap status` and `leap run`'s step walked back
    through it forever. Both end now, reading only the earlier episodes it can reach."""
    root = _ledger(tmp_path, [[HOLD] * 4, [HOLD] * 4], stopped=False, resumed_from={2: 2})
    shown = leap("status", cwd=root, timeout=30, subprocess=True)
    assert shown.code == 0 and "s1" in shown.out, shown
    assert _step(root).kind in ("stop", "resume")
