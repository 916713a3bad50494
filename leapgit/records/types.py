"""Frozen record types. Built from validated data with ``from_dict``; written with ``to_dict``.

Nothing outside this package handles a raw ``dict`` of a record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, NamedTuple

if TYPE_CHECKING:
    from leapgit.records.tribunal_config import TribunalConfig

ABSENT = "absent"  # the stamp of a scope file that does not exist at the base (L1)
BUILTIN_ROLLBACK = "restore-scope"
INTEGRATOR = "integrator"
# L6, issue 14 item 9: the reason of a checkpoint that ends an episode before its round limit
STUCK = "the builder failed the same way twice in a row: the episode ends at 0 (L6)"
# L6: the reason of a checkpoint whose last round leap stopped (a Ctrl-C, a SIGTERM, the
# run's --max-minutes): no word of the builder's ended the episode (``rules.episodes``)
STOPPED = "leap stopped the episode's last round"


class LedgerRoot(NamedTuple):
    """The ledger's root record (``ledger.yaml``): it marks a ref as a leapgit ledger."""

    created_at: str
    spine: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "ledger", "format": 1, "created_at": self.created_at}
        if self.spine is not None:
            out["spine"] = self.spine
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> LedgerRoot:
        return cls(created_at=raw["created_at"], spine=raw.get("spine"))


class StampedScope(NamedTuple):
    """A scope path with its blob id at the slice's base, stamped at cut (L1)."""

    path: str  # normalised, relative to the repository root
    blob: str  # git blob id at the slice's base, or ABSENT
    resolved: str | None = None  # the file a symlink path resolves to, when different
    symbols: tuple[str, ...] = ()
    lines: str | None = None

    @property
    def real(self) -> str:
        return self.resolved or self.path

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "blob": self.blob}
        if self.resolved:
            out["resolved"] = self.resolved
        if self.symbols:
            out["symbols"] = list(self.symbols)
        if self.lines:
            out["lines"] = self.lines
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> StampedScope:
        return cls(
            path=raw["path"], blob=raw["blob"], resolved=raw.get("resolved"),
            symbols=tuple(raw.get("symbols", ())), lines=raw.get("lines"),
        )


class MetricField(NamedTuple):
    """One field of a metric's JSON output, and which way is better (L7.2)."""

    name: str
    better: Literal["lower", "higher"]


class Metric(NamedTuple):
    """The command a ball is kept or reverted by, with its fields in order (L7.2)."""

    command: str
    fields: tuple[MetricField, ...]

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Metric:
        return cls(
            command=raw["command"],
            fields=tuple(MetricField(f["name"], f["better"]) for f in raw["fields"]),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "fields": [{"name": f.name, "better": f.better} for f in self.fields],
        }


class SliceRecord(NamedTuple):
    """The cut slice: its balls, their waves and its base (``slices/<s>/slice.yaml``)."""

    slice: str
    spine: str
    base: str
    balls: tuple[str, ...]
    waves: tuple[tuple[str, ...], ...]
    cut_at: str
    description: str | None = None
    live_proof: str | None = None  # T9: proved live on the landed spine tip (`leap run`)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": "slice", "format": 1, "slice": self.slice, "spine": self.spine,
        }
        if self.description:
            out["description"] = self.description
        out.update(
            base=self.base, balls=list(self.balls), waves=[list(w) for w in self.waves],
            cut_at=self.cut_at,
        )
        if self.live_proof:
            out["live_proof"] = self.live_proof
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> SliceRecord:
        return cls(
            slice=raw["slice"], spine=raw["spine"], base=raw["base"], balls=tuple(raw["balls"]),
            waves=tuple(tuple(w) for w in raw.get("waves", ())), cut_at=raw["cut_at"],
            description=raw.get("description"), live_proof=raw.get("live_proof"),
        )


class BallRecord(NamedTuple):
    """One spec version of a ball, scope stamped (``balls/<b>/specs/<v>.yaml``)."""

    slice: str
    ball: str
    spec_version: int
    goal: str
    spec: str
    scope: tuple[StampedScope, ...]
    proof: str
    rollback: str
    depends_on: tuple[str, ...] = ()
    metric: Metric | None = None
    tests: str | None = None
    live_proof: str | None = None
    reason: str | None = None
    recorded_at: str | None = None

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(s.path for s in self.scope)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": "ball", "format": 1, "slice": self.slice, "ball": self.ball,
            "spec_version": self.spec_version, "goal": self.goal, "spec": self.spec,
            "scope": [s.to_dict() for s in self.scope], "proof": self.proof,
            "rollback": self.rollback, "depends_on": list(self.depends_on),
        }
        for key in ("tests", "live_proof", "reason", "recorded_at"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.metric:
            out["metric"] = self.metric.to_dict()
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> BallRecord:
        return cls(
            slice=raw["slice"], ball=raw["ball"], spec_version=raw["spec_version"],
            goal=raw["goal"], spec=raw["spec"],
            scope=tuple(StampedScope.from_dict(s) for s in raw["scope"]),
            proof=raw["proof"], rollback=raw["rollback"],
            depends_on=tuple(raw.get("depends_on", ())),
            metric=Metric.from_dict(raw["metric"]) if raw.get("metric") else None,
            tests=raw.get("tests"), live_proof=raw.get("live_proof"),
            reason=raw.get("reason"), recorded_at=raw.get("recorded_at"),
        )


class StackEntry(NamedTuple):
    """One passed dependency under a stacked base (L5): the pass record (score number) and
    the candidate it contributed, a parent of the base."""

    ball: str
    score: int
    candidate: str  # the candidate tree
    commit: str  # the candidate commit

    def to_dict(self) -> dict[str, Any]:
        return {"ball": self.ball, "score": self.score, "candidate": self.candidate,
                "commit": self.commit}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> StackEntry:
        return cls(raw["ball"], raw["score"], raw["candidate"], raw["commit"])


class ThrowRecord(NamedTuple):
    """One throw of a ball: an episode's base and branch (L5). A dependent ball's base is a
    stack: the slice's base with each dependency's passed candidate merged in (``stack``)."""

    slice: str
    ball: str
    episode: int
    spec_version: int
    base: str
    branch: str
    thrown_at: str
    worktree: str | None = None
    wave: int | None = None
    resumed_from: int | None = None
    stack: tuple[StackEntry, ...] = ()
    # issue 16: thrown to the shared remote; a worker that claims it builds it (L9), so the
    # thrower has no worktree for it (``worktree`` is None)
    published: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": "throw", "format": 1, "slice": self.slice, "ball": self.ball,
            "episode": self.episode, "spec_version": self.spec_version, "base": self.base,
            "branch": self.branch, "worktree": self.worktree,
        }
        if self.wave is not None:
            out["wave"] = self.wave
        if self.resumed_from is not None:
            out["resumed_from"] = self.resumed_from
        if self.stack:
            out["stack"] = [e.to_dict() for e in self.stack]
        if self.published:
            out["published"] = True
        out["thrown_at"] = self.thrown_at
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ThrowRecord:
        return cls(
            slice=raw["slice"], ball=raw["ball"], episode=raw["episode"],
            spec_version=raw["spec_version"], base=raw["base"], branch=raw["branch"],
            thrown_at=raw["thrown_at"], worktree=raw.get("worktree"), wave=raw.get("wave"),
            resumed_from=raw.get("resumed_from"),
            stack=tuple(StackEntry.from_dict(e) for e in raw.get("stack", ())),
            published=bool(raw.get("published", False)),
        )


class Provenance(NamedTuple):
    """L7.5: the chain a pass must carry; the same candidate hash as its receipt."""

    builder: str
    spec_version: int
    reviewers: tuple[str, ...]
    verdicts: tuple[str, ...]
    tests: str
    live_proof: str
    candidate: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "builder": self.builder, "spec_version": self.spec_version,
            "reviewers": list(self.reviewers), "verdicts": list(self.verdicts),
            "tests": self.tests, "live_proof": self.live_proof, "candidate": self.candidate,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Provenance:
        return cls(
            builder=raw["builder"], spec_version=raw["spec_version"],
            reviewers=tuple(raw["reviewers"]), verdicts=tuple(raw["verdicts"]),
            tests=raw["tests"], live_proof=raw["live_proof"], candidate=raw["candidate"],
        )


Outcome = Literal[-1, 0, 1]
OUTCOME_NAMES = {-1: "refuse", 0: "hold", 1: "pass"}


class Receipt(NamedTuple):
    """The receipt of one round (L6): -1 refuse, 0 hold, 1 pass or claim."""

    slice: str
    ball: str
    episode: int
    round: int
    outcome: Outcome
    evidence: str
    recorded_at: str
    claim: bool = True
    commit: str | None = None
    candidate: str | None = None
    recorded_by: str | None = None
    log: str | None = None
    provenance: Provenance | None = None
    worker: str | None = None  # issue 16: the claim holder that built it (L9)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": "receipt", "format": 1, "slice": self.slice, "ball": self.ball,
            "episode": self.episode, "round": self.round, "outcome": self.outcome,
            "claim": self.claim, "evidence": self.evidence,
            "commit": self.commit, "candidate": self.candidate,
        }
        for key in ("recorded_by", "log", "worker"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.provenance is not None:
            out["provenance"] = self.provenance.to_dict()
        out["recorded_at"] = self.recorded_at
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Receipt:
        return cls(
            slice=raw["slice"], ball=raw["ball"], episode=raw["episode"], round=raw["round"],
            outcome=raw["outcome"], evidence=raw["evidence"], recorded_at=raw["recorded_at"],
            claim=raw.get("claim", True), commit=raw.get("commit"),
            candidate=raw.get("candidate"), recorded_by=raw.get("recorded_by"),
            log=raw.get("log"),
            provenance=Provenance.from_dict(raw["provenance"]) if raw.get("provenance") else None,
            worker=raw.get("worker"),
        )


class Checkpoint(NamedTuple):
    """Where an episode ended at 0 after its last round (L6), for a resume."""

    slice: str
    ball: str
    episode: int
    rounds_used: int
    tried: tuple[str, ...]
    last_evidence: str
    recorded_at: str
    candidate: str | None = None
    commit: str | None = None
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": "checkpoint", "format": 1, "slice": self.slice, "ball": self.ball,
            "episode": self.episode, "rounds_used": self.rounds_used, "tried": list(self.tried),
            "last_evidence": self.last_evidence, "candidate": self.candidate,
            "commit": self.commit,
        }
        if self.reason:
            out["reason"] = self.reason
        out["recorded_at"] = self.recorded_at
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Checkpoint:
        return cls(
            slice=raw["slice"], ball=raw["ball"], episode=raw["episode"],
            rounds_used=raw["rounds_used"], tried=tuple(raw["tried"]),
            last_evidence=raw["last_evidence"], recorded_at=raw["recorded_at"],
            candidate=raw.get("candidate"), commit=raw.get("commit"), reason=raw.get("reason"),
        )


def _preset_command(builder: dict[str, Any]) -> str | None:
    """The builder preset's command line (issue 17); None for no preset or an unknown one
    (``config.builder_problems`` names it)."""
    if not builder.get("preset"):
        return None  # the common case, without importing the table (a hook reads configs)
    from leapgit.records.presets import preset

    found = preset(builder["preset"], "builder")
    return found.command(builder.get("model")) if found else None


def _number(value: float | None) -> float | None:
    return float(value) if value is not None else None


class Config(NamedTuple):
    """``.leap/config.yaml``, validated, with its defaults."""

    spine: str = "main"
    ledger_ref: str = "refs/heads/leap/ledger"
    round_limit: int = 4
    ball_branch_prefix: str = "leap/ball"
    worktree_root: str | None = None
    worktree_setup: str | None = None  # run in each fresh worktree before anything else
    builder_command: str | None = None
    builder_timeout: float = 1800.0
    builder_identity: str | None = None
    builder_preset: str | None = None  # issue 17: builder_command is its expansion
    red_command: str | None = None  # the test author `leap run` asks for reds (T7.1, T7.6)
    red_timeout: float = 1800.0
    red_identity: str | None = None
    signing_required: bool = False  # S1-S6, enforced by the server's pre-receive
    run_max_usd: float | None = None  # `leap run` stops before the slice's spend passes it
    claim_seconds: float = 600.0  # issue 16: a worker's claim lasts this long unless renewed
    # the validated ``tribunal:`` mapping; ``tribunal`` builds it when asked, so a run that
    # never convenes (the post-commit hook) never defines the tribunal's record types
    tribunal_source: dict[str, Any] | None = None

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Config:
        builder = raw.get("builder") or {}
        red = raw.get("red") or {}
        return cls(
            spine=raw["spine"], ledger_ref=raw["ledger_ref"],
            round_limit=raw.get("round_limit", 4),
            ball_branch_prefix=raw.get("ball_branch_prefix", "leap/ball"),
            worktree_root=(raw.get("worktrees") or {}).get("root"),
            worktree_setup=(raw.get("worktrees") or {}).get("setup"),
            builder_command=builder.get("command") or _preset_command(builder),
            builder_preset=builder.get("preset"),
            builder_timeout=builder.get("timeout", 1800.0),
            builder_identity=builder.get("identity"),
            red_command=red.get("command"), red_timeout=red.get("timeout", 1800.0),
            red_identity=red.get("identity"),
            signing_required=bool((raw.get("signing") or {}).get("require", False)),
            run_max_usd=_number((raw.get("run") or {}).get("max_usd")),
            claim_seconds=float((raw.get("workers") or {}).get("claim_seconds", 600.0)),
            tribunal_source=raw.get("tribunal"),
        )

    def __hash__(self) -> int:  # as the dataclass did: the tribunal mapping is no key
        return hash(self[:-1])

    @property
    def round_cap(self) -> int:
        """The rounds an episode may hold: the configured limit, never more than four."""
        return min(self.round_limit, 4)  # L6: round four cannot create round five

    @property
    def tribunal(self) -> TribunalConfig:
        from leapgit.records.tribunal_config import TribunalConfig

        return TribunalConfig.from_dict(self.tribunal_source)

    def ball_branch(self, slice_id: str, ball_id: str) -> str:
        return f"{self.ball_branch_prefix}/{slice_id}/{ball_id}"
