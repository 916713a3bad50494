"""A finding's red (T7.6): on any refuse, every finding becomes a new failing test that fails
for the finding's real reason; the builder fixes it, and the jurors convene again.

The test author commits the new tests on the candidate the score refused; this records that
commit as a further red of the ball, for that episode: the commit is the candidate's one
child, it only adds new test files inside the scope (the contract red's frozen tests stay
byte for byte), and the ball's `tests` (which run every test file, where a focused proof
may not) run and fail there because a test failed. From then
on its tests are frozen for the episode's rounds like the contract's (``RedRecord``'s
``frozen_changes``), and its commit is a red test, no round (``rules.balls.not_rounds``).
``advance`` puts the ball's branch on it, so the builder's next round starts from it."""

from __future__ import annotations

from pathlib import Path

from leapgit import git
from leapgit.errors import RuleViolation
from leapgit.git import ABSENT, blob_at, changed_files
from leapgit.ledger import history, layout, query
from leapgit.ledger.workspace import Workspace
from leapgit.records import trailers as tr
from leapgit.records import yamlio
from leapgit.records.scoring import FileBlob, RedRecord, RunEvidence
from leapgit.rules.episodes import answers_findings, current_episode
from leapgit.scoring.red import RedResult, _again, _fails_at_red
from leapgit.slices.diff import out_of_scope
from leapgit.timeutil import now_iso

RULE = "T7.6"


def record_finding_red(ws: Workspace, slice_id: str, ball_id: str, rev: str,
                       score_no: int) -> RedResult:
    root = ws.paths.root
    with ws.ledger() as ledger:
        view = ledger.require()
        scores = history.scores(view, slice_id, ball_id)
        score = next((s for s in scores if s.score == score_no), None)
        if score is None or not answers_findings(score) or scores[-1].score != score_no:
            raise RuleViolation(f"score {score_no} of {slice_id}/{ball_id} is not its latest "
                                "refusal on the tribunal's findings", rule=RULE)
        ball = query.load_ball_version(view, slice_id, ball_id, score.spec_version)
        commit = git.rev_parse(rev, root)
        parents = git.out(["rev-list", "--parents", "-n", "1", commit or rev], root).split()[1:]
        if commit is None or parents != [score.commit]:
            raise RuleViolation(f"the finding's red {rev} is not a child of the refused "
                                f"candidate {score.commit[:12]}", rule=RULE,
                                hint="make red.command commit the new tests on the "
                                f"candidate, {_again(ball, '', True)}")
        added = changed_files(root, score.commit, commit)
        held = [p for p in added if blob_at(root, score.commit, p) != ABSENT]
        if held or not added:
            raise RuleViolation("a finding's red only adds new test files: "
                                + (f"it changes {', '.join(held)}" if held else "it adds none"),
                                rule=RULE, hint="make red.command add the finding's test as "
                                f"a new file, {_again(ball, '', True)}")
        outside = out_of_scope(added, ball)
        if outside:
            raise RuleViolation(f"the finding's red adds files outside the ball's scope: "
                                f"{', '.join(outside)}", rule="L4",
                                hint="make red.command keep to the scope "
                                f"({', '.join(ball.paths)}), {_again(ball, '', True)}")
        # the ball's `tests` run every test file, the new ones too (a focused proof may not)
        run = _fails_at_red(root, ball._replace(proof=ball.tests or ball.proof), commit,
                            ws.config.tribunal.test_timeout, authored=True, finding=True)
        number = history.next_number(view, f"{layout.ball_dir(slice_id, ball_id)}/reds")
        evidence = RunEvidence("red", run.command, run.exit_code, run.seconds,
                               run.output_tail, f"red {commit[:12]}")
        record = RedRecord(slice_id, ball_id, number, commit, score.commit,
                           tuple(FileBlob(p, blob_at(root, commit, p)) for p in added),
                           evidence, now_iso(), None, score.score, score.episode)
        written = ledger.append(
            {layout.red_path(slice_id, ball_id, number): yamlio.dumps(record.to_dict())},
            f"red {number} of {slice_id}/{ball_id}: {len(added)} test file(s) for the "
            f"findings of score {score.score} (T7.6)",
            [(tr.SLICE, slice_id), (tr.BALL, ball_id), (tr.RED, commit)])
    return RedResult(record, written.commit)


def pending(ws: Workspace, slice_id: str, ball_id: str) -> RedRecord | None:
    """The episode's finding red the ball's branch does not stand on yet: the branch is
    still at the candidate it was built on (a run killed between record and advance)."""
    with ws.ledger() as ledger:
        view = ledger.require()

        ep = current_episode(view, slice_id, ball_id)
        found = history.finding_reds(view, slice_id, ball_id, ep.throw.episode)
        worktree = ep.throw.worktree
    if not found or not worktree:
        return None
    red = found[-1]
    tip = git.rev_parse(f"refs/heads/{ws.config.ball_branch(slice_id, ball_id)}",
                        ws.paths.root)
    return red if tip == red.base else None


def advance(ws: Workspace, red: RedRecord, worktree: Path) -> None:
    """The ball's branch moves onto its finding red, a fast-forward in its worktree (clean
    between rounds): the builder's next round starts from the new failing tests."""
    git.run(["merge", "--ff-only", "--quiet", red.commit], worktree)
