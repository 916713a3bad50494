"""A commit's SSH signature, checked against the policy: the key's fingerprint and the roles
it holds at a time, or a typed failure that says why not.

``signature_of`` does the cryptography once per commit id and caches it (a commit id names
its bytes, signature included, so the answer never goes stale); ``standing`` judges the key
against a policy at any number of times without another process.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from leapgit.errors import RuleViolation
from leapgit.signing import sshsig
from leapgit.signing.policy import Policy, Standing

if TYPE_CHECKING:
    from dulwich.objects import Commit


class SignatureProblem(RuleViolation):
    """Why a commit's signature does not count. ``kind`` is stable (audit, JSON)."""

    kind = "signature"
    rule = "S1"

    def __init__(self, message: str, *, commit: str, fingerprint: str | None = None,
                 hint: str | None = None) -> None:
        super().__init__(message, file=commit[:12], rule=self.rule, hint=hint)
        self.commit = commit
        self.fingerprint = fingerprint
        self.reason = message


class Unsigned(SignatureProblem):
    kind = "unsigned"


class BadSignature(SignatureProblem):
    kind = "bad-signature"


class ContentAltered(SignatureProblem):
    kind = "content-altered"


class UnknownKey(SignatureProblem):
    kind = "unknown-key"
    rule = "S2"


class ExpiredKey(SignatureProblem):
    kind = "expired-key"
    rule = "S2"


@dataclass(frozen=True)
class Signature:
    commit: str
    fingerprint: str
    when: int  # the committer time: when the signer says it signed


_checked: dict[bytes, Signature | SignatureProblem] = {}
_CACHE_MAX = 65536


def signer_fingerprint(commit: Commit) -> str | None:
    """The key a commit claims to be signed with, read without any crypto (None: unsigned
    or unreadable). For exclusion lists only; never as proof."""
    if not commit.gpgsig:
        return None
    try:
        return sshsig.parse(commit.gpgsig).fingerprint
    except sshsig.Malformed:
        return None


def signature_of(commit: Commit) -> Signature:
    """The good signature on ``commit``, or the ``SignatureProblem`` saying what is wrong."""
    found = _checked.get(commit.id)
    if found is None:
        try:
            found = _check(commit)
        except SignatureProblem as exc:
            found = exc
        if len(_checked) > _CACHE_MAX:
            _checked.clear()
        _checked[commit.id] = found
    if isinstance(found, SignatureProblem):
        raise found
    return found


def check_many(commits: Iterable[Commit], workers: int | None = None) -> None:
    """Verify many signatures at once, one ssh-keygen each, run side by side (a push of
    fifty records waits for the slowest batch, not the sum); ``signature_of`` then answers
    from the cache."""
    todo = []
    for commit in {c.id: c for c in commits if c.id not in _checked}.values():
        if commit.gpgsig:
            todo.append(commit)
        else:  # nothing to verify: answered here, no thread spent on it
            _checked[commit.id] = _outcome(commit)
    if len(todo) < 2:
        return

    with ThreadPoolExecutor(max_workers=workers or min(8, os.cpu_count() or 2)) as pool:
        results = list(pool.map(_outcome, todo))
    for commit, found in zip(todo, results, strict=True):
        _checked[commit.id] = found


def _outcome(commit: Commit) -> Signature | SignatureProblem:
    try:
        return _check(commit)
    except SignatureProblem as exc:
        return exc


def _check(commit: Commit) -> Signature:
    sha = commit.id.decode()
    if not commit.gpgsig:
        raise Unsigned("the commit is not signed", commit=sha,
                       hint="configure a signing key (`leap init --signing`) and re-write it")
    try:
        sig = sshsig.parse(commit.gpgsig)
    except sshsig.Malformed as exc:
        raise BadSignature(f"bad signature: {exc}", commit=sha,
                           hint="sign with an SSH key (gpg.format=ssh)") from None
    try:
        sshsig.check(sig, commit.raw_without_sig())
    except sshsig.Mismatch as exc:
        raise ContentAltered(f"the signature by {sig.fingerprint} does not match the commit's "
                             f"bytes: its content was altered after signing ({exc})",
                             commit=sha, fingerprint=sig.fingerprint,
                             hint="never edit a signed commit; write it anew") from None
    return Signature(sha, sig.fingerprint, int(commit.commit_time))


def standing(policy: Policy, sig: Signature, *times: int) -> Standing:
    """The key's roles at the signature's time and at each of ``times`` (all must hold:
    the server adds the push time, so a retired key cannot sign with a back-dated clock)."""
    when = (sig.when, *times)
    if not policy.knows(sig.fingerprint):
        raise UnknownKey(f"key {sig.fingerprint} is not in the policy {policy.source}",
                         commit=sig.commit, fingerprint=sig.fingerprint,
                         hint=f"an admin adds the key to {policy.source} on the spine")
    found = [policy.standing(sig.fingerprint, t) for t in when]
    if any(s is None for s in found):
        at = next(t for t, s in zip(when, found, strict=True) if s is None)
        raise ExpiredKey(f"key {sig.fingerprint} is not valid at {_iso(at)}: "
                         f"{_window(policy, sig.fingerprint)} in {policy.source}",
                         commit=sig.commit, fingerprint=sig.fingerprint,
                         hint="sign with a current key")
    roles = frozenset.intersection(*(s.roles for s in found if s is not None))
    first = found[0]
    assert first is not None
    return Standing(sig.fingerprint, roles, first.names)


def _window(policy: Policy, fp: str) -> str:
    spans = []
    for key in policy.entries(fp):
        after = _iso(key.valid_after) if key.valid_after is not None else "always"
        before = _iso(key.valid_before) if key.valid_before is not None else "no end"
        spans.append(f"valid-after {after}, valid-before {before}" if key.namespaces is None
                     or "git" in key.namespaces else "namespaces exclude git")
    return "; ".join(spans)


def _iso(when: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))
