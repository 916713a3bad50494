"""Worker claims on published episodes (L9: one writer per ball), judged in one place.

A ball thrown with ``--remote`` is *published*: its throw record says so and names no
worktree, and whoever builds it first claims it on the shared remote's ledger. Claim ``n``
of an episode is ``take.yaml`` (with a lease, ``claimed_until``), any ``renew-<k>.yaml``
that extends the lease while the worker builds, and ``release.yaml``. A claim is *live*
while it is taken, not given back, and its lease has not run out by the judge's clock (the
server's own, in ``pre-receive``). The remote's atomic ref update decides between racing
workers: two takes of claim ``n`` are the same path with different bytes, so only one
reaches the ledger.

``claim_problems`` says what is wrong with a claim record; ``builder_problems`` what is
wrong with a round, receipt or checkpoint written on a published episode by anyone but
the live claim's holder. ``pre-receive``, the worker and `leap audit` ask these two.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from leapgit.ledger import layout, query
from leapgit.rules.episodes import Episode, branch_episodes

if TYPE_CHECKING:
    from leapgit.ledger.view import LedgerView
    from leapgit.records.claims import ClaimRecord

RULE = "L9"
SKEW = 60.0  # seconds a worker's clock may run ahead of the server's in a lease it asks for
# What a refused lease says: no lost race (a worker asking it again is refused again).
LEASE_TOO_LONG = "is longer than workers.claim_seconds"
LEASE_PAST = "has run out already by the server's clock"


@dataclass(frozen=True)
class Claim:
    number: int
    take: ClaimRecord | None
    renewals: tuple[ClaimRecord, ...]
    release: ClaimRecord | None

    @property
    def holder(self) -> str:
        return self.take.holder if self.take is not None else ""

    @property
    def until(self) -> float:
        """When the lease runs out: the latest ``claimed_until`` of its take and renewals."""
        from leapgit.timeutil import epoch_of

        stamps = [r.claimed_until for r in (self.take, *self.renewals)
                  if r is not None and r.claimed_until]
        found = [t for t in (epoch_of(s) for s in stamps) if t is not None]
        return max(found, default=0.0)

    def live(self, now: float) -> bool:
        return self.take is not None and self.release is None and self.until > now


# Parsed claim records by (path, blob id): a blob never changes, and an episode's claims are
# unbounded (take and release again and again, or renew), so each push reads each record
# once, not once for every record judged beside it (an n^2 exhaustion of the server).
_READ: dict[tuple[str, str], ClaimRecord | None] = {}
_READ_CAP = 200_000


def _read(view: LedgerView, path: str) -> ClaimRecord | None:
    from leapgit.records.claims import ClaimRecord

    blob = view.blob_id(path)
    if blob is None:
        return None
    key = (path, blob)
    if key not in _READ:
        if len(_READ) >= _READ_CAP:
            _READ.clear()
        _READ[key] = view.record(path, ClaimRecord)
    return _READ[key]


_CLAIMS: dict[tuple[str, str], list[Claim]] = {}  # by (ledger commit, folder): immutable


def claims(view: LedgerView, slice_id: str, ball_id: str, episode: int) -> list[Claim]:
    folder = layout.claims_dir(slice_id, ball_id, episode)
    key = (str(view.commit), folder)
    if view.commit is None or key not in _CLAIMS:
        if len(_CLAIMS) >= 1000:
            _CLAIMS.clear()
        _CLAIMS[key] = _claims(view, folder, slice_id, ball_id, episode)
    return list(_CLAIMS[key])


def _claims(view: LedgerView, folder: str, slice_id: str, ball_id: str, episode: int
            ) -> list[Claim]:
    out = []
    for name in view.list(folder):
        if not (name.isascii() and name.isdigit()):
            continue
        n = int(name)
        files = view.list(f"{folder}/{name}")

        def read(action: str, renewal: int | None = None, n: int = n) -> ClaimRecord | None:
            return _read(view, layout.claim_path(slice_id, ball_id, episode, n, action,
                                                 renewal))
        renewals = sorted(int(f[6:-5]) for f in files
                          if f.startswith("renew-") and f[6:-5].isascii() and f[6:-5].isdigit())
        out.append(Claim(n, read("take"),
                         tuple(r for r in (read("renew", k) for k in renewals) if r),
                         read("release")))
    return sorted(out, key=lambda c: c.number)


def live_claim(view: LedgerView, slice_id: str, ball_id: str, episode: int,
               now: float | None = None) -> Claim | None:
    now = time.time() if now is None else now
    found = [c for c in claims(view, slice_id, ball_id, episode) if c.live(now)]
    return found[-1] if found else None


def published(view: LedgerView, slice_id: str, ball_id: str, episode: int) -> bool:
    thrown = query.throw(view, slice_id, ball_id, episode)
    return thrown is not None and thrown.published


def claim_problems(view: LedgerView, rec: ClaimRecord, claim_seconds: float,
                   now: float | None = None, round_cap: int = 4) -> list[str]:
    """What is wrong with claim record ``rec`` on the ledger ``view`` (which holds it):
    L9, one live claim an episode, taken only on a published episode still being built,
    renewed and given back only by its holder, a lease no longer than ``claim_seconds``."""
    from leapgit.timeutil import epoch_of

    now = time.time() if now is None else now
    ball = f"{rec.slice}/{rec.ball}"
    if not published(view, rec.slice, rec.ball, rec.episode):
        return [f"episode {rec.episode} of {ball} was not published to workers "
                f"(`leap throw {rec.slice} --ball {rec.ball} --remote REMOTE`): no worker "
                "claims it"]
    every = claims(view, rec.slice, rec.ball, rec.episode)
    mine = next((c for c in every if c.number == rec.claim), None)
    out: list[str] = []
    if rec.claimed_until is not None:
        until = epoch_of(rec.claimed_until)
        if until is None or until > now + claim_seconds + SKEW:
            out.append(f"a lease until {rec.claimed_until} {LEASE_TOO_LONG} "
                       f"({claim_seconds:g} s) from now")
        elif until <= now:  # a take or renewal that holds nothing (the worker's clock is behind)
            out.append(f"a lease until {rec.claimed_until} {LEASE_PAST} ({_iso(now)})")
    if rec.action == "take":
        if [c.number for c in every] != list(range(1, len(every) + 1)):
            out.append(f"claim {rec.claim} skips a number: claims are numbered without gaps")
        before = [c for c in every if c.number < rec.claim]
        held = [c for c in before if c.live(now)]
        if held:
            out.append(f"claim {held[-1].number} of {held[-1].holder!r} is live until "
                       f"{_iso(held[-1].until)}: one writer per ball")
        ended = _ended(view, rec.slice, rec.ball, rec.episode, round_cap)
        if ended:
            out.append(f"episode {rec.episode} of {ball} {ended}: nothing left to build")
        return out
    if mine is None or mine.take is None:
        return out + [f"claim {rec.claim} was never taken"]
    if mine.holder != rec.holder:
        out.append(f"claim {rec.claim} is held by {mine.holder!r}, not {rec.holder!r}")
    if rec.action == "renew":
        later = [c for c in every if c.number > rec.claim]
        if later:
            out.append(f"claim {rec.claim} was taken over by claim {later[0].number} "
                       f"({later[0].holder!r}) once its lease ran out")
        if mine.release is not None:
            out.append(f"claim {rec.claim} was given back")
        numbers = [r.renewal for r in mine.renewals]
        if numbers != list(range(1, len(numbers) + 1)):
            out.append(f"renewal {rec.renewal} skips a number")
    return out


def claimed_rounds(view: LedgerView, slice_id: str, ball_id: str, episode: int
                   ) -> frozenset[str]:
    """L9: the commits receipts recorded under a live claim on the branch ``episode`` goes
    on with: of the published episodes among it and the ones it resumed (``branch_episodes``:
    never across a fresh start). A published episode takes a receipt only from its live
    claim's holder, and none once it ended, so these were built under a claim; a branch
    deleted on the remote and pushed back with them builds nothing. An unpublished
    episode's receipts name commits anyone may have recorded: never counted here."""
    return frozenset(r.commit for n in branch_episodes(view, slice_id, ball_id, episode)
                     if published(view, slice_id, ball_id, n)
                     for r in query.receipts(view, slice_id, ball_id, n) if r.commit)


def builder_problems(view: LedgerView, slice_id: str, ball_id: str, episode: int,
                     worker: str | None, pusher: str | None,
                     now: float | None = None) -> list[str]:
    """L9: on a published episode a round, a receipt or a checkpoint comes only from the
    live claim's holder: ``worker``, the one the record names (None for a ball-branch
    commit), and ``pusher``, the one the transport names (None where it names nobody)."""
    if not published(view, slice_id, ball_id, episode):
        return []
    now = time.time() if now is None else now
    live = live_claim(view, slice_id, ball_id, episode, now)
    ball = f"{slice_id}/{ball_id}"
    if live is None:
        return [f"episode {episode} of {ball} is published to workers and no claim on it is "
                "live: only the worker holding a live claim builds it"]
    out = []
    if worker == "":
        out.append(f"the record names no worker; claim {live.number} is held by "
                   f"{live.holder!r}")
    elif worker is not None and worker != live.holder:
        out.append(f"recorded by worker {worker!r}, but claim {live.number} is held by "
                   f"{live.holder!r}")
    if pusher is not None and pusher != live.holder:
        out.append(f"pushed by {pusher!r}, but claim {live.number} is held by "
                   f"{live.holder!r}")
    return out


def _ended(view: LedgerView, slice_id: str, ball_id: str, episode: int,
           round_cap: int) -> str | None:
    """Why the episode is no longer being built (L9: nothing left to claim), or None. As
    `leap throw` derives a ball's standing (``readiness.own_state``): a pass, a refuse (its
    receipt's or its score's), a hold (a checkpoint, a last round scored 0), or a later
    episode thrown."""
    from leapgit.rules.readiness import own_state, scored

    later = [e for e in query.episodes(view, slice_id, ball_id)
             if e > episode and query.throw(view, slice_id, ball_id, e) is not None]
    if later:
        return f"was thrown again as episode {later[-1]}"
    thrown = query.throw(view, slice_id, ball_id, episode)
    if thrown is None:
        return "was never thrown"
    current = Episode(thrown, tuple(query.receipts(view, slice_id, ball_id, episode)),
                      query.checkpoint(view, slice_id, ball_id, episode))
    state = own_state(current, *scored(view, slice_id, ball_id, current, round_cap))
    return _ENDED.get(state)


_ENDED = {"pass": "passed (1)", "refuse": "ended with a refuse (-1)",
          "hold": "ended with a hold (0, a checkpoint or its last round held)"}


def _iso(seconds: float) -> str:
    from leapgit.timeutil import iso_at

    return iso_at(seconds)
