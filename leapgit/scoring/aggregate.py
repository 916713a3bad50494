"""The aggregate check of a slice's merged result (L8): every ball's declared tests run on
the merged tree (a clean throwaway worktree), then the blind tribunal grades the whole merged
change; only a unanimous pass lets it land."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from leapgit import git
from leapgit.errors import Hold, RuleViolation
from leapgit.ledger import query
from leapgit.ledger.workspace import Workspace
from leapgit.records.scoring import RunEvidence
from leapgit.rules import aggregate as rules_aggregate
from leapgit.scoring.commands import run_command
from leapgit.scoring.proofrun import evidence
from leapgit.tribunal.convene import Request, convene
from leapgit.tribunal.identity import parse_builder
from leapgit.tribunal.worktree import temporary


class AggregateRefused(RuleViolation):
    """The aggregate review refused the merged result (L8): nothing lands. ``blamed``: the
    balls whose passes its findings voided (``scoring.merge`` writes their scores), whose
    builders answer them (T7.6)."""

    def __init__(self, slice_id: str, run_id: str, reason: str,
                 blamed: tuple[str, ...] = (), unowned: tuple[str, ...] = (),
                 ledger_ref: str = "refs/heads/leap/ledger") -> None:
        back = (f"; its findings go back to the builder of {', '.join(blamed)} (T7.6)"
                if blamed else f"; its findings name {', '.join(unowned)}, which no ball's "
                "scope holds" if unowned else "")
        summary = f"slices/{slice_id}/tribunal/{run_id}/summary.yaml"
        hint = (f"`leap run {slice_id}` answers them: the test author, the builder's next "
                "round, a score, the merge again" if blamed else
                f"no builder may change those files: `leap slice abandon {slice_id} --reason "
                "'the merged result needs other files'`, then cut the work again with them in "
                "a scope (`leap slice cut FILE`)" if unowned else
                f"a person reads the review (`git show {ledger_ref}:{summary}`): it names no "
                f"finding a builder can answer; `leap slice abandon {slice_id} --reason WHY` "
                "frees the balls' files for a slice cut again")
        super().__init__(f"the aggregate blind review refused the merged result (run "
                         f"{run_id}): {reason}; nothing lands{back}", rule="L8", hint=hint)
        self.slice, self.run_id, self.reason = slice_id, run_id, reason
        self.blamed, self.unowned = blamed, unowned


@dataclass(frozen=True)
class Aggregate:
    run_id: str
    tree: str
    tests: tuple[RunEvidence, ...]


def merged_tests(ws: Workspace, slice_id: str, head: str, commands: Sequence[str]
                 ) -> tuple[RunEvidence, ...]:
    runs: list[RunEvidence] = []
    if not commands:
        return ()
    with temporary(ws.paths.root, head, prefix="leap-merged-") as tree:
        for command in commands:
            run = run_command("tests", command, tree, timeout=ws.config.tribunal.test_timeout)
            runs.append(evidence(run, f"merged result {head[:12]}"))
            if not run.ok:  # each ball's candidate passed alone: scoring it again changes
                # nothing; the work is cut again, the balls' scopes and tests as they must be
                raise RuleViolation(
                    f"the merged result fails: {run.describe()}; nothing lands", rule="L8",
                    hint=f"the balls pass alone but not together: `leap slice abandon "
                         f"{slice_id} --reason 'its merged tests fail'`, then cut the work "
                         "again (`leap slice cut FILE`)",
                    details=run.shown("the tests on the merged result"))
    return tuple(runs)


def review_merged(ws: Workspace, slice_id: str, base: str, head_ref: str, builder: str,
                  ball_ids: Sequence[str], echo: Callable[[str], None]) -> Aggregate:
    """``ball_ids``: every ball of the slice (a re-merge after a reopen re-scores them all,
    L8); the review reads what changed from ``base`` to ``head_ref``."""
    root = ws.paths.root
    head = git.out(["rev-parse", head_ref], root)
    with ws.ledger() as ledger:
        view = ledger.require()
        rec = query.load_slice(view, slice_id)
        balls = [query.load_ball(view, slice_id, b) for b in ball_ids]
    commands = list(dict.fromkeys(b.tests for b in balls if b.tests))
    tests = merged_tests(ws, slice_id, head, commands)
    tree = git.out(["rev-parse", f"{head}^{{tree}}"], root)

    with ws.ledger() as ledger:
        passed = rules_aggregate.passed_tree(ledger.require(), slice_id, tree, base,
                                             parse_builder(builder).family)
    if passed is not None:
        echo(f"the merged result {tree[:12]} passed the aggregate review in run {passed}: "
             "not reviewed again")
        return Aggregate(passed, tree, tests)
    intent = (rec.description or f"the merged balls of slice {slice_id}").splitlines()[0]
    criteria = "\n".join(f"- {b.ball}: {b.goal}" for b in balls)
    done = convene(Request(intent=intent, criteria=criteria, builder=builder, base=base,
                           head=head_ref, slice=slice_id, aggregate=True), start=root,
                   echo=echo)
    outcome, reason = done.decision.outcome, done.decision.reason
    if outcome == "refuse":
        raise AggregateRefused(slice_id, done.info.run_id, reason,
                               ledger_ref=ws.config.ledger_ref)
    if outcome != "pass":  # T6 (no verdict: hold and re-seat), or T9 (a person decides)
        summary = f"{ws.config.ledger_ref}:slices/{slice_id}/tribunal/{done.info.run_id}" \
            "/summary.yaml"
        hint = (f"a person reads the findings (`git show {summary}`) "
                f"and decides: `leap slice abandon {slice_id} --reason WHY` frees the balls' "
                "files for a slice cut again" if done.decision.escalated else
                f"bring its rungs back (`leap tribunal rungs --probe` shows which answer), then "
                f"`leap merge {slice_id}` seats the review again")
        raise Hold(f"the aggregate blind review did not pass (run {done.info.run_id}): "
                   f"{reason}; nothing lands", rule="L8", hint=hint)
    return Aggregate(done.info.run_id, done.info.tree, tests)
