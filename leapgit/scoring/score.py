"""`leap score SLICE BALL` (L7): the builder never scores itself. The outcome is derived
from the candidate (the tip of the ball's branch) in order, stopping at the first failure:
source check, keep-or-revert, tests and live proof, blind review, provenance. Every scoring
is one score record (``claim: false``) with all evidence gathered; only when all five steps
hold is it a pass record (outcome 1, with its provenance chain). A failed step is -1; a step
that could not decide (a timeout, a juror that never answered) is 0."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from leapgit import git
from leapgit.errors import Hold, RuleViolation, UsageError
from leapgit.ledger import history, layout, query
from leapgit.ledger.store import Ledger, LedgerView, Written
from leapgit.ledger.workspace import Workspace
from leapgit.records import trailers as tr
from leapgit.records import yamlio
from leapgit.records.config import first_init
from leapgit.records.scoring import (
    FileBlob,
    MetricOutcome,
    PassProvenance,
    RedRecord,
    ReopenRecord,
    RunEvidence,
    ScoreRecord,
    Step,
)
from leapgit.records.types import BallRecord
from leapgit.rules.balls import check_round_count, contract_red, recorded_rounds, round_commits
from leapgit.rules.episodes import Episode, current_episode, episode_reds, put_back, score_hint
from leapgit.rules.objects import Objects
from leapgit.rules.passes import current_pass, pass_problems
from leapgit.scoring.keep import keep_or_revert
from leapgit.scoring.proofrun import Proved, run_proofs
from leapgit.scoring.reopen import reopen_if_moved
from leapgit.scoring.review import Reviewed, convene_ball, recorded
from leapgit.scoring.source import check_source
from leapgit.timeutil import now_iso
from leapgit.tribunal.identity import Builder, parse_builder
from leapgit.worktrees import place

Echo = Callable[[str], None]
_RESULT = {"ok": 1, "skipped": 1, "fail": -1, "hold": 0}


@dataclass(frozen=True)
class Scored:
    record: ScoreRecord
    ledger_commit: str | None
    reopened: tuple[ReopenRecord, ...] = ()
    already: bool = False
    shared: str | None = None  # the remote the score was pushed to (`leap score --remote`)


@dataclass
class _Evidence:
    steps: list[Step] = field(default_factory=list)
    runs: list[RunEvidence] = field(default_factory=list)
    touched: tuple[FileBlob, ...] = ()
    consumers: tuple[FileBlob, ...] = ()
    metric: MetricOutcome | None = None
    run_id: str | None = None
    review: Reviewed | None = None
    proved: Proved | None = None

    @property
    def last(self) -> Step:
        return self.steps[-1]

    def stopped(self) -> bool:
        return _RESULT[self.last.result] != 1


def declared_builder(ws: Workspace, builder: str | None, then: str | None = None
                     ) -> tuple[Builder, str]:
    """Who built (T4): ``--builder``, else ``builder.identity``. ``then``: a caller with no
    ``--builder`` option (`leap run`) names the command that goes on once the config says
    it, instead of the option it does not have."""
    text = builder or ws.config.builder_identity
    if not text:
        how = "pass --builder model=ID,family=F,session=S or set builder.identity" \
            if then is None else \
            f"set builder.identity (model=ID,family=F,session=S), then {then}"
        raise UsageError("the builder is not declared", file=".leap/config.yaml",
                         field="builder.identity", rule="T4",
                         hint=first_init(ws.main_top or ws.paths.root, how))
    return parse_builder(text), text


def shared_remote(ws: Workspace, slice_id: str, ball_id: str, spine: str | None = None
                  ) -> str:
    """The shared remote a published ball's workers build from, by name, as a hint names
    it: the one the spine tracks (L9: `leap run --remote` takes no other), else the one
    whose copy of the ball's branch this clone keeps, else this clone's only remote;
    ``REMOTE`` when that leaves more than one. Its name as git has it: quoted where it is
    put into a command's text."""
    root = ws.paths.root
    tracked = git.branch_remote(root, spine) if spine else None
    names = git.remotes(root)
    if tracked in names:
        return tracked
    if len(names) > 1:  # the remotes whose copy of the ball's branch this clone keeps
        branch = f"refs/heads/{ws.config.ball_branch(slice_id, ball_id)}"
        refs = git.run(["for-each-ref", "--format=%(refname)"], root).stdout
        names = git.remotes_holding(branch, refs.decode("utf-8", "surrogateescape").split(),
                                    names) or names
    return names[0] if len(names) == 1 else "REMOTE"


def from_the_remote(ws: Workspace, slice_id: str, ball_id: str) -> str:
    """Where a published ball's rounds are: on the shared remote, built by workers; the
    command that scores the remote's copy (the remote named when this clone has one)."""
    remote = shlex.quote(shared_remote(ws, slice_id, ball_id))
    return (f"it is published to workers, whose rounds land on the remote: `leap score "
            f"{slice_id} {ball_id} --remote {remote}` scores the remote's copy")


def _published(view: LedgerView, slice_id: str, ball_id: str) -> bool:
    """Whether the ball's last throw published it to workers (False: never thrown)."""
    numbers = query.episodes(view, slice_id, ball_id)
    thrown = query.throw(view, slice_id, ball_id, numbers[-1]) if numbers else None
    return thrown is not None and thrown.published


def _candidate(ws: Workspace, view: LedgerView, slice_id: str, ball_id: str) -> str:
    branch = ws.config.ball_branch(slice_id, ball_id)
    tip = git.rev_parse(f"refs/heads/{branch}", ws.paths.root)
    if tip is None and _published(view, slice_id, ball_id):
        raise Hold(f"the ball's branch {branch} is not in this clone", rule="L7",
                   hint=from_the_remote(ws, slice_id, ball_id))
    left = _recorded(ws, view, slice_id, ball_id) if tip is None else None
    if left is not None:  # thrown, its branch deleted by hand: a throw refuses the ball now
        raise UsageError(f"the ball's branch {branch} does not exist",
                         hint=f"put it back at the last commit the ledger recorded on it "
                              f"(`git branch {shlex.quote(branch)} {left}`), then `leap score "
                              f"{slice_id} {ball_id}`")
    if tip is None:
        # T7.1: a ball is thrown only after its red
        first = (f"`leap throw {slice_id} --ball {ball_id}`"
                 if history.latest_red(view, slice_id, ball_id) is not None else
                 f"record its red (`leap red {slice_id} {ball_id} COMMIT`), then `leap throw "
                 f"{slice_id} --ball {ball_id}`")
        raise UsageError(f"the ball's branch {branch} does not exist",
                         hint=f"throw it first: {first}")
    return tip


def _recorded(ws: Workspace, view: LedgerView, slice_id: str, ball_id: str
              ) -> str | None:
    """``place.recorded_tip_here`` of a thrown ball; None when none was thrown."""
    if not query.episodes(view, slice_id, ball_id):
        return None
    episode = current_episode(view, slice_id, ball_id)
    tip = place.recorded_tip_here(view, ws.paths.root, episode)
    if tip is None:  # never a branch put back below rounds this clone lacks
        raise UsageError(f"the ball's branch {ws.config.ball_branch(slice_id, ball_id)} does "
                         "not exist, and commits the ledger recorded on it are not in this "
                         "clone", hint="fetch the branch from where it was built, then `leap "
                         f"score {slice_id} {ball_id}`")
    return tip


def _ready(ws: Workspace, ep: Episode, slice_id: str, ball_id: str,
           read: str | None = None) -> None:
    """``read``: the shared remote whose copy of a published ball was just read."""
    last = ep.receipts[-1] if ep.receipts else None
    if last is None:
        if ep.throw.published and read is not None:  # a hunt: it named itself again
            raise Hold(f"{slice_id}/{ball_id} has no round yet, on {read} either: nothing to "
                       "score", rule="L7", hint=f"no worker has built one: `leap worker "
                       f"--remote {shlex.quote(read)} --slice {slice_id}` builds its rounds, "
                       "then this command scores them")
        raise Hold(f"{slice_id}/{ball_id} has no round yet: nothing to score", rule="L7",
                   hint=from_the_remote(ws, slice_id, ball_id) if ep.throw.published else
                   f"let the builder work a round first (`leap throw {slice_id} --ball "
                   f"{ball_id} --run` runs it)")
    if last.outcome == -1:
        raise RuleViolation(f"{slice_id}/{ball_id} was refused in round {last.round}: "
                            f"{last.evidence}", rule="L6", hint="respec and re-throw it")
    if last.outcome == 0:
        raise Hold(f"{slice_id}/{ball_id} holds (round {last.round}): {last.evidence}",
                   rule="L6", hint="the builder has not claimed a pass")


def score(ws: Workspace, slice_id: str, ball_id: str, builder: str | None = None,
          echo: Echo = print, read: str | None = None) -> Scored:
    """``read``: the shared remote whose copy of the ball was read first (`--remote`)."""
    who, builder_text = declared_builder(ws, builder)
    if not ws.config.tribunal.rungs:
        raise UsageError("no rungs are configured, so no juror can sit",
                         file=".leap/config.yaml", field="tribunal.rungs", rule="T2")
    root = ws.paths.root
    with ws.ledger() as ledger:
        rec = query.load_slice(ledger.require(), slice_id)
        if ball_id not in rec.balls:
            raise UsageError(f"slice {slice_id!r} has no ball {ball_id!r} (balls: "
                             f"{', '.join(rec.balls)})")
        commit = _candidate(ws, ledger.require(), slice_id, ball_id)
        tree = git.out(["rev-parse", f"{commit}^{{tree}}"], root)
        found = reopen_if_moved(ledger, slice_id, ball_id, tree, commit)
        reopened = (found,) if found else ()
        view = ledger.require()
        standing = current_pass(view, slice_id, ball_id)
        # the same tree from another commit is not the scored candidate: its history is
        # judged below (L6: commits no receipt records are rounds too)
        if standing is not None and standing.candidate == tree and standing.commit == commit:
            return Scored(standing, None, reopened, already=True)
        ep = current_episode(view, slice_id, ball_id)
        _ready(ws, ep, slice_id, ball_id, read)
        ball = query.load_ball_version(view, slice_id, ball_id, ep.throw.spec_version)

        # T7.1, T7.6: the contract red, then this episode's findings' reds

        reds = episode_reds(view, slice_id, ball_id, ep.throw.episode)
        red = contract_red(reds)
        _rounds_recorded(ws, ledger, ep, commit, reds)
    ev = _Evidence()
    _steps(ws, ball, ep, commit, reds, who, builder_text, ev, echo)
    with ws.ledger() as ledger:
        record = _record(ledger, ball, ep, commit, tree, ev, who, builder_text, red)
        written = write_score(ledger, record)
    return Scored(record, written.commit, reopened)


def _rounds_recorded(ws: Workspace, ledger: Ledger, ep: Episode, commit: str,
                     reds: list[RedRecord]) -> None:
    """L6: the candidate is the commit of the last receipt, and its history since the base
    holds no round beyond the limit (the ball branch's own rule, ``check_round_count``): a
    commit no receipt records is still a round, and round four cannot create round five."""
    t, last = ep.throw, ep.receipts[-1]
    if last.commit is not None and last.commit != commit and t.published and (
            git.rev_parse(f"{last.commit}^{{commit}}", ws.paths.root) is None
            or git.is_ancestor(ws.paths.root, commit, last.commit)):
        # a worker's round: this clone's copy of the branch is behind it, not past it
        raise Hold(f"{t.slice}/{t.ball}: the branch here, at {commit[:12]}, is behind "
                   f"{last.commit[:12]}, the commit of the last receipt (round {last.round})",
                   rule="L7", hint=from_the_remote(ws, t.slice, t.ball))
    if last.commit is not None and last.commit != commit:
        raise RuleViolation(f"{t.slice}/{t.ball}: the branch tip {commit[:12]} is not "
                            f"{last.commit[:12]}, the commit of the last receipt (round "
                            f"{last.round}): a commit no receipt records is an unrecorded "
                            "round", rule="L6", hint=_recorded_only(ws, ep, commit))
    ref = f"refs/heads/{ws.config.ball_branch(t.slice, t.ball)}"
    commits, pre = round_commits(Objects(ledger.repo), reds, t.base, commit)
    rounds = [c for c in commits if c.id.decode() not in pre]
    refused = check_round_count(ref, rounds, ws.config.round_cap,
                                recorded_rounds(ledger.require(), t.slice, t.ball))
    if refused:
        raise RuleViolation(f"{t.slice}/{t.ball}: {refused[0].message}", rule="L6",
                            hint=refused[0].hint)


def _recorded_only(ws: Workspace, ep: Episode, tip: str) -> str:
    """L6: score only recorded rounds: the branch goes back to where the last round left
    it (in the ball's worktree), then the claim is scored; never "resume", which refuses a
    ball whose claim waits for its score."""
    t, last = ep.throw, ep.receipts[-1]
    where = str(place.worktree_of(ws, t))
    if last.claim and last.outcome == 1:
        return "score only recorded rounds: " + score_hint(
            ep, last, ep.spent(ws.config.round_cap), tip, where)
    return (f"score only recorded rounds: {put_back(ep, tip, where)}run "
            f"`leap score {t.slice} {t.ball}` again")


def _steps(ws: Workspace, ball: BallRecord, ep: Episode, commit: str,
           reds: list[RedRecord], who: Builder, builder_text: str, ev: _Evidence,
           echo: Echo) -> None:
    root, timeout = ws.paths.root, ws.config.tribunal.test_timeout

    red = contract_red(reds)
    source = check_source(root, ep.throw.base, commit, ball, red,
                          [r for r in reds if r is not red])  # every frozen set holds
    ev.steps.append(source.step)
    ev.touched, ev.consumers = source.touched, source.consumers
    if ev.stopped():
        return
    kept = keep_or_revert(root, ws.paths.common_dir, ball, ep.throw, commit, timeout,
                          red.commit if red is not None else None)
    ev.steps.append(kept.step)
    ev.runs.extend(kept.runs)
    ev.metric = kept.verdict
    if ev.stopped():
        return
    proved = run_proofs(root, ep.throw.base, commit, source.candidate, ball, timeout)
    ev.steps.append(proved.step)
    ev.runs.extend(proved.runs)
    if ev.stopped():
        return
    # T8: the tribunal grades the scored commit from the throw's base, not a branch tip
    # that may move while the seats sit
    with ws.ledger() as ledger:  # L8: a convening a killed scoring left is read back
        reviewed = recorded(ledger.require(), ball, who, ep.throw.base, commit)
    if reviewed is not None:
        echo(f"tribunal {reviewed.run_id}: read back (its scoring stopped before its record)")
    else:
        reviewed = convene_ball(root, ball, who, builder_text, red, echo,
                                base=ep.throw.base, head=commit)
    ev.steps.append(reviewed.step)
    ev.run_id = reviewed.run_id
    if ev.stopped():
        return
    ev.review, ev.proved = reviewed, proved


def _record(ledger: Ledger, ball: BallRecord, ep: Episode, commit: str, tree: str,
            ev: _Evidence, who: Builder, builder_text: str, red: Any) -> ScoreRecord:
    view = ledger.require()
    number = history.next_number(view, f"{layout.ball_dir(ball.slice, ball.ball)}/scores")
    prov = None
    if not ev.stopped() and ev.review is not None and ev.proved is not None:
        reviewed, proved = ev.review, ev.proved
        prov = PassProvenance(
            ball.slice, ball.ball, ball.goal, builder_text, ball.spec_version,
            reviewed.reviewers, reviewed.verdicts, reviewed.summary or "", reviewed.run_id or "",
            proved.tests, proved.live_proof, red.red if red else None, tree)
    outcome, reason, rule = 1, "all five steps hold (L7)" + _flaky(view, ball, tree,
                                                                   ep.throw.base), None
    # issue 15 item 9: what the jurors cost, as the run's summary on the ledger sums it
    usage = history.run_usage(view, ball.slice, ball.ball, ev.run_id) if ev.run_id else None

    def record(outcome: int, reason: str, rule: str | None,
               prov: PassProvenance | None) -> ScoreRecord:
        return ScoreRecord(ball.slice, ball.ball, number, ep.throw.episode, len(ep.receipts),
                           ball.spec_version, outcome, reason, tree, commit,  # type: ignore[arg-type]
                           ep.throw.base, tuple(ev.steps), now_iso(), rule, ev.touched,
                           ev.consumers, ev.metric, tuple(ev.runs), ev.run_id, prov, usage)

    if prov is None:
        last = ev.last
        return record(_RESULT[last.result], f"{last.step}: {last.detail}", last.rule, None)
    candidate = record(outcome, reason, rule, prov)
    problems = pass_problems(view, candidate)  # L7.5: the same hash in every linked record
    ev.steps.append(Step("provenance", "fail" if problems else "ok",
                         "; ".join(problems) or "task -> builder -> spec -> reviewers -> "
                         f"verdicts -> tests -> live proof -> candidate {tree}",
                         "L7.5" if problems else None))
    if problems:
        return record(-1, f"provenance: {'; '.join(problems)}", "L7.5", None)
    return record(outcome, reason, rule, prov)


def _flaky(view: LedgerView, ball: BallRecord, tree: str, base: str) -> str:
    """A pass of the very candidate an earlier score refused on its proof or tests (L7.4),
    from the same base, under the same proof, tests and live proof: the same bytes gave both
    answers, so one of them is flaky. Said on the pass (a hunt: a candidate that failed on
    its first import landed on the second scoring, with no word of the first)."""
    if not history.has(view, ball.slice, ball.ball, "scores"):
        return ""

    def same_proof(spec_version: int) -> bool:
        then = query.load_ball_version(view, ball.slice, ball.ball, spec_version)
        return (then.proof, then.tests, then.live_proof) == \
            (ball.proof, ball.tests, ball.live_proof)

    failed = [s.score for s in history.scores(view, ball.slice, ball.ball)
              if s.candidate == tree and s.outcome == -1 and s.rule == "L7.4"
              and s.base == base and same_proof(s.spec_version)]
    if not failed:
        return ""
    return (f"; note: score {failed[-1]} refused this same candidate on its proof or tests "
            "(L7.4): one of them is flaky")


def write_score(ledger: Ledger, record: ScoreRecord) -> Written:
    """The one ledger write of a scoring (signing, when added, goes here)."""
    name = {1: "pass", 0: "hold", -1: "refuse"}[record.outcome]
    trailers = [(tr.SLICE, record.slice), (tr.BALL, record.ball),
                (tr.SCORE, str(record.score)), (tr.OUTCOME, str(record.outcome)),
                (tr.CANDIDATE, record.candidate)]
    if record.run_id:
        trailers.append((tr.RUN, record.run_id))
    return ledger.append({layout.score_path(record.slice, record.ball, record.score):
                          yamlio.dumps(record.to_dict())},
                         f"score {record.score} of {record.slice}/{record.ball}: {name}"
                         + (f" [{record.rule}]" if record.rule else ""), trailers)
