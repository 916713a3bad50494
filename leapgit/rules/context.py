"""What a push check looks at: the ref updates, the repository's objects, the config, the
refs as the server stores them, and the pusher (when the transport names one).

Issue 18 F1: every ref is judged against the state the server STORES, never against a
ledger or a ball tip that exists only in the push. git's receive-pack runs ``pre-receive``
once for the whole push, then (unless the client asked for ``--atomic``) moves each ref on
its own, each a compare-and-swap on the ``<old>`` the client sent; one update can fail while
the others land, and a raw client may send any ``<old>``. So:

- an update whose ``<old>`` is not the ref's stored tip is refused (``missing_tip``): the
  ref's own transition is then the one judged, and git's compare-and-swap on that ``<old>``
  refuses it if another push moved the ref in between (updates of one ref serialise);
- the spine and the ball branches read the ledger, and the spine reads the ball branches,
  as stored (``ledger_tip``, ``stored_tip``). What those reads grant (a full pass, the
  lease, a throw, a recorded round) stays true whatever lands in between: the ledger only
  grows (fast-forward, add-only, L8), so a proof read from the stored ledger is a fact of
  its history for good; a record added meanwhile (a release, a reopen) is ordered after the
  ref it did not see, as if that ref had landed first;
- the ledger's own records are judged commit by commit on top of its stored tip
  (``ledger_view(commit)``): they depend on no other pushed ref;
- state that exists only in the push may make a judgment stricter, never looser: S4 counts
  the rounds and the grading records a push brings (``pushed_ledger_tip``, and the pushed
  ball tips beside the stored ones).

So a push that carries the ledger records a spine merge needs (its lease, its passes) is
refused: the ledger goes up first (`leap sync`, as `leap merge` does), then the spine.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from leapgit.errors import LeapError, UsageError, printable
from leapgit.records.config import CONFIG_PATH, check_refs, parse_config
from leapgit.records.types import Config
from leapgit.rules.objects import ZERO, Objects
from leapgit.rules.pusher import Pusher
from leapgit.rules.refusal import Refusal

if TYPE_CHECKING:
    from leapgit.ledger.view import LedgerView
    from leapgit.signing.policy import Policy


@dataclass(frozen=True)
class RefUpdate:
    ref: str
    old: str | None  # None: the ref does not exist yet
    new: str | None  # None: the push deletes the ref

    @classmethod
    def parse(cls, old: str, new: str, ref: str) -> RefUpdate:
        return cls(ref=ref, old=None if old == ZERO else old, new=None if new == ZERO else new)


def _sha(value: str, line: str) -> str:
    if len(value) != 40 or any(c not in "0123456789abcdef" for c in value):
        sha256 = len(value) == 64 and all(c in "0123456789abcdef" for c in value)
        raise UsageError(f"malformed ref update line from git: '{printable(line[:120])}'",
                         hint="sha256 repositories are not supported yet" if sha256 else
                         "git names each object on the line by 40 hex digits")
    return value


def parse_receive_lines(data: bytes) -> list[RefUpdate]:
    """pre-receive stdin: ``<old> <new> <ref>`` per line."""
    out = []
    for line in data.decode("utf-8", "surrogateescape").splitlines():
        if line.strip():
            parts = line.split(" ", 2)
            if len(parts) != 3:
                _sha("", line)
            old, new, ref = parts
            out.append(RefUpdate.parse(_sha(old, line), _sha(new, line), ref))
    return out


def parse_push_lines(data: bytes) -> list[RefUpdate]:
    """pre-push stdin: ``<local ref> <local sha> <remote ref> <remote sha>`` per line."""
    out = []
    for line in data.decode("utf-8", "surrogateescape").splitlines():
        if line.strip():
            parts = line.split(" ", 3)
            if len(parts) != 4:
                _sha("", line)
            _local_ref, local_sha, remote_ref, remote_sha = parts
            out.append(RefUpdate.parse(_sha(remote_sha, line), _sha(local_sha, line),
                                       remote_ref))
    return out


# the ledger views a push keeps (each caches the records it read): one a pushed ledger
# commit, kept for the whole push, held 10^4 views of every lease at once (6.5 GB)
_VIEWS_KEPT = 16


@dataclass
class PushContext:
    objects: Objects
    config: Config
    updates: tuple[RefUpdate, ...]
    pusher: Pusher | None = None
    pusher_problem: str | None = None  # a signed push git did not accept
    authority: bool = False  # pre-receive: this repository holds the refs being judged
    notes: list[str] = field(default_factory=list)
    now: float = field(default_factory=time.time)  # L9: the judge's clock, for claim leases
    _views: dict[str | None, LedgerView] = field(default_factory=dict)
    _policy: list[Policy] = field(default_factory=list)
    _tips: dict[str, str | None] = field(default_factory=dict)

    @property
    def spine_ref(self) -> str:
        return f"refs/heads/{self.config.spine}"

    def update_of(self, ref: str) -> RefUpdate | None:
        return next((u for u in self.updates if u.ref == ref), None)

    def stored_tip(self, ref: str) -> str | None:
        """The ref as the server stores it before this push (F1: what every judgment reads).
        On the server, the repository's own ref (a pushed ``<old>`` that differs is refused,
        ``missing_tip``). On a client (``pre-push``), the remote's tip that the push names
        when this clone holds it, else the local ref standing in for the remote's."""
        if not self.authority:
            pushed = self.update_of(ref)
            if pushed is not None and (pushed.old is None or self.objects.has(pushed.old)):
                return pushed.old
        # one snapshot per run (blind review r1 F1): a ledger push that lands between two
        # reads must not get one merge judged half against each ledger
        if ref not in self._tips:
            self._tips[ref] = self.objects.ref(ref)
        return self._tips[ref]

    def ledger_tip(self) -> str | None:
        """The ledger as stored: the spine and ball rules read it, never a pushed one."""
        return self.stored_tip(self.config.ledger_ref)

    def pushed_ledger_tip(self) -> str | None:
        """The ledger as this push would leave it. Only for checks it can make stricter,
        never looser (S4: who built and who graded a ball)."""
        pushed = self.update_of(self.config.ledger_ref)
        if pushed is not None and pushed.new and self.objects.has(pushed.new):
            return pushed.new
        return self.ledger_tip()

    def ledger_view(self, commit: str | None = None) -> LedgerView:
        from leapgit.ledger.view import LedgerView

        tip = commit if commit is not None else self.ledger_tip()
        view = self._views.pop(tip, None)
        if view is None:
            view = LedgerView(self.objects.repo, tip)
            if len(self._views) >= _VIEWS_KEPT:  # the least recently asked goes
                del self._views[next(iter(self._views))]
        self._views[tip] = view  # most recently asked last
        return view

    def signing_policy(self) -> Policy:
        """``.leap/allowed_signers`` at the spine's tip before this push (a push cannot
        loosen its own rules); an empty policy, trusting no key, when there is none."""
        if not self._policy:
            from leapgit.rules.signing_history import policy_at
            from leapgit.signing.policy import Policy

            tip = self.objects.ref(self.spine_ref)
            found = policy_at(self.objects.store, self.objects.commit(tip).tree,
                              f"{self.spine_ref}:.leap/allowed_signers") if tip else None
            self._policy.append(found or Policy(source=f"{self.spine_ref} (no policy)"))
        return self._policy[0]

    def missing_tip(self, upd: RefUpdate) -> Refusal | None:
        """pre-receive only: a protected ref is judged from the tip the server stores (F1).
        A ``<old>`` that is not that tip is refused: git would move the ref only from it,
        and a judgment from another tip proves nothing (a raw client names any ``<old>``;
        two pushes race). The server must hold its own tip too (a client may lack a remote
        tip it never fetched; the server judges)."""
        if not self.authority:
            return None
        held = self.stored_tip(upd.ref)
        if held is not None and not self.objects.has(held):
            return Refusal("L8", upd.ref, upd.new or upd.old, None, f"this repository holds "
                           f"the ref at {held[:12]}, which is missing from it: the push cannot "
                           "be judged", "repair the server's repository (`git fsck`), then "
                           "push again")
        if upd.old != held:
            # a stale or forged <old>: all zeros for a ref the server holds, or a commit it
            # never had, is the client's claim, never the server's damage (review r1 F8)
            return Refusal("L8", upd.ref, upd.new or upd.old, None, f"the push names its old "
                           f"tip {str(upd.old)[:12] if upd.old else 'nothing (a new ref)'}, "
                           f"but this repository holds it at "
                           f"{held[:12] if held else 'nothing (no such ref)'}: a push is "
                           "judged against the refs the server stores",
                           "fetch, build on the remote's tip and push again")
        return None

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


def server_config(objects: Objects, notes: list[str] | None = None) -> Config:
    """A bare repository has no work tree, and any pusher may write its branches: the spine
    and the ledger ref are pinned in the server's own git config at install time
    (``leap.spine``, ``leap.ledgerRef``; defaults main and refs/heads/leap/ledger).
    ``.leap/config.yaml`` is read from the pinned spine's tip only, as it stands before this
    push (so a push cannot loosen its own rules), else the defaults; never from another
    branch, and it cannot move the pinned refs. A config there that does not parse never
    stops the server (``fallback_config``); ``notes`` hears why."""
    spine, ledger_ref = pinned_refs(objects)
    check_refs(Config(spine=spine, ledger_ref=ledger_ref), f"git config {PIN_SPINE}, {PIN_LEDGER}")
    spine_ref = f"refs/heads/{spine}"
    tip = objects.ref(spine_ref)
    if tip is not None and not objects.has(tip):
        raise UsageError(f"the spine {spine_ref} names {tip[:12]}, which is missing from this "
                         "repository: no push can be judged", rule="L8",
                         hint="repair the server's repository (`git fsck`)")
    config = Config() if tip is None else spine_config(objects, spine_ref, tip, notes)
    return config._replace(spine=spine, ledger_ref=ledger_ref)


def config_problem(objects: Objects, tree: bytes, source: str) -> tuple[Config | None, str]:
    """(the config a tree holds, or None when it holds none; why it does not parse, or
    "")."""
    data = objects.read_at(tree, CONFIG_PATH.as_posix())
    if data is None:
        return None, ""
    try:
        return parse_config(data, source, objects.config_cache), ""
    except LeapError as exc:
        return None, exc.problems[0].message if exc.problems else str(exc)


def spine_config(objects: Objects, spine_ref: str, tip: str,
                 notes: list[str] | None = None) -> Config:
    source = f"{spine_ref}:{CONFIG_PATH.as_posix()}"
    config, problem = config_problem(objects, objects.commit(tip).tree, source)
    if not problem:
        return config or Config()
    return fallback_config(objects, tip, source, problem, notes)


FALLBACK_DEPTH = 1000  # first-parent commits searched for the last config that parsed


def fallback_config(objects: Objects, tip: str, source: str, problem: str,
                    notes: list[str] | None) -> Config:
    """The spine's config does not parse (it landed before the guard in the spine rules,
    or by hand on the server). Refusing every push would leave no way to land the fix, so
    the server judges with the newest config on the spine's first-parent line that parses
    (else the defaults), failing closed on signatures: required whenever the spine holds a
    policy. The fix lands like any config change (S6: an admin signs it)."""

    from leapgit.signing import POLICY_PATH

    found, at = Config(), "the defaults"
    commit = objects.commit(tip)
    for _ in range(FALLBACK_DEPTH):
        if not commit.parents:
            break
        commit = objects.commit(commit.parents[0].decode())
        config, broken = config_problem(objects, commit.tree, source)
        if not broken:
            if config is not None:
                found, at = config, f"the config of spine commit {commit.id.decode()[:12]}"
            break
    policy = objects.blob_id_at(objects.commit(tip).tree, POLICY_PATH) is not None
    signing = found.signing_required or policy
    why = ("" if not signing else ": the spine holds a policy" if policy else
           ": the last config that parsed requires it")
    if notes is not None:
        notes.append(f"{source} does not parse ({problem}): judging with {at}, the newest "
                     f"that parses; signing {'required' if signing else 'not required'}"
                     f"{why}; an admin lands the fix as a config change")
    return found._replace(signing_required=signing)


PIN_SECTION = b"leap"
PIN_SPINE, PIN_LEDGER = "leap.spine", "leap.ledgerRef"


def pinned_refs(objects: Objects) -> tuple[str, str]:
    """(spine, ledger ref) as pinned in the repository's git config, else the defaults."""
    config = objects.repo.get_config()
    found = []
    for key, default in ((PIN_SPINE, Config().spine), (PIN_LEDGER, Config().ledger_ref)):
        try:
            found.append(config.get((PIN_SECTION,), key.split(".")[1].encode()).decode())
        except KeyError:
            found.append(default)
    return found[0], found[1]


def ref_names(updates: Iterable[RefUpdate]) -> list[str]:
    return [u.ref for u in updates]
