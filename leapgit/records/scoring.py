"""Frozen record types of scoring and merging: red (T7.1), score (L7; outcome 1 is the pass
record), reopen (L8) and the slice's numbered merge records (L8). Built from validated data with
``from_dict``; written with ``to_dict``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, NamedTuple

from leapgit.records.types import ABSENT
from leapgit.records.usage import Usage

Outcome = Literal[-1, 0, 1]


class RunEvidence(NamedTuple):
    """One typed command run, as recorded (``scoring.commands.CommandRun`` without stdout)."""

    type: str
    command: str
    exit_code: int | None
    seconds: float = 0.0
    output_tail: str = ""
    where: str | None = None

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "command": self.command,
                               "exit_code": self.exit_code, "seconds": round(self.seconds, 3),
                               "output_tail": self.output_tail[-1500:]}
        if self.where:
            out["where"] = self.where
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> RunEvidence:
        return cls(raw["type"], raw["command"], raw["exit_code"], raw.get("seconds", 0.0),
                   raw.get("output_tail", ""), raw.get("where"))


class FileBlob(NamedTuple):
    path: str
    blob: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "blob": self.blob}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> FileBlob:
        return cls(raw["path"], raw["blob"])


class RedRecord(NamedTuple):
    slice: str
    ball: str
    red: int
    commit: str
    base: str
    tests: tuple[FileBlob, ...]
    proof: RunEvidence
    recorded_at: str
    # T7.1: recorded before the ball's first round, this red replaces red ``replaces`` and
    # every red before it: they no longer count (``ledger.history.reds``)
    replaces: int | None = None
    # T7.6: a finding's red: new failing tests the test author added on the candidate of
    # episode ``episode`` that score ``answers`` refused on the tribunal's findings; its
    # commit is that candidate's child, and it freezes its tests for that episode's rounds
    answers: int | None = None
    episode: int | None = None
    # L5, T7.1: a restack's red: red ``carries``'s frozen tests, byte for byte, on the ball's
    # fresh stack base, once its stack went stale and its dependencies passed again
    carries: int | None = None

    @property
    def finding(self) -> bool:
        return self.answers is not None

    def frozen(self) -> dict[str, str]:
        return {t.path: t.blob for t in self.tests}

    def frozen_changes(self, blob_of: Callable[[str], str | None]) -> list[str]:
        """T7.1, T9: the frozen test files whose bytes differ from the red commit's (the one
        check: rounds, hooks, score and audit ask it)."""
        return sorted(t.path for t in self.tests if (blob_of(t.path) or ABSENT) != t.blob)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "red", "format": 1, "slice": self.slice, "ball": self.ball,
                "red": self.red, "commit": self.commit, "base": self.base,
                "tests": [t.to_dict() for t in self.tests], "proof": self.proof.to_dict(),
                "recorded_at": self.recorded_at,
                **({"replaces": self.replaces} if self.replaces is not None else {}),
                **({"answers": self.answers, "episode": self.episode}
                   if self.answers is not None else {}),
                **({"carries": self.carries} if self.carries is not None else {})}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> RedRecord:
        return cls(raw["slice"], raw["ball"], raw["red"], raw["commit"], raw["base"],
                   tuple(FileBlob.from_dict(t) for t in raw["tests"]),
                   RunEvidence.from_dict(raw["proof"]), raw["recorded_at"],
                   raw.get("replaces"), raw.get("answers"), raw.get("episode"),
                   raw.get("carries"))


class Step(NamedTuple):
    step: str  # source | metric | tests | tribunal | provenance
    result: str  # ok | fail | hold | skipped
    detail: str
    rule: str | None = None

    def to_dict(self) -> dict[str, str]:
        out = {"step": self.step, "result": self.result}
        if self.rule:
            out["rule"] = self.rule
        out["detail"] = self.detail
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Step:
        return cls(raw["step"], raw["result"], raw["detail"], raw.get("rule"))


class Reviewer(NamedTuple):
    lens: str
    rung: str
    family: str
    model: str | None = None

    def to_dict(self) -> dict[str, str]:
        out = {"lens": self.lens, "rung": self.rung, "family": self.family}
        if self.model:
            out["model"] = self.model
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Reviewer:
        return cls(raw["lens"], raw["rung"], raw["family"], raw.get("model"))


class PassProvenance(NamedTuple):
    """L7.5: task -> builder -> spec version -> reviewers -> verdicts -> tests -> live proof
    -> candidate hash."""

    slice: str
    ball: str
    goal: str
    builder: str
    spec_version: int
    reviewers: tuple[Reviewer, ...]
    verdicts: tuple[str, ...]
    summary: str
    run_id: str
    tests: tuple[RunEvidence, ...]
    live_proof: RunEvidence | None
    red: int | None
    candidate: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": {"slice": self.slice, "ball": self.ball, "goal": self.goal},
            "builder": self.builder, "spec_version": self.spec_version,
            "reviewers": [r.to_dict() for r in self.reviewers],
            "verdicts": list(self.verdicts), "summary": self.summary, "run_id": self.run_id,
            "tests": [t.to_dict() for t in self.tests],
            "live_proof": self.live_proof.to_dict() if self.live_proof else None,
            "red": self.red, "candidate": self.candidate,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> PassProvenance:
        task = raw["task"]
        live = raw.get("live_proof")
        return cls(task["slice"], task["ball"], task["goal"], raw["builder"],
                   raw["spec_version"], tuple(Reviewer.from_dict(r) for r in raw["reviewers"]),
                   tuple(raw["verdicts"]), raw["summary"], raw["run_id"],
                   tuple(RunEvidence.from_dict(t) for t in raw["tests"]),
                   RunEvidence.from_dict(live) if live else None, raw.get("red"),
                   raw["candidate"])


class MetricOutcome(NamedTuple):
    """L7.2: keep or revert, by the fields of the champion (the base) and the candidate."""

    keep: bool
    reason: str
    champion: dict[str, float]
    candidate: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {"keep": self.keep, "reason": self.reason, "champion": self.champion,
                "candidate": self.candidate}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> MetricOutcome:
        return cls(raw["keep"], raw["reason"], raw["champion"], raw["candidate"])


class ScoreRecord(NamedTuple):
    slice: str
    ball: str
    score: int
    episode: int
    rounds: int
    spec_version: int
    outcome: Outcome
    reason: str
    candidate: str
    commit: str
    base: str
    steps: tuple[Step, ...]
    recorded_at: str
    rule: str | None = None
    touched: tuple[FileBlob, ...] = ()
    consumers: tuple[FileBlob, ...] = ()
    metric: MetricOutcome | None = None
    runs: tuple[RunEvidence, ...] = ()
    run_id: str | None = None
    provenance: PassProvenance | None = None
    usage: Usage | None = None  # issue 15 item 9: what the scoring's tribunal run cost

    @property
    def is_pass(self) -> bool:
        return self.outcome == 1

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": "score", "format": 1, "slice": self.slice, "ball": self.ball,
            "score": self.score, "episode": self.episode, "rounds": self.rounds,
            "spec_version": self.spec_version, "outcome": self.outcome, "claim": False,
            "reason": self.reason,
        }
        if self.rule:
            out["rule"] = self.rule
        out.update(candidate=self.candidate, commit=self.commit, base=self.base,
                   steps=[s.to_dict() for s in self.steps])
        if self.touched or self.consumers:
            out["source"] = {"touched": [t.to_dict() for t in self.touched],
                             "consumers": [c.to_dict() for c in self.consumers]}
        if self.metric is not None:
            out["metric"] = self.metric.to_dict()
        if self.runs:
            out["runs"] = [r.to_dict() for r in self.runs]
        if self.run_id:
            out["run_id"] = self.run_id
        if self.provenance is not None:
            out["provenance"] = self.provenance.to_dict()
        if self.usage is not None:
            out["usage"] = self.usage.to_dict()
        out["recorded_at"] = self.recorded_at
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ScoreRecord:
        source = raw.get("source") or {}
        prov = raw.get("provenance")
        return cls(
            raw["slice"], raw["ball"], raw["score"], raw["episode"], raw["rounds"],
            raw["spec_version"], raw["outcome"], raw["reason"], raw["candidate"],
            raw["commit"], raw["base"], tuple(Step.from_dict(s) for s in raw["steps"]),
            raw["recorded_at"], raw.get("rule"),
            tuple(FileBlob.from_dict(t) for t in source.get("touched", ())),
            tuple(FileBlob.from_dict(c) for c in source.get("consumers", ())),
            MetricOutcome.from_dict(raw["metric"]) if raw.get("metric") else None,
            tuple(RunEvidence.from_dict(r) for r in raw.get("runs", ())),
            raw.get("run_id"), PassProvenance.from_dict(prov) if prov else None,
            Usage.from_dict(raw["usage"]) if raw.get("usage") else None,
        )


class ReopenRecord(NamedTuple):
    slice: str
    ball: str
    reopen: int
    score: int  # the pass record this voids
    candidate: str  # the passed candidate
    found: str | None  # the tree found instead
    where: Literal["ball-branch", "spine"]
    commit: str | None
    reason: str
    recorded_at: str
    paths: tuple[str, ...] = ()  # a spine reopen: the ball's files the commit changed

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "reopen", "format": 1, "slice": self.slice, "ball": self.ball,
                "reopen": self.reopen, "score": self.score, "candidate": self.candidate,
                "found": self.found, "where": self.where, "commit": self.commit,
                "reason": self.reason, "recorded_at": self.recorded_at,
                **({"paths": list(self.paths)} if self.paths else {})}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ReopenRecord:
        return cls(raw["slice"], raw["ball"], raw["reopen"], raw["score"], raw["candidate"],
                   raw.get("found"), raw["where"], raw.get("commit"), raw["reason"],
                   raw["recorded_at"], tuple(raw.get("paths", ())))


class Merged(NamedTuple):
    ball: str
    commit: str  # the merge commit on the spine
    candidate: str  # the ball's candidate tree id
    candidate_commit: str
    run_id: str  # the ball's tribunal run
    score: int  # its pass record

    def to_dict(self) -> dict[str, Any]:
        return {"ball": self.ball, "commit": self.commit, "candidate": self.candidate,
                "candidate_commit": self.candidate_commit, "run_id": self.run_id,
                "score": self.score}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Merged:
        return cls(raw["ball"], raw["commit"], raw["candidate"], raw["candidate_commit"],
                   raw["run_id"], raw["score"])


class MergeRecord(NamedTuple):
    slice: str
    spine: str
    lease: int
    holder: str
    base: str  # the spine tip before the first merge
    tip: str  # the spine tip after the last
    merges: tuple[Merged, ...]
    aggregate_run: str
    aggregate_tree: str
    recorded_at: str
    tests: tuple[RunEvidence, ...] = ()
    remote: str | None = None
    number: int = 1  # the slice's n-th merge: n > 1 re-merges balls re-passed after a reopen

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "merge", "format": 1, "slice": self.slice, "merge": self.number,
            "spine": self.spine,
            "lease": self.lease, "holder": self.holder, "base": self.base, "tip": self.tip,
            "merges": [m.to_dict() for m in self.merges],
            "aggregate": {"run_id": self.aggregate_run, "outcome": "pass",
                          "tree": self.aggregate_tree},
            "tests": [t.to_dict() for t in self.tests], "remote": self.remote,
            "recorded_at": self.recorded_at,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> MergeRecord:
        agg = raw["aggregate"]
        return cls(raw["slice"], raw["spine"], raw["lease"], raw["holder"], raw["base"],
                   raw["tip"], tuple(Merged.from_dict(m) for m in raw["merges"]),
                   agg["run_id"], agg["tree"], raw["recorded_at"],
                   tuple(RunEvidence.from_dict(t) for t in raw.get("tests", ())),
                   raw.get("remote"), raw.get("merge", 1))
