"""Frozen types of the records one tribunal run writes (``tribunal/<run>/``): the envelope it
graded (T5), its routing (T2-T4), one verdict per lens (T6) and the summary, written last
(T2, T7). Every one carries the run id, the round, the candidate commit, its tree id and the
envelope hash (L7: the same hash in every record). Built from validated data with
``from_dict``; written with ``to_dict``, key for key as ``schemas/records/<kind>.schema.json``
orders them. ``tribunal.ledger_records`` builds them from a convening."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from leapgit.records.usage import UNMEASURED, Usage, total

if TYPE_CHECKING:
    from typing import Protocol

    class _Stamped(Protocol):
        """The fields every tribunal record shares (a ``NamedTuple`` inherits no fields)."""

        @property
        def run_id(self) -> str: ...
        @property
        def round(self) -> int: ...
        @property
        def candidate(self) -> str: ...
        @property
        def tree(self) -> str: ...
        @property
        def envelope_hash(self) -> str: ...
        @property
        def slice(self) -> str | None: ...
        @property
        def ball(self) -> str | None: ...


def _head(kind: str, rec: _Stamped) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": kind, "format": 1, "run_id": rec.run_id, "round": rec.round}
    if rec.slice:
        out["slice"] = rec.slice
    if rec.ball:
        out["ball"] = rec.ball
    out.update(candidate=rec.candidate, tree=rec.tree, envelope_hash=rec.envelope_hash)
    return out


def _stamp(raw: dict[str, Any]) -> dict[str, Any]:
    return {"run_id": raw["run_id"], "round": raw["round"], "candidate": raw["candidate"],
            "tree": raw["tree"], "envelope_hash": raw["envelope_hash"],
            "slice": raw.get("slice"), "ball": raw.get("ball")}


class EnvelopeEntry(NamedTuple):
    """One file of the envelope: changed or test, and how it was shown (T5)."""

    path: str
    role: str  # changed | test
    status: str  # text | binary | deleted | symlink | submodule
    blob: str | None
    size: int

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "role": self.role, "status": self.status,
                "blob": self.blob, "bytes": self.size}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> EnvelopeEntry:
        return cls(raw["path"], raw["role"], raw["status"], raw["blob"], raw["bytes"])


class EnvelopeRecord(NamedTuple):
    """T5: what the jurors were shown (``envelope.yaml``)."""

    run_id: str
    round: int
    candidate: str
    tree: str
    envelope_hash: str
    base: str
    intent: str
    criteria: str
    files: tuple[EnvelopeEntry, ...]
    tokens_estimate: int | None = None
    slice: str | None = None
    ball: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {**_head("envelope", self), "base": self.base, "intent": self.intent,
               "criteria": self.criteria}
        if self.tokens_estimate is not None:
            out["tokens_estimate"] = self.tokens_estimate
        out["files"] = [f.to_dict() for f in self.files]
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> EnvelopeRecord:
        return cls(**_stamp(raw), base=raw["base"], intent=raw["intent"],
                   criteria=raw["criteria"],
                   files=tuple(EnvelopeEntry.from_dict(f) for f in raw["files"]),
                   tokens_estimate=raw.get("tokens_estimate"))


class SkippedRung(NamedTuple):
    """A rung that may not sit, and why (T4: the builder's own; no key; a failed last probe,
    issue 17; no capacity)."""

    rung: str
    kind: str  # builder | api_key | probe | capacity
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"rung": self.rung, "kind": self.kind, "reason": self.reason}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> SkippedRung:
        return cls(raw["rung"], raw["kind"], raw["reason"])


class RoutedLadder(NamedTuple):
    """The rungs that may sit, cheapest first, and those skipped."""

    ladder: tuple[str, ...]
    skipped: tuple[SkippedRung, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"ladder": list(self.ladder), "skipped": [s.to_dict() for s in self.skipped]}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> RoutedLadder:
        return cls(tuple(raw["ladder"]), tuple(SkippedRung.from_dict(s) for s in raw["skipped"]))


class LensRoute(NamedTuple):
    """One lens's ladder, and its verifier's when it has one (T2)."""

    lens: str
    tier: str
    primary: RoutedLadder
    verifier: RoutedLadder | None = None
    verifier_required: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"lens": self.lens, "tier": self.tier, **self.primary.to_dict()}
        if self.verifier is not None:
            out["verifier"] = {"required": self.verifier_required, **self.verifier.to_dict()}
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> LensRoute:
        verifier = raw.get("verifier")
        return cls(raw["lens"], raw["tier"], RoutedLadder.from_dict(raw),
                   RoutedLadder.from_dict(verifier) if verifier else None,
                   bool(verifier and verifier["required"]))


class RoutingRecord(NamedTuple):
    """T2-T4: lens -> ladder, every skipped rung and why (``routing.yaml``)."""

    run_id: str
    round: int
    candidate: str
    tree: str
    envelope_hash: str
    builder_family: str
    single_rung: bool  # T3: recorded as provenance
    lenses: tuple[LensRoute, ...]
    slice: str | None = None
    ball: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {**_head("routing", self), "builder_family": self.builder_family,
                "single_rung": self.single_rung, "lenses": [r.to_dict() for r in self.lenses]}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> RoutingRecord:
        return cls(**_stamp(raw), builder_family=raw["builder_family"],
                   single_rung=raw["single_rung"],
                   lenses=tuple(LensRoute.from_dict(r) for r in raw["lenses"]))


class MutantRecord(NamedTuple):
    """T9: a finding's claimed surviving mutant and what its re-run showed."""

    patch: str
    status: str  # KILLED | SURVIVED | INVALID
    detail: str
    files: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"patch": self.patch, "status": self.status, "detail": self.detail,
                "files": list(self.files)}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> MutantRecord:
        return cls(raw["patch"], raw["status"], raw["detail"], tuple(raw.get("files", ())))


class FindingRecord(NamedTuple):
    """One finding of a seat, by its fingerprint (T9: new or recurring across rounds)."""

    fingerprint: str
    lens: str
    severity: str  # blocker | major | minor | info
    file: str
    claim: str
    evidence: str
    supported: bool  # T9: the quoted evidence occurs in the envelope
    seat: str | None = None  # primary | verifier
    status: str | None = None  # new | recurring: in the summary only
    mutant: MutantRecord | None = None  # T9: its claimed mutant, re-run

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"fingerprint": self.fingerprint, "lens": self.lens}
        if self.seat:
            out["seat"] = self.seat
        out.update(severity=self.severity, file=self.file, claim=self.claim,
                   evidence=self.evidence, supported=self.supported)
        if self.status:
            out["status"] = self.status
        if self.mutant is not None:
            out["mutant"] = self.mutant.to_dict()
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> FindingRecord:
        mutant = MutantRecord.from_dict(raw["mutant"]) if raw.get("mutant") else None
        return cls(raw["fingerprint"], raw["lens"], raw["severity"], raw["file"], raw["claim"],
                   raw["evidence"], raw["supported"], raw.get("seat"), raw.get("status"),
                   mutant)


# a juror that answered, well or badly, was paid for; one that never answered reported nothing
_REPLIED = frozenset({"answered", "bad_answer", "off_lens", "exhausted"})


class AttemptRecord(NamedTuple):
    """One rung a seat tried, and what came of it (T6, T8: a bounded tail of a bad answer);
    ``usage``: the tokens its provider reported, priced at the rung's declared prices."""

    rung: str
    # answered | bad_answer | never_answered | capacity | off_lens | annulled | exhausted
    result: str
    detail: str
    seconds: float | None = None
    answered_lens: str | None = None
    raw_tail: str | None = None
    usage: Usage | None = None

    @property
    def spent(self) -> Usage | None:
        """What this call cost as far as anyone knows: its reported usage; a reply without
        one (a command rung) is an unmeasured call, never 0 tokens as if measured."""
        if self.usage is not None:
            return self.usage
        return UNMEASURED if self.result in _REPLIED else None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rung": self.rung, "result": self.result, "detail": self.detail}
        if self.seconds is not None:
            out["seconds"] = self.seconds
        if self.answered_lens:
            out["answered_lens"] = self.answered_lens
        if self.raw_tail:
            out["raw_tail"] = self.raw_tail
        if self.usage is not None:
            out["usage"] = self.usage.to_dict()
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> AttemptRecord:
        usage = raw.get("usage")
        return cls(raw["rung"], raw["result"], raw["detail"], raw.get("seconds"),
                   raw.get("answered_lens"), raw.get("raw_tail"),
                   Usage.from_dict(usage) if usage else None)


class SeatRecord(NamedTuple):
    """What one ladder walk ended with: the rung that sat, what its juror said."""

    outcome: str  # pass | refuse | hold
    reason: str
    rung: str | None
    attempts: tuple[AttemptRecord, ...] = ()
    provider: str | None = None
    family: str | None = None
    model: str | None = None
    said: str | None = None  # pass | refuse, when a juror answered
    bare: bool | None = None  # T6: a pass with no supported finding

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"outcome": self.outcome, "reason": self.reason, "rung": self.rung}
        for key in ("provider", "family", "model", "said", "bare"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        out["attempts"] = [a.to_dict() for a in self.attempts]
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> SeatRecord:
        return cls(raw["outcome"], raw["reason"], raw["rung"],
                   tuple(AttemptRecord.from_dict(a) for a in raw["attempts"]),
                   raw.get("provider"), raw.get("family"), raw.get("model"), raw.get("said"),
                   raw.get("bare"))

    @property
    def spent(self) -> Usage | None:
        return total(a.spent for a in self.attempts)


class VerdictRecord(NamedTuple):
    """T6: one lens's verdict (``verdicts/<lens>.yaml``)."""

    run_id: str
    round: int
    candidate: str
    tree: str
    envelope_hash: str
    lens: str
    outcome: str  # pass | refuse | hold
    reason: str
    seat: SeatRecord
    findings: tuple[FindingRecord, ...]
    recorded_at: str
    verifier: SeatRecord | None = None
    unverified: bool = False  # T2: the optional verifier did not answer
    halted: bool = False  # T2: a required verifier could not sit
    bare: bool = False
    slice: str | None = None
    ball: str | None = None
    usage: Usage | None = None  # issue 15 item 9: every call of both seats, summed

    def to_dict(self) -> dict[str, Any]:
        out = {**_head("verdict", self), "lens": self.lens, "outcome": self.outcome,
               "reason": self.reason, "unverified": self.unverified, "halted": self.halted,
               "bare": self.bare, "seat": self.seat.to_dict(),
               "findings": [f.to_dict() for f in self.findings]}
        if self.verifier is not None:
            out["verifier"] = self.verifier.to_dict()
        if self.usage is not None:
            out["usage"] = self.usage.to_dict()
        out["recorded_at"] = self.recorded_at
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> VerdictRecord:
        verifier = raw.get("verifier")
        return cls(**_stamp(raw), lens=raw["lens"], outcome=raw["outcome"],
                   reason=raw["reason"], seat=SeatRecord.from_dict(raw["seat"]),
                   findings=tuple(FindingRecord.from_dict(f) for f in raw["findings"]),
                   recorded_at=raw["recorded_at"],
                   verifier=SeatRecord.from_dict(verifier) if verifier else None,
                   unverified=raw.get("unverified", False), halted=raw.get("halted", False),
                   bare=raw.get("bare", False), usage=_usage(raw))


class CheckRecord(NamedTuple):
    """One mechanical check (T7): ok, fail, or invalid (the harness cannot grade)."""

    name: str
    result: str  # ok | fail | invalid
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "result": self.result, "detail": self.detail}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> CheckRecord:
        return cls(raw["name"], raw["result"], raw["detail"])


class MechanicalRecord(NamedTuple):
    """T7 (5): the checks a juror cannot fake, beside the verdicts."""

    outcome: str  # pass | refuse
    invalid: bool
    checks: tuple[CheckRecord, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"outcome": self.outcome, "invalid": self.invalid,
                "checks": [c.to_dict() for c in self.checks]}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> MechanicalRecord:
        return cls(raw["outcome"], raw["invalid"],
                   tuple(CheckRecord.from_dict(c) for c in raw["checks"]))


class IndependenceRecord(NamedTuple):
    """Issue 17, T3: how independent one convening's seats were, from the ledger's history
    (``tribunal.independence``): said in the summary, never silently."""

    rungs: tuple[str, ...]
    families: tuple[str, ...]
    single_family: bool
    effective_jurors: float | None  # None: unmeasured
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"rungs": list(self.rungs), "families": list(self.families),
                "single_family": self.single_family,
                "effective_jurors": self.effective_jurors, "notes": list(self.notes)}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> IndependenceRecord:
        return cls(tuple(raw["rungs"]), tuple(raw["families"]), raw["single_family"],
                   raw["effective_jurors"], tuple(raw["notes"]))


class LensOutcome(NamedTuple):
    lens: str
    outcome: str  # pass | refuse | hold


class SummaryRecord(NamedTuple):
    """T2, T7: the convening's outcome, written last (``summary.yaml``); ``series`` names
    what its rounds grade (``ball:<slice>/<ball>`` for a ball), ``new_count`` its new
    findings (T9: convergence across rounds)."""

    run_id: str
    round: int
    candidate: str
    tree: str
    envelope_hash: str
    series: str
    base: str
    builder_family: str
    outcome: str  # pass | refuse | hold
    reason: str
    lenses: tuple[LensOutcome, ...]
    findings: tuple[FindingRecord, ...]
    new_count: int
    recorded_at: str
    builder: tuple[tuple[str, str], ...] = ()  # model, family, session as declared (T4)
    halted: bool = False
    escalated: bool = False
    annulled: bool = False
    single_rung: bool = False
    unverified: tuple[str, ...] = ()
    resolved: tuple[str, ...] = ()
    new_counts: tuple[int, ...] = ()
    oscillating: tuple[str, ...] = ()
    mechanical: MechanicalRecord | None = None
    slice: str | None = None
    ball: str | None = None
    usage: Usage | None = None  # issue 15 item 9: every verdict's, summed
    independence: IndependenceRecord | None = None  # issue 17

    def to_dict(self) -> dict[str, Any]:
        out = {**_head("summary", self), "series": self.series, "base": self.base,
               "builder_family": self.builder_family, "builder": dict(self.builder),
               "outcome": self.outcome, "reason": self.reason, "halted": self.halted,
               "escalated": self.escalated}
        if self.annulled:
            out["annulled"] = True
        out.update(
            single_rung=self.single_rung, lenses={x.lens: x.outcome for x in self.lenses},
            unverified=list(self.unverified), findings=[f.to_dict() for f in self.findings],
            new_count=self.new_count, resolved=list(self.resolved),
            new_counts=list(self.new_counts), oscillating=list(self.oscillating),
            mechanical=self.mechanical.to_dict() if self.mechanical else None,
        )
        if self.independence is not None:
            out["independence"] = self.independence.to_dict()
        if self.usage is not None:
            out["usage"] = self.usage.to_dict()
        out["recorded_at"] = self.recorded_at
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> SummaryRecord:
        mechanical = raw.get("mechanical")
        return cls(
            **_stamp(raw), series=raw["series"], base=raw["base"],
            builder_family=raw["builder_family"], outcome=raw["outcome"], reason=raw["reason"],
            lenses=tuple(LensOutcome(k, v) for k, v in raw["lenses"].items()),
            findings=tuple(FindingRecord.from_dict(f) for f in raw["findings"]),
            new_count=raw["new_count"], recorded_at=raw["recorded_at"],
            builder=tuple((raw.get("builder") or {}).items()),
            halted=raw.get("halted", False), escalated=raw.get("escalated", False),
            annulled=raw.get("annulled", False), single_rung=raw.get("single_rung", False),
            unverified=tuple(raw.get("unverified", ())), resolved=tuple(raw.get("resolved", ())),
            new_counts=tuple(raw.get("new_counts", ())),
            oscillating=tuple(raw.get("oscillating", ())),
            mechanical=MechanicalRecord.from_dict(mechanical) if mechanical else None,
            usage=_usage(raw),
            independence=IndependenceRecord.from_dict(raw["independence"])
            if raw.get("independence") else None,
        )


def _usage(raw: dict[str, Any]) -> Usage | None:
    usage = raw.get("usage")
    return Usage.from_dict(usage) if usage else None


TribunalRecord = EnvelopeRecord | RoutingRecord | VerdictRecord | SummaryRecord
