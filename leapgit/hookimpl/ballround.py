"""The post-commit work in a ball worktree: check the commit (``rules.commits.check_commit``
and the round count, the same rule code ``pre-receive`` and `leap round` run) and record
the round through ``record_round``."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from leapgit.errors import LeapError, UsageError, printable, shell_word
from leapgit.hookimpl.post_commit import ball_of_branch
from leapgit.ledger import history, query
from leapgit.ledger.store import Ledger
from leapgit.records.cache import RecordCache
from leapgit.records.config import load_config
from leapgit.records.trailers import OUTCOME, ROUND, RoundTrailers, round_trailers
from leapgit.rules.balls import check_round_count, not_rounds, recorded_rounds
from leapgit.rules.commits import BREACH, check_commit
from leapgit.rules.episodes import current_episode, episode_reds, spent_hint
from leapgit.rules.objects import Objects
from leapgit.worktrees.rounds import FOLDING_ENV, record_round

if TYPE_CHECKING:
    from dulwich.objects import Commit

    from leapgit.records.types import BallRecord, Receipt, ThrowRecord
    from leapgit.rules.refusal import Refusal
    from leapgit.worktrees.rollback import RolledBack

HOOK = "post-commit"
RECORDED_BY = "post-commit"


def say(line: str = "") -> None:
    print(f"leap {HOOK}: {printable(line)}", file=sys.stderr)  # F9: paths are shown escaped


def _shown(path: str) -> str:
    """A path as text a record can hold: a file name that is not UTF-8 (read with
    surrogateescape) shows its bytes as ``\\xff`` escapes."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def undo_commands(objects: Objects, base: str, paths: list[str]) -> list[str]:
    """Concrete git commands that put only ``paths`` back as they were at ``base``."""
    base_tree = objects.commit(base).tree
    there = [p for p in paths if objects.blob_id_at(base_tree, p) is not None]
    new = [p for p in paths if p not in there]
    out = []
    if there:
        out.append(f"git restore --source={base[:12]} --staged --worktree -- "
                   + " ".join(shell_word(p) for p in there))
    if new:
        out.append("git rm -q --cached -- " + " ".join(shell_word(p) for p in new)
                   + " && rm -f -- " + " ".join(shell_word(p) for p in new))
    return out


# the paths a breach's receipt and report name one by one: a round that touched 10^5 files
# outside its scope wrote a receipt past the ledger's 1 MiB cap, so its -1 was never
# recorded (and the episode went on), and printed 10^5 lines
MAX_NAMED = 50


def breach_evidence(scope: list[Refusal]) -> str:
    """A breach receipt's evidence: its rules and the first ``MAX_NAMED`` paths, counted
    (``roundcheck.listed``, as `leap round` names them)."""
    from leapgit.worktrees.roundcheck import listed

    return ("scope breach (" + ", ".join(sorted({r.rule for r in scope})) + "): "
            + listed([_shown(r.path) if r.path else "merge" for r in scope], most=MAX_NAMED))


def _amend(trailers: RoundTrailers, round_no: int) -> str:
    """The `git commit --amend` that gives a commit the round trailers it lacks or has
    wrong (L6): each replaces any of its key already there, so git and leapgit read one."""
    fixes = [f"--trailer '{key}: {value}'" for key, value, right in (
        (ROUND, str(round_no), trailers.round == round_no),
        (OUTCOME, "OUTCOME", trailers.outcome is not None)) if not right]
    return " ".join(["git -c trailer.ifExists=replace commit --amend --no-edit", *fixes])


def _kept(repo: object, episode: int, receipt: Receipt, commit: str) -> str | None:
    """L6: the refused commit, kept under its evidence ref before any rollback; the ref."""
    from leapgit.worktrees.evidence import keep

    return keep(repo, receipt.slice, receipt.ball, episode, receipt.round, commit)


def _kept_line(name: str | None) -> str | None:
    from leapgit.worktrees.evidence import LOCAL

    return f"kept as evidence: {name} ({LOCAL})" if name else None


def _leave(ledger: Ledger, common_dir: str, top: str, ball: BallRecord, thrown: ThrowRecord,
           kept: str | None, commit: Commit) -> tuple[RolledBack | None, LeapError | None]:
    """L6, issue 14: a breach refused outside `leap throw --run` leaves the ball branch and
    the worktree as ``close_round`` leaves one (``leave_refused``): the branch back at the
    commit's parent, the round's changes outside the scope undone, the scope rolled back.
    Under `--run` the run does it, with what it saw before the builder ran."""
    if kept is None or os.environ.get(FOLDING_ENV) or not commit.parents:
        return None, None

    from leapgit.worktrees.closeround import leave_refused

    return leave_refused(ledger.require(), Path(common_dir), Path(top), ball,
                         thrown, None, kept, commit.parents[0].decode(), commit.id.decode())


def _breach(objects: Objects, ball: BallRecord, base: str, sha: str,
            found: list[Refusal], recorded: str, kept: str | None = None,
            left: tuple[RolledBack | None, LeapError | None] = (None, None)) -> None:
    paths = sorted({r.path for r in found if r.path})
    rolled, failed = left
    say("!" * 64)
    say(f"SCOPE BREACH in ball {ball.slice}/{ball.ball}, commit {sha[:12]}")
    for r in found[:MAX_NAMED]:
        say(f"  [{r.rule}] {r.path or '(whole commit)'}: {r.message}")
    if len(found) > MAX_NAMED:
        say(f"  ... and {len(found) - MAX_NAMED} more ({len(found)} in all)")
    say(f"  {recorded}")
    if kept:
        say(f"  {_kept_line(kept)}")
    if rolled is not None:
        say(f"  {rolled.summary()}")
    if failed is not None:
        say(f"  {failed.lines()[0]}")
    if rolled is None or rolled.rewound is None:
        say(f"  roll back (the ball's rollback: {ball.rollback}); only these paths:")
        for command in undo_commands(objects, base, paths):
            say(f"    {command}")
    say("!" * 64)


def on_commit(branch: str, top: str | None = None, common_dir: str | None = None) -> None:
    """Check and record the commit just made on ``branch``. ``top`` and ``common_dir`` are
    the work tree and the shared git dir when the caller knows them (the hook reads them
    from files, which spares it a ``git rev-parse``)."""
    if top is None or common_dir is None:
        from leapgit.git import discover

        paths = discover(".")
        top, common_dir = str(paths.top), str(paths.common_dir)
    config = load_config(Path(top), RecordCache(Path(common_dir), "config"))
    found = ball_of_branch(branch, config.ball_branch_prefix)
    if found is None:
        return
    slice_id, ball_id = found
    ref = f"refs/heads/{branch}"
    with Ledger(Path(common_dir), config.ledger_ref, cache_records=True) as ledger:
        view = ledger.view()
        try:
            ball = query.load_ball(view, slice_id, ball_id)
            episode = current_episode(view, slice_id, ball_id)
        except UsageError as exc:
            say(f"{branch}: {exc.lines()[0]}; the round was not recorded")
            return
        objects = Objects(ledger.repo)
        head = objects.ref(ref)
        if head is None:
            return

        commit = objects.commit(head)
        if os.environ.get(FOLDING_ENV) and round_trailers(commit.message).round is None:
            say(f"{slice_id}/{ball_id}: the leapgit run that started this builder folds "
                "this commit into the round it closes, and judges their sum")
            return
        base = episode.throw.base
        reds = episode_reds(view, slice_id, ball_id, episode.throw.episode) \
            if history.has(view, slice_id, ball_id, "reds") else []  # mostly none: no import
        pre = not_rounds(objects, reds, base, head)
        rounds_here = [c for c in objects.new_commits(head, [base]) if c.id.decode() not in pre]
        # the same judgment as pre-receive's and `leap round`'s (issue 13)
        problems = check_commit(objects, ref, ball, commit, config.round_cap, reds, head in pre)
        problems += check_round_count(ref, rounds_here, config.round_cap,
                                      recorded_rounds(view, slice_id, ball_id))
        scope = [r for r in problems if r.rule in BREACH]
        trailers = round_trailers(commit.message)
        tree = commit.tree.decode()
        try:
            if scope:
                done = record_round(
                    ledger, slice_id, ball_id, outcome=-1, claim=False, commit=head,
                    candidate=tree, recorded_by=RECORDED_BY, round_cap=config.round_cap,
                    worktree=top, quick=True, evidence=breach_evidence(scope),
                )
                kept = _kept(ledger.repo, episode.throw.episode, done.receipt, head)
                _breach(objects, ball, base, head, scope,
                        f"recorded round {done.receipt.round} as -1 (refuse) in the ledger",
                        kept, _leave(ledger, common_dir, top, ball, episode.throw, kept, commit))
                return
        except LeapError as exc:  # a rule, or a ledger that kept moving: the breach is shown
            _breach(objects, ball, base, head, scope, f"not recorded: {exc.lines()[0]}")
            return
        spent = episode.closed is not None or episode.spent(config.round_cap)
        for r in problems:  # past the last round, record_round's refusal says what to do now
            say(f"[{r.rule}] {r.message}" + ("" if spent and r.rule == "L6" else
                                             f"; do: {r.hint}"))
        divided = any(r.kind == "two-readings" for r in problems)  # refused by the server too
        if trailers.round is None or trailers.outcome is None or divided:
            if spent:  # trailers would not help: there is no further round (review r9 F3)

                say(f"the round was not recorded: {slice_id}/{ball_id} used its rounds; "
                    + spent_hint(view, episode, head, top))
                return
            amend = _amend(trailers, len(episode.receipts) + 1)
            say(f"the round was not recorded: amend the commit with its trailers (`{amend}`"
                + (", OUTCOME one of -1, 0, 1" if "OUTCOME" in amend else "")
                + "); the server refuses a round without them" if not
                divided else "the round was not recorded: amend the message so that git reads "
                "its trailers one way (`git commit --amend`); the server refuses it as it is")
            return
        done = record_round(
            ledger, slice_id, ball_id, outcome=trailers.outcome, claim=True, commit=head,
            candidate=tree, recorded_by=RECORDED_BY, round_cap=config.round_cap,
            worktree=top, expect_round=trailers.round, quick=True,
            evidence=trailers.evidence or commit.message.decode("utf-8", "replace").split("\n")[0],
        )
        reopened = None
        if history.has(view, slice_id, ball_id, "scores"):  # only a score can hold a pass
            from leapgit.scoring.reopen import reopen_if_moved

            try:
                reopened = reopen_if_moved(ledger, slice_id, ball_id, tree, head)
            except LeapError as exc:  # the round stands; only the L8 check is left to do
                say(f"recorded round {done.receipt.round} of {slice_id}/{ball_id}; the reopen "
                    f"check (L8) failed: {exc.lines()[0]}; `leap merge {slice_id}` records it")
                return
        if reopened is not None:
            say(f"[L8] {slice_id}/{ball_id} had passed as {reopened.candidate[:12]}; this commit "
                f"changes its bytes: the ball is reopened (reopen {reopened.reopen}); re-score it")
        if done.written is not None and done.receipt.outcome == -1:
            kept = _kept(ledger.repo, episode.throw.episode, done.receipt, head)
            if kept:
                say(_kept_line(kept) or "")
        if done.written is not None:
            note = "; checkpoint written" if done.checkpoint else ""
            say(f"recorded round {done.receipt.round} of {slice_id}/{ball_id}: outcome "
                f"{done.receipt.outcome}{' (a claim)' if trailers.outcome == 1 else ''}{note}")
