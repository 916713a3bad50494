"""The ledger store: the only code that writes the ledger ref.

A write adds files and never edits or deletes one (L8: written truth). It is one commit on
top of the current tip, built in-process with dulwich (``commits``: only the trees on the
changed paths are rewritten, so an append costs the same at ten records or ten thousand),
and the ref moves only by compare-and-swap (``writer.swap``) under a process-wide file lock
(``recovery.locked``). When the swap loses a race (another writer, or a plain ``git
update-ref``), the additions are replayed on the new tip: additions to distinct paths
commute. Reading is ``view.LedgerView``; ``leap sync`` replays with ``replay``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from leapgit.errors import InvalidRecord, LeapError, LedgerConflict, UsageError
from leapgit.gitobj import refname
from leapgit.ledger.commits import Committer
from leapgit.ledger.layout import MAX_RECORDS, ROOT_RECORD
from leapgit.ledger.recovery import WRITING_MARKER, locked
from leapgit.ledger.repo import open_repo
from leapgit.ledger.view import (
    LedgerCorrupt,
    LedgerMissing,
    LedgerView,
    NotACommit,
    cached_tree,
    cached_tree_in,
)
from leapgit.ledger.writer import Written, write
from leapgit.records import yamlio
from leapgit.records.cache import RecordCache
from leapgit.records.config import CONFIG_PATH, ledger_ref_problem
from leapgit.records.trailers import RECORD, format_message
from leapgit.records.types import LedgerRoot

if TYPE_CHECKING:
    from leapgit.ledger.replay import Replayed
    from leapgit.signing.sign import Signer

# what other modules import from here (each name lives in its own module)
__all__ = ["DEFAULT_REF", "WRITING_MARKER", "Ledger", "LedgerCorrupt", "LedgerMissing",
           "LedgerView", "Written", "cached_tree", "cached_tree_in", "format_message"]

DEFAULT_REF = "refs/heads/leap/ledger"


class Ledger(AbstractContextManager["Ledger"]):
    """Open with ``Ledger(common_git_dir, ref)``; always close it (``with``).

    Every commit it writes is signed when a key is configured (``signing.sign``:
    ``LEAP_SIGNING_KEY``, git's ``leap.signingKey``, or ``user.signingKey`` with
    ``gpg.format=ssh``); ``signer`` overrides that: a ``Signer``, or ``None`` for unsigned."""

    def __init__(self, git_dir: Path, ref: str = DEFAULT_REF,
                 signer: Signer | None | bool = True, cache_records: bool = False) -> None:
        self.git_dir = Path(git_dir)
        self.records: RecordCache | None = None
        if cache_records:
            self.records = RecordCache(self.git_dir)
        # a config is kept only once checked: only a copy changed by hand gets here
        kept = self.git_dir.resolve() / "leap-cache"
        bad_name = ledger_ref_problem(
            ref, str(kept), f" (in a kept copy of {CONFIG_PATH}, changed by hand)",
            f"delete {kept}")
        if bad_name is not None:
            raise InvalidRecord(problems=[bad_name])
        self.ref = ref
        self._ref_b = ref.encode()
        try:
            self.repo = open_repo(str(self.git_dir))
        except Exception as exc:  # dulwich raises NotGitRepository and friends
            raise UsageError(f"cannot open git repository at {git_dir}: {exc}") from None
        if getattr(getattr(self.repo, "object_format", None), "name", "sha1") != "sha1":
            self.repo.close()
            raise UsageError("sha256 repositories are not supported yet")
        self.committer = Committer(self.repo, signer)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self.repo.close()

    # reading

    def tip(self) -> str | None:
        try:
            return self.repo.refs[refname(self._ref_b)].decode()
        except KeyError:
            return None

    def view(self, commit: str | None = None) -> LedgerView:
        """The ledger at ``commit``, by default at the ref's tip, which must be a commit."""
        if commit is not None:
            return LedgerView(self.repo, commit, self.records)
        try:
            return LedgerView(self.repo, self.tip(), self.records)
        except NotACommit as exc:  # the ref was pointed by hand at a blob, a tree, a tag...
            raise self._not_a_ledger(exc.problems[0].message) from None

    def require(self) -> LedgerView:
        view = self.view()
        if view.commit is None:
            raise LedgerMissing(f"no ledger yet ({self.ref} does not exist)",
                                hint=self.missing_hint())
        self._check_is_ledger(view)
        return view

    def missing_hint(self) -> str:
        """In a clone of a project that has a ledger, taking the remote's (a second root
        made by `leap init` could never join it); elsewhere, starting one. A remote's
        ledger is seen where `git clone`/`git fetch` keeps it (``refs/remotes/<remote>/``)
        or where `leap sync` does (``refs/leap/remotes/<remote>/``). A bare repository (a
        server) gets its ledger from a clone: `leap init` refuses to run in it, so naming
        `leap init` there sent the user round in a circle (a bad-input hunt)."""
        if self.repo.get_config().get_boolean((b"core",), b"bare", False):
            return (f"{self.git_dir} is a bare repository, whose ledger comes from a clone: "
                    "in a clone of it, `leap init` starts one and `leap sync REMOTE` pushes it "
                    "here")
        from shlex import quote  # a remote's name may hold what a shell reads (a review)

        found = self.remotes_holding()
        if found:
            return (f"this clone's remote {found[0]} has one: `leap sync {quote(found[0])}` "
                    "takes it")
        # a clone of one branch (`--single-branch`, or `--depth`: CI's checkout) keeps no
        # copy of the ledger even where its remote has one: ask before a second root
        names = self.remote_names()
        if names:
            remote = "origin" if "origin" in names else names[0]
            return (f"if {remote} has one, `leap sync {quote(remote)}` takes it; if no remote "
                    "does, `leap init` starts one")
        return "run `leap init` first"

    def remotes_holding(self) -> list[str]:
        """The remotes whose copy of the ledger this clone keeps (``git.remotes_holding``)."""
        from leapgit import git

        names = [f"{top}{n.decode('utf-8', 'surrogateescape')}"
                 for top in ("refs/leap/remotes/", "refs/remotes/")
                 for n in self.repo.refs.keys(refname(top))]
        return git.remotes_holding(self.ref, names, self.remote_names())

    def remote_names(self) -> list[str]:
        """The repository's remotes, from its config, in its order."""
        return [section[1].decode("utf-8", "surrogateescape")
                for section in self.repo.get_config().sections()
                if section[0] == b"remote" and len(section) == 2]

    def _check_is_ledger(self, view: LedgerView) -> None:
        """The ref must hold a leapgit ledger (its root record stays at every tip: the ledger
        is add-only), never a branch of the user's that the config happens to name."""
        try:
            ok = view.record(ROOT_RECORD, LedgerRoot) is not None  # validated, cached
        except LeapError:  # an older or hand-made root: its kind is what counts here

            data = view.read(ROOT_RECORD)
            try:
                root = yamlio.loads(data, ROOT_RECORD) if data is not None else None
            except LeapError:
                root = None
            ok = isinstance(root, dict) and root.get("kind") == "ledger"
        if not ok:
            raise self._not_a_ledger(f"no {ROOT_RECORD}")

    def _not_a_ledger(self, why: str) -> UsageError:
        return UsageError(
            f"{self.ref} exists but is not a leapgit ledger ({why})",
            file=".leap/config.yaml", field="ledger_ref",
            hint="point ledger_ref at a ref of its own; leapgit never writes onto a branch "
                 "it did not start",
        )

    # writing

    def init(self, root_record: bytes) -> tuple[str, bool]:
        """Create the orphan root commit; return (commit, created). Idempotent."""
        current = self.tip()
        if current is not None:
            view = self.view()
            self._check_is_ledger(view)
            return view.commit or current, False
        written = self._write(
            {ROOT_RECORD: root_record}, "leap: start the ledger",
            [(RECORD, ROOT_RECORD)], "", root=True,
        )
        return written.commit, written.attempts > 0

    def append(
        self,
        records: Mapping[str, bytes],
        subject: str,
        trailers: Sequence[tuple[str, str]] = (),
        body: str = "",
        *,
        identical_ok: bool = False,
    ) -> Written:
        """Add ``records`` (path -> bytes) in one commit. Refuses to touch an existing path,
        unless ``identical_ok`` and the bytes are the same (then that path is skipped)."""
        if not records:
            raise LeapError("nothing to write")
        if len(records) > MAX_RECORDS:  # the server refuses it (``rules.ledger``)
            raise LeapError(f"{len(records)} records in one ledger commit, more than the "
                            f"{MAX_RECORDS} a commit may add: not written")
        for path, data in records.items():  # every reader, and the server, refuses it
            if len(data) > yamlio.MAX_BYTES:
                raise InvalidRecord(f"larger than the {yamlio.MAX_BYTES} byte cap "
                                    f"({len(data)} bytes): not written", file=path)
        trailer_list = list(trailers) + [(RECORD, p) for p in sorted(records)]
        return self._write(dict(records), subject, trailer_list, body, identical_ok=identical_ok)

    def commit_on(self, parent: str, records: Mapping[str, bytes], subject: str,
                  trailers: Sequence[tuple[str, str]] = ()) -> str:
        """A commit adding ``records`` on ``parent`` (another copy's tip, fetched here),
        stored but on no ref: it reaches that copy by the copy's own compare-and-swap
        (``sync.push_records``), this ledger by a later replay. The paths must be new."""
        view = self.view(parent)
        taken = [p for p in records if view.exists(p)]
        if taken:
            raise LedgerConflict(f"{taken[0]} exists already", file=taken[0], rule="L8")
        message = format_message(subject, list(trailers) + [(RECORD, p) for p in
                                                            sorted(records)], "")
        return self.committer.commit(parent, dict(records), message).decode()

    def replay_onto(self, base: str) -> Replayed:
        """Make the local ledger a descendant of ``base`` (another copy's tip, fetched into
        this repository): ``replay.replay_onto``, under the writer's lock."""
        from leapgit.ledger.replay import replay_onto

        return locked(self.repo, self.git_dir, self.ref, lambda: replay_onto(self, base))

    def signer(self) -> Signer | None:
        """The acting key, resolved once from the environment and git's config."""
        return self.committer.signer()

    def _write(
        self, records: dict[str, bytes], subject: str, trailers: list[tuple[str, str]],
        body: str, *, root: bool = False, identical_ok: bool = False,
    ) -> Written:
        message = format_message(subject, trailers, body)
        return locked(self.repo, self.git_dir, self.ref, lambda: write(
            self, records, message, root=root, identical_ok=identical_ok))
