"""What `leap audit` reports: named checks (each citing its rule id), violations, and each
slice's re-derived state. ``AuditReport.to_json`` is the documented, stable ``--json``
format (README, "Score, merge and audit"): keys never change meaning; new keys may be
added; lists are sorted so the same ledger always prints the same bytes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from leapgit.worktrees.evidence import Evidence

AUDIT_FORMAT = 1

# check id -> (rule id, what holds when it passes). The order is the report's order.
CHECKS: dict[str, tuple[str, str]] = {
    "ledger-append-only": ("L8", "no ledger record was ever edited or deleted, nor a folder "
                           "changed beyond what git's diff shows"),
    "ledger-written-by-leapgit": ("L8", "every ledger commit adds exactly the records its "
                                  "Leap-Record trailers name"),
    "ledger-history-kept": ("L8", "no record the ledger ref ever held was changed or "
                            "dropped by a rewrite (sync replays keep every record)"),
    "slice-cut": ("L1", "every slice was cut whole: its record and every ball's first spec "
                  "in one commit that passes the cut's own check"),
    "no-fifth-round": ("L6", "no episode has a fifth round"),
    "pass-provenance": ("L7.5", "every pass record carries its whole chain with one "
                        "candidate hash"),
    "pass-candidate": ("L7.1", "every pass names the tree of the commit it scored"),
    "red-unchanged": ("T7.1", "the red tests of every pass are byte for byte as at red"),
    "merge-record": ("L8", "every slice pass record names passed balls, their merge "
                     "commits and a passed aggregate review"),
    "reopen-recorded": ("L8", "no spine commit outside an integration changes the files of a "
                        "merged ball the ledger still holds as merged (such a change reopens "
                        "it; `leap merge SLICE` records the reopen)"),
    "spine-traced": ("L8", "every spine commit since a slice's base is an integration "
                     "merge of a passed ball"),
    "one-integrator": ("L9", "at most one integrator lease is open on the spine"),
    "signatures": ("S1", "every ledger commit, spine commit and round passes the "
                   "server's signature rules under the policy in force where it landed "
                   "(unsigned ones too, when signatures are required)"),
}


@dataclass(frozen=True)
class Violation:
    check: str
    subject: str
    message: str
    commit: str | None = None
    path: str | None = None

    @property
    def rule(self) -> str:
        return CHECKS[self.check][0]

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "check": self.check, "subject": self.subject,
                "commit": self.commit, "path": self.path, "message": self.message}

    def line(self) -> str:
        where = " ".join(x for x in (self.path, self.commit[:12] if self.commit else None) if x)
        return f"[{self.rule}] {self.check}: {self.subject}: {self.message}" + \
            (f" ({where})" if where else "")


@dataclass(frozen=True)
class BallAudit:
    ball: str
    state: str  # cut | built | passed | refused | held | reopened | merged
    score: int | None = None
    candidate: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"ball": self.ball, "state": self.state, "score": self.score,
                "candidate": self.candidate}


@dataclass(frozen=True)
class SliceAudit:
    slice: str
    # open | complete | merged | reopened (a ball to re-score or re-merge, or the landed
    # slice fails its live proof) | abandoned
    state: str
    balls: tuple[BallAudit, ...]

    def to_json(self) -> dict[str, Any]:
        return {"slice": self.slice, "state": self.state,
                "balls": [b.to_json() for b in self.balls]}


@dataclass
class AuditReport:
    ledger_ref: str
    ledger_tip: str | None
    spine_ref: str
    spine_tip: str | None
    commits: int = 0
    records: int = 0
    checked: dict[str, int] = field(default_factory=lambda: {k: 0 for k in CHECKS})
    violations: list[Violation] = field(default_factory=list)
    slices: list[SliceAudit] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # refused commits kept under refs/leap/evidence/ (local refs, L6), against the ledger
    evidence: list[Evidence] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations

    def count(self, check: str, n: int = 1) -> None:
        self.checked[check] += n

    def add(self, violation: Violation) -> None:
        self.violations.append(violation)

    def to_json(self) -> dict[str, Any]:
        bad = {k: 0 for k in CHECKS}
        for v in self.violations:
            bad[v.check] += 1
        return {
            "format": AUDIT_FORMAT, "ok": self.ok,
            "ledger": {"ref": self.ledger_ref, "tip": self.ledger_tip,
                       "commits": self.commits, "records": self.records},
            "spine": {"ref": self.spine_ref, "tip": self.spine_tip},
            "checks": [{"check": k, "rule": rule, "holds": what, "checked": self.checked[k],
                        "violations": bad[k]} for k, (rule, what) in CHECKS.items()],
            "slices": [s.to_json() for s in sorted(self.slices, key=lambda s: s.slice)],
            "violations": [v.to_json() for v in sorted(
                self.violations, key=lambda v: (list(CHECKS).index(v.check), v.subject,
                                                v.path or "", v.commit or ""))],
            "notes": sorted(self.notes),
            "evidence": [e.to_json() for e in sorted(self.evidence, key=lambda e: e.ref)],
        }
