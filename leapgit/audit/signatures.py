"""Audit every signature in the history with the rules pre-receive runs (S1-S6), each
commit judged where it landed, by the policy then in force (``replay``, ``timeline``).

Which policy was in force is read from the topology, never from a committer time alone:
a ledger commit is judged by the newest spine commit it provably follows, or a later one
its time names, never an earlier one. Key lifetimes (``valid-after``/``valid-before``,
S2) can only be read against the committer time, so the clock itself is audited: a signed
commit dated before what it provably follows (its parent; for a ledger commit, also the
spine commit its floor names), or after the audit's own clock, is a finding, beyond
``CLOCK_SKEW`` seconds of honest drift between machines.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from leapgit.audit.replay import replay
from leapgit.gitobj import refname
from leapgit.rules.signing_history import spine_epochs
from leapgit.signing.verify import signer_fingerprint

if TYPE_CHECKING:
    from leapgit.audit.graph import Graph
    from leapgit.audit.replay import Judged
    from leapgit.gitobj import GitRepo
    from leapgit.records.types import Config
    from leapgit.rules.refusal import Refusal

OK = "ok"
MISSING_ROLE = "missing-role"
BAD_POLICY = "bad-policy"
TIME_BACKWARDS = "time-backwards"
TIME_FUTURE = "time-future"
CLOCK_SKEW = 300  # seconds: clocks of honest machines drift; a forged time hides within it
_KINDS = {"S1": "bad-signature", "S2": "unknown-key", "S3": MISSING_ROLE, "S4": "self-graded",
          "S5": "two-integrators", "S6": "policy-change"}


@dataclass(frozen=True)
class SignatureFinding:
    commit: str
    branch: str  # "ledger", "spine" or "round"
    kind: str  # ok, unsigned, bad-signature, content-altered, unknown-key, expired-key, ...
    message: str
    fingerprint: str | None = None
    paths: tuple[str, ...] = ()
    rule: str = ""

    @property
    def ok(self) -> bool:
        return self.kind == OK

    @property
    def unsigned(self) -> bool:
        return self.kind == "unsigned"

    def to_json(self) -> dict[str, Any]:
        return {"commit": self.commit, "branch": self.branch, "kind": self.kind,
                "rule": self.rule, "fingerprint": self.fingerprint, "paths": list(self.paths),
                "message": self.message}


def _tip(repo: GitRepo, ref: str) -> str | None:
    try:
        return repo.refs[refname(ref)].decode()
    except KeyError:
        return None


def audit_signatures(repo: GitRepo, config: Config, now: int | None = None,
                     graph: Graph | None = None) -> list[SignatureFinding]:
    """Findings for every judged commit (ledger, spine, rounds) in the order they landed;
    ``graph``: git's commit graph of the spine, when the caller has read it."""
    clock = int(time.time()) if now is None else now
    judged = replay(repo, config, graph)
    out: list[SignatureFinding] = []
    for j in judged:
        out.extend(_findings(j))
        out.extend(_clock(j, clock))
    out.extend(_unjudged_policies(repo, config, {j.commit.id for j in judged}))
    return out


def _findings(j: Judged) -> list[SignatureFinding]:
    sha = j.commit.id.decode()
    fp = signer_fingerprint(j.commit)
    paths = j.paths
    if j.problem is not None:
        at = j.epoch.commit[:12] if j.epoch else "-"
        return [SignatureFinding(sha, j.branch, BAD_POLICY, f"signed while the policy of "
                                 f"spine commit {at} was in force, which does not parse: "
                                 f"{j.problem}", fp, paths, "S6")]
    if j.refusals:
        return [_refused(j, r, fp, paths) for r in j.refusals]
    names = sorted({n for k in j.policy.entries(fp) for n in k.names}) \
        if j.policy is not None and fp else []
    return [SignatureFinding(sha, j.branch, OK, f"signed by key {fp} "
                             f"({','.join(names) or 'no name'})", fp, paths)]


def _refused(j: Judged, r: Refusal, fp: str | None, paths: tuple[str, ...],
             ) -> SignatureFinding:
    kind = r.kind or _KINDS.get(r.rule, r.rule)
    # an unsigned commit leaves each of its records unsigned, not only the one the message
    # names (``leap status`` sends the user here to list them)
    named = paths if (kind == "unsigned" and paths) or not r.path else (r.path,)
    return SignatureFinding(j.commit.id.decode(), j.branch, kind, r.message, fp, named,
                            r.rule)


def _clock(j: Judged, now: int) -> list[SignatureFinding]:
    """S2 reads key lifetimes against the committer time: a signed commit's time must not
    run backwards from what it provably follows, nor ahead of the audit's clock."""
    fp = signer_fingerprint(j.commit)
    if fp is None:
        return []  # an unsigned commit claims no key lifetime
    sha, when = j.commit.id.decode(), int(j.commit.commit_time)
    out = []
    for before in j.follows:
        if when < int(before.commit_time) - CLOCK_SKEW:
            what = "its parent" if before.id in j.commit.parents else "spine commit"
            out.append(SignatureFinding(
                sha, j.branch, TIME_BACKWARDS, f"dated {_iso(when)}, "
                f"{_span(int(before.commit_time) - when)} before {what} "
                f"{before.id.decode()[:12]} it provably follows: a forged (back-dated) "
                "committer time, or a clock far off; key lifetimes were read against it",
                fp, (), "S2"))
    if when > now + CLOCK_SKEW:
        out.append(SignatureFinding(sha, j.branch, TIME_FUTURE, f"dated {_iso(when)}, "
                                    f"{_span(when - now)} after this audit's clock: a forged "
                                    "(forward-dated) committer time, or a clock far off",
                                    fp, (), "S2"))
    return out


def _unjudged_policies(repo: GitRepo, config: Config, judged: set[bytes],
                       ) -> list[SignatureFinding]:
    """A policy that does not parse, put in force by a spine commit no rule judged (the
    first policy, or one that arrived while none was in force)."""
    epochs = spine_epochs(repo.object_store, _tip(repo, f"refs/heads/{config.spine}"))
    out = []
    for index, epoch in enumerate(epochs):
        if epoch.problem is None or epoch.commit.encode() in judged:
            continue
        if index == 0 or epochs[index - 1].problem != epoch.problem:
            out.append(SignatureFinding(epoch.commit, "spine", BAD_POLICY, f"the policy this "
                                        f"spine commit put in force does not parse: "
                                        f"{epoch.problem}", rule="S6"))
    return out


def _iso(when: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))


def _span(seconds: int) -> str:
    if seconds >= 7200:
        return f"{seconds // 3600} h"
    return f"{seconds // 60} min" if seconds >= 120 else f"{seconds} s"
