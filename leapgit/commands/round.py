"""`leap round SLICE BALL --outcome -1|0|1 --evidence TEXT`: close a round explicitly (L6)."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Literal

from leapgit.errors import Hold
from leapgit.ledger import query
from leapgit.ledger.workspace import open_workspace
from leapgit.rules.episodes import current_episode, score_hint, unscored_claim
from leapgit.worktrees import place
from leapgit.worktrees.closeround import RoundClosed, admin_dir, close_round
from leapgit.worktrees.drivelock import check_free
from leapgit.worktrees.rounds import FOLDING_ENV


def close(slice_id: str, ball_id: str, outcome: Literal[-1, 0, 1], evidence: str,
          start: Path | str = ".") -> RoundClosed:
    ws = open_workspace(start)
    with ws.ledger() as ledger:
        view = ledger.require()
        query.load_slice(view, slice_id)
        episode = current_episode(view, slice_id, ball_id)
        if os.environ.get(FOLDING_ENV):  # a builder inside a round a run drives
            raise Hold(f"this round of {slice_id}/{ball_id} is driven by the leapgit run "
                       "that started this builder: that run closes it", rule="L3",
                       hint=f"write the round's outcome to $LEAP_REPORT (`outcome: {outcome}` "
                            "and `evidence: ...`) and exit")
        if episode.throw.published:  # a hunt: it rolled the scope back into the checkout
            from leapgit.scoring.score import shared_remote

            remote = shlex.quote(shared_remote(ws, slice_id, ball_id))
            raise Hold(f"{slice_id}/{ball_id} is published to workers: a worker builds its "
                       "rounds in its own clone and records each with its commit in one push "
                       "(L6); no round of it is closed here", rule="L3",
                       hint=f"`leap worker --remote {remote} --slice {slice_id}` builds it; "
                            f"`leap status {slice_id}` shows where it stands")
        claim = None if episode.spent(ws.config.round_cap) else unscored_claim(view, episode)
        if claim is not None:  # a newcomer's hunt: it recorded a round over the claim
            raise Hold(f"round {claim.round} of {slice_id}/{ball_id} claims a pass that waits "
                       "for its score (L7: a claim is no pass): no further round is closed "
                       "before it", rule="L7",
                       hint=score_hint(episode, claim, False))
        # L3: a run that drives the ball closes its round itself; a second closer would
        # record a round under its builder (the dogfooding review)
        path = place.worktree_of(ws, episode.throw)
        admin = admin_dir(ws.paths.common_dir, path)
        check_free(admin / "leap" if admin else None, path, f"{slice_id}/{ball_id}")
        ball = query.load_ball_version(view, slice_id, ball_id, episode.throw.spec_version)
        closed = close_round(ledger, ws.paths.common_dir, ball, episode, outcome=outcome,
                             evidence=evidence, round_cap=ws.config.round_cap,
                             recorded_by="leap round")
    if closed.rollback_failed is not None:
        raise closed.rollback_failed
    return closed
