"""Replay the history through the very signature rules pre-receive runs (S1-S6), one landed
commit at a time, each as the push that brought it, with the refs as they stood then.

- A ledger commit is judged by the policy of the newest spine commit it provably follows
  (``timeline``: its floor), or of a later one when its committer time says so; never an
  earlier one, so a back-dated clock gains nothing. Records signed before any policy
  reached the spine are judged by the first policy (``leap init --signing`` signs the
  ledger's root before the policy is committed).
- A spine commit on the first-parent line, once a policy is in force, is judged by the
  policy in force before it, with the ledger as it stood where it landed (its lease, S5);
  the rounds it merges are judged with it (S1-S4).
- The policy in force is that of the newest spine commit whose policy bytes an admin
  approved (S6), never simply the newest one: a commit the audit refuses under S6 (an
  unsigned or non-admin policy change, one that does not parse) puts nothing in force,
  nor does a later commit that carries its bytes on unchanged (``in_force``).
- Rounds on local ball branches not yet on the spine are judged last, each by the policy
  of the spine commit it forked from, or a later one its time names.

There is no push clock: each signature is judged at its own committer time (key lifetimes,
S2); ``signing.audit`` reports times that run backwards or into the future.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING

from leapgit.audit.timeline import Timeline, build
from leapgit.gitobj import oid, refname
from leapgit.rules.context import PushContext, RefUpdate
from leapgit.rules.objects import Objects
from leapgit.rules.signatures import Judge, judge_push
from leapgit.rules.signed_ledger import LedgerActors
from leapgit.rules.signed_spine import policy_change
from leapgit.rules.signing_history import PolicyEpoch
from leapgit.signing import POLICY_PATH
from leapgit.signing.policy import Policy
from leapgit.signing.verify import check_many

if TYPE_CHECKING:
    from dulwich.objects import Commit

    from leapgit.audit.graph import Graph
    from leapgit.gitobj import GitRepo
    from leapgit.records.types import Config
    from leapgit.rules.refusal import Refusal

LEDGER, SPINE, ROUND = "ledger", "spine", "round"
_MAX_LINE = 10_000  # a longer line of rounds is no ball branch: walk it


class AsOf(Objects):
    """The repository's objects, with its refs as they stood at one point of the history
    (a ref not named did not exist)."""

    def __init__(self, repo: GitRepo, refs: Mapping[str, str | None]) -> None:
        super().__init__(repo)
        self.refs = dict(refs)

    def ref(self, name: str) -> str | None:
        return self.refs.get(name)


@dataclass(frozen=True)
class Judged:
    """One commit as the rules judged it where it landed."""

    commit: Commit
    branch: str  # ledger, spine or round
    policy: Policy | None  # the policy it was judged by
    epoch: PolicyEpoch | None  # the spine commit whose policy that is
    refusals: tuple[Refusal, ...]
    follows: tuple[Commit, ...]  # what it provably came after: its parent, its floor
    problem: str | None = None  # the policy in force does not parse: nothing was judged
    paths: tuple[str, ...] = ()  # the records a ledger commit added


@dataclass
class Replay:
    repo: GitRepo
    config: Config
    timeline: Timeline
    actors: LedgerActors
    graph: Graph | None = None  # git's commit graph, when the caller has read it

    @property
    def spine_ref(self) -> str:
        return f"refs/heads/{self.config.spine}"

    def run(self) -> list[Judged]:
        out: list[Judged] = []
        ledger_tip: str | None = None
        for kind, index in self.timeline.events():
            if kind == LEDGER:
                step = self.timeline.ledger[index]
                self.actors.add(step.commit)  # the push leaves its own records in
                out.append(self._ledger(index, ledger_tip))
                ledger_tip = step.commit.id.decode()
            elif index > 0 and _in_force(self._held(index - 1)):
                out.extend(self._spine(index, ledger_tip))
        out.extend(self._ball_rounds(ledger_tip))
        return out

    @cached_property
    def in_force(self) -> list[int]:
        """Per commit of the spine's line, the one whose policy is in force once it landed:
        its own when there was none to judge it by (the first policy arrives as it is), or
        when it kept or brought bytes an admin approved (S6); else the one in force
        before it."""
        spine = self.timeline.spine
        blobs = [e.blob for e in spine]
        out: list[int] = []
        for index in range(len(spine)):
            held = out[-1] if out else None
            if held is None or not _in_force(spine[held]) or spine[held].problem is not None:
                out.append(index)  # nothing in force (or nothing readable) to judge it by
            elif blobs[index] in (blobs[held], blobs[index - 1]):
                out.append(held)  # the same bytes, or bytes no admin approved carried on
            else:
                out.append(index if self._approved(index, spine[held]) else held)
        return out

    def _held(self, index: int) -> PolicyEpoch:
        """The spine commit whose policy was in force once spine commit ``index`` landed."""
        return self.timeline.spine[self.in_force[index]]

    def _approved(self, index: int, held: PolicyEpoch) -> bool:
        """S6 on a spine commit that changed the policy bytes, as the audit judges it."""
        parent, epoch = self.timeline.spine[index - 1].commit, self.timeline.spine[index].commit
        upd = RefUpdate(self.spine_ref, parent, epoch)
        ctx = PushContext(AsOf(self.repo, {self.spine_ref: parent}), self.config, (upd,))
        judge = Judge(ctx, self._policy(held), now=None, policy_held=True)
        pushed = ctx.objects.new_commits(epoch, [parent])
        found = policy_change(judge, self.spine_ref, self._commit(epoch), pushed)
        return not any(r.path == POLICY_PATH for r in found)

    def _judge(self, refs: dict[str, str | None], upd: RefUpdate, epoch: PolicyEpoch | None,
               policy: Policy, held: PolicyEpoch | None) -> list[Refusal]:
        """The push rules over one landed commit: the refs as they stood (the spine at
        ``epoch``), judged by ``policy``, that of ``held``, the epoch then in force."""
        refs.setdefault(self.spine_ref, epoch.commit if epoch else None)
        ctx = PushContext(AsOf(self.repo, refs), self.config, (upd,))
        return judge_push(Judge(ctx, policy, now=None, actors=self.actors,
                                policy_held=held is not None and _in_force(held)))

    def _ledger(self, index: int, before: str | None) -> Judged:
        step = self.timeline.ledger[index]
        epoch, held = self._epoch(step.floor, int(step.commit.commit_time))
        follows = self._parents(step.commit)
        if step.floor is not None:
            follows += (self._commit(self.timeline.spine[step.floor].commit),)
        if held is not None and held.problem is not None:
            return Judged(step.commit, LEDGER, None, held, (), follows, held.problem,
                          step.paths)
        policy = self._policy(held)
        sha = step.commit.id.decode()
        ref = self.config.ledger_ref
        found = self._judge({ref: before}, RefUpdate(ref, before, sha), epoch, policy, held)
        judged = _rest_on_first([_of(step.commit, LEDGER, policy, held, found, follows)],
                                found)[0]
        return replace(judged, paths=step.paths)

    def _spine(self, index: int, ledger_tip: str | None) -> list[Judged]:
        epochs = self.timeline.spine
        parent, epoch, held = epochs[index - 1], epochs[index], self._held(index - 1)
        commit = self._commit(epoch.commit)
        follows = (self._commit(parent.commit),)
        if held.problem is not None:
            return [Judged(commit, SPINE, None, held, (), follows, held.problem)]
        policy = self._policy(held)
        upd = RefUpdate(self.spine_ref, parent.commit, epoch.commit)
        found = self._judge({self.config.ledger_ref: ledger_tip}, upd, parent, policy, held)
        out = [_of(commit, SPINE, policy, held, found, follows)]
        for rnd in self._merged(commit, parent.commit):
            out.append(_of(rnd, ROUND, policy, held, found, self._parents(rnd)))
        return _rest_on_first(out, found)

    def _merged(self, commit: Commit, first_parent: str) -> list[Commit]:
        objects = Objects(self.repo)
        out: list[Commit] = []
        for parent in commit.parents[1:]:
            out.extend(c for c in objects.new_commits(parent.decode(), [first_parent])
                       if c.id not in {x.id for x in out})
        return out

    def _ball_rounds(self, ledger_tip: str | None) -> list[Judged]:
        objects = Objects(self.repo)
        spine = self.timeline.spine[-1].commit if self.timeline.spine else None
        on_spine = self.graph.reachable(spine) if self.graph is not None else None
        out: list[Judged] = []
        judged: set[tuple[str, bytes]] = set()  # a round two tips of one branch share
        for branch, tip in self._ball_tips():
            rounds = _off_spine(objects, tip, spine, on_spine)
            fork = self._fork(rounds[0]) if rounds else None
            for rnd in rounds:
                if (branch, rnd.id) in judged:
                    continue
                judged.add((branch, rnd.id))
                epoch, held = self._epoch(fork, int(rnd.commit_time))
                parent = rnd.parents[0].decode() if rnd.parents else None
                if held is not None and held.problem is not None:
                    out.append(Judged(rnd, ROUND, None, held, (), self._parents(rnd),
                                      held.problem))
                    continue
                policy = self._policy(held)
                upd = RefUpdate(branch, parent, rnd.id.decode())
                found = self._judge({self.config.ledger_ref: ledger_tip}, upd, epoch, policy,
                                    held)
                out.extend(_rest_on_first([_of(rnd, ROUND, policy, held, found,
                                               self._parents(rnd))], found))
        return out

    def _ball_tips(self) -> list[tuple[str, str]]:
        """(ball branch, tip) of every ball branch here: local ones, and those a remote's
        fetch refspecs keep as remote-tracking refs (an auditor's fresh clone has only
        these), each judged as the ``refs/heads/`` branch it is on its remote. Symbolic
        refs, dangling ones and names that are not UTF-8 (no ball has one) are not ball
        branches."""
        heads = f"refs/heads/{self.config.ball_branch_prefix}/".encode()
        maps = [(b"refs/heads/", b"refs/heads/"), *self._tracking()]
        symbolic = set(self.repo.refs.get_symrefs())
        found: set[tuple[str, str]] = set()
        for name in self.repo.refs.keys():
            if name in symbolic:
                continue
            for local, remote in maps:
                branch = remote + name[len(local):] if name.startswith(local) else b""
                if not branch.startswith(heads):
                    continue
                try:
                    tip = self.repo.refs[name]
                    if self.repo[tip].type_name == b"commit":  # a tag or blob is no branch
                        found.add((branch.decode(), tip.decode()))
                except (KeyError, ValueError, AssertionError, UnicodeDecodeError):
                    pass  # dangling, broken or not UTF-8: no ball branch git would hold
                break
        return sorted(found)

    def _tracking(self) -> list[tuple[bytes, bytes]]:
        """(where a fetch keeps them, the remote's branch folder) for each configured
        remote's fetch refspec of the form ``[+]refs/heads/<a>*:<b>*``."""
        config = self.repo.get_config()
        out = []
        for section in config.sections():
            if len(section) != 2 or section[0].lower() != b"remote":
                continue
            try:
                specs = list(config.get_multivar(section, b"fetch"))
            except KeyError:
                continue
            for spec in specs:
                src, _, dst = spec.lstrip(b"+").partition(b":")
                if src.startswith(b"refs/heads/") and src.endswith(b"*") and \
                        dst.endswith(b"*") and src.count(b"*") == dst.count(b"*") == 1:
                    out.append((dst[:-1], src[:-1]))
        return out

    def _fork(self, first_round: Commit) -> int | None:
        """The spine-line index a ball branch forked from (its rounds follow it)."""
        commit = first_round
        for _ in range(1000):
            if not commit.parents:
                return None
            sha = commit.parents[0].decode()
            found = self.timeline.spine_index(sha)
            if found is not None:
                return found
            commit = self._commit(sha)
        return None

    def _commit(self, sha: str) -> Commit:
        return self.repo[oid(sha)]  # type: ignore[return-value]

    def _parents(self, commit: Commit) -> tuple[Commit, ...]:
        """The first parent: a signed commit is not dated before it."""
        return (self._commit(commit.parents[0].decode()),) if commit.parents else ()

    def _epoch(self, floor: int | None, when: int,
               ) -> tuple[PolicyEpoch | None, PolicyEpoch | None]:
        """(the spine commit a commit followed, the one whose policy was then in force):
        the topology's floor, or a later spine commit the time names, never earlier."""
        by_time = self.timeline.by_time(when)
        found = [i for i in (floor, by_time) if i is not None and i >= 0]
        if not found:
            return None, None
        return self.timeline.spine[max(found)], self._held(max(found))

    @cached_property
    def _first_in_force(self) -> PolicyEpoch | None:
        """The spine's first policy (one scan, not one per judged commit)."""
        return next((e for e in self.timeline.spine if _in_force(e)), None)

    def _policy(self, epoch: PolicyEpoch | None) -> Policy:
        if epoch is None or not _in_force(epoch):
            first = self._first_in_force
            epoch = first if first is not None and first.problem is None else epoch
        if epoch is not None and epoch.policy is not None:
            return epoch.policy
        return Policy(source="(no policy in force on the spine at the time)")


def _off_spine(objects: Objects, tip: str, spine: str | None,
               on_spine: frozenset[str] | None) -> list[Commit]:
    """The rounds of a ball branch not on the spine, parents first: ``new_commits(tip,
    [spine])``, read as the line back to the first commit the spine reaches (a ball branch
    holds no merge, L9), not as a walk of the spine's history per branch. A merge, a root
    or no graph takes the walk."""
    exclude = [spine] if spine else []
    if on_spine is None:
        return objects.new_commits(tip, exclude)
    line: list[Commit] = []
    sha = tip
    while sha not in on_spine:
        commit = objects.commit(sha)
        if len(commit.parents) != 1 or len(line) >= _MAX_LINE:
            return objects.new_commits(tip, exclude)
        line.append(commit)
        sha = commit.parents[0].decode()
    return line[::-1]


def _in_force(epoch: PolicyEpoch) -> bool:
    return epoch.policy is not None or epoch.problem is not None


def _of(commit: Commit, branch: str, policy: Policy, epoch: PolicyEpoch | None,
        found: list[Refusal], follows: tuple[Commit, ...]) -> Judged:
    sha = commit.id.decode()
    return Judged(commit, branch, policy, epoch, tuple(r for r in found if r.commit == sha),
                  follows)


def _rest_on_first(judged: list[Judged], found: list[Refusal]) -> list[Judged]:
    """Refusals naming none of the judged commits (a side commit a round merged in) are
    reported on the first: never dropped."""
    named = {j.commit.id.decode() for j in judged}
    rest = tuple(r for r in found if r.commit not in named)
    if rest:
        judged[0] = replace(judged[0], refusals=judged[0].refusals + rest)
    return judged


def replay(repo: GitRepo, config: Config, graph: Graph | None = None) -> list[Judged]:
    def tip(ref: str) -> str | None:
        try:
            return repo.refs[refname(ref)].decode()
        except KeyError:
            return None

    timeline = build(repo.object_store, tip(f"refs/heads/{config.spine}"),
                     tip(config.ledger_ref), config.spine)
    check_many([s.commit for s in timeline.ledger] +
               [repo[oid(e.commit)] for e in timeline.spine])  # type: ignore[misc]
    return Replay(repo, config, timeline, LedgerActors(repo.object_store), graph).run()
