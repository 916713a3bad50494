"""Audit every signature in the history against the policy in force when it was made.

The policy in force at a time is the one the spine's first-parent line held at its newest
commit not later than that time (``history.in_force``): a key retired later still passes
for what it signed while valid. What was signed before any policy reached the spine is
judged by the first policy. Each ledger commit is checked for S1 (signed, bytes intact),
S2 (key known and valid at the commit's time) and S3 (the role its records need); each
spine merge for S1-S3 as an integrator, against the policy of its first parent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from leapgit.signing import roles
from leapgit.signing.history import PolicyEpoch, added_records, in_force, spine_epochs
from leapgit.signing.policy import Policy
from leapgit.signing.verify import SignatureProblem, signature_of, standing

if TYPE_CHECKING:
    from dulwich.objects import Commit
    from dulwich.repo import Repo

OK = "ok"
MISSING_ROLE = "missing-role"
BAD_POLICY = "bad-policy"


@dataclass(frozen=True)
class SignatureFinding:
    commit: str
    branch: str  # "ledger" or "spine"
    kind: str  # ok, unsigned, bad-signature, content-altered, unknown-key, expired-key, ...
    message: str
    fingerprint: str | None = None
    paths: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.kind == OK

    @property
    def unsigned(self) -> bool:
        return self.kind == "unsigned"

    def to_json(self) -> dict[str, Any]:
        return {"commit": self.commit, "branch": self.branch, "kind": self.kind,
                "fingerprint": self.fingerprint, "paths": list(self.paths),
                "message": self.message}


def _load(data: bytes, path: str) -> object:
    from leapgit.errors import LeapError
    from leapgit.records import yamlio

    try:
        return yamlio.loads(data, path)
    except LeapError:
        return None


def _tip(repo: Repo, ref: str) -> str | None:
    from leapgit.gitobj import refname

    try:
        return repo.refs[refname(ref)].decode()
    except KeyError:
        return None


def audit_signatures(repo: Repo, ledger_ref: str, spine: str) -> list[SignatureFinding]:
    """One finding per ledger commit and per spine merge, oldest first."""
    from dulwich.walk import ORDER_TOPO, Walker

    store = repo.object_store
    spine_ref = spine if spine.startswith("refs/") else f"refs/heads/{spine}"
    epochs = spine_epochs(store, _tip(repo, spine_ref))
    out: list[SignatureFinding] = []
    tip = _tip(repo, ledger_ref)
    if tip is not None:
        for entry in Walker(store, [tip.encode()], order=ORDER_TOPO,  # type: ignore[list-item]
                            reverse=True):
            out.append(_ledger_finding(repo, entry.commit, epochs))
    for index, epoch in enumerate(epochs):
        commit: Commit = store[epoch.commit.encode()]  # type: ignore[index,assignment]
        if epoch.problem is not None and (index == 0 or
                                          epochs[index - 1].problem != epoch.problem):
            out.append(SignatureFinding(epoch.commit, "spine", BAD_POLICY, f"the policy "
                                        f"this spine commit put in force does not parse: "
                                        f"{epoch.problem}"))
        if len(commit.parents) == 2 and index > 0:
            out.append(_judge(commit, "spine", epochs[index - 1],
                              [("", frozenset({roles.INTEGRATOR}), "a spine merge")]))
    return out


def _ledger_finding(repo: Repo, commit: Commit, epochs: list[PolicyEpoch]) -> SignatureFinding:
    records = [(p, r) for p, r in added_records(repo.object_store, commit, _load)
               if isinstance(r, dict)]
    needs = [(p, roles.roles_for(r), f"a {roles.record_key(r)} record") for p, r in records]
    return _judge(commit, "ledger", None, needs, epochs)


def _judge(commit: Commit, branch: str, epoch: PolicyEpoch | None,
           needs: list[tuple[str, frozenset[str], str]],
           epochs: list[PolicyEpoch] | None = None) -> SignatureFinding:
    sha = commit.id.decode()
    paths = tuple(p for p, _, _ in needs if p)
    try:
        sig = signature_of(commit)
        if epochs is not None:
            epoch = in_force(epochs, sig.when)
            if epoch is None or (epoch.policy is None and epoch.problem is None):
                # signed before the first policy reached the spine (`leap init --signing`
                # signs the ledger's root before the policy is committed): the first policy
                epoch = next((e for e in epochs if e.policy is not None), epoch)
        if epoch is not None and epoch.problem is not None:
            return SignatureFinding(sha, branch, BAD_POLICY, f"signed while the policy of "
                                    f"spine commit {epoch.commit[:12]} was in force, which "
                                    f"does not parse: {epoch.problem}", sig.fingerprint, paths)
        policy = epoch.policy if epoch is not None and epoch.policy else Policy(
            source="(no policy in force on the spine at the time)")
        who = standing(policy, sig)
    except SignatureProblem as exc:
        return SignatureFinding(sha, branch, exc.kind, exc.reason, exc.fingerprint, paths)
    for _path, need, what in needs:
        if not who.roles & need:
            return SignatureFinding(
                sha, branch, MISSING_ROLE, f"{what} signed by {who.who()}, which lacked role "
                f"{' or '.join(sorted(need))} under the policy of spine commit "
                f"{epoch.commit[:12] if epoch else '-'}", who.fingerprint, paths)
    return SignatureFinding(sha, branch, OK, f"signed by {who.who()}", who.fingerprint, paths)


@dataclass(frozen=True)
class Presence:
    """Which ledger commits carry a signature at all (no crypto: for `leap status`)."""

    commits: int
    unsigned_records: tuple[str, ...]
    unsigned_commits: int


def signature_presence(repo: Repo, ledger_ref: str) -> Presence:
    from dulwich.walk import Walker

    tip = _tip(repo, ledger_ref)
    commits, unsigned = 0, 0
    paths: list[str] = []
    if tip is not None:
        for entry in Walker(repo.object_store, [tip.encode()]):  # type: ignore[list-item]
            commits += 1
            if not entry.commit.gpgsig:
                unsigned += 1
                paths.extend(p for p, _ in added_records(repo.object_store, entry.commit,
                                                          lambda _d, _p: None))
    return Presence(commits, tuple(sorted(paths)), unsigned)
