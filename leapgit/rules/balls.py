"""Ball-branch rules: ``<prefix>/<slice>/<ball>`` descends from the ball's recorded base,
moves forward only, each of its commits passes ``rules.commits.check_commit`` (no merge,
only scope files, its receipt trailers, the frozen red tests), and it reaches at most four
rounds an episode, counting the ledger's receipts with the round commits no receipt
records (L6)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from leapgit.errors import LeapError
from leapgit.rules.refusal import Refusal

if TYPE_CHECKING:  # the post-commit hook imports this module: only what it runs
    from typing import Protocol

    from dulwich.objects import Commit

    from leapgit.ledger.view import LedgerView
    from leapgit.records.scoring import RedRecord
    from leapgit.records.types import BallRecord, Config, Receipt, ThrowRecord
    from leapgit.rules.context import PushContext, RefUpdate
    from leapgit.rules.objects import Objects

    class Ancestry(Protocol):
        """What ``unheld_reds`` reads: ``rules.objects.Objects``, or the client's git."""

        def has(self, sha: str) -> bool: ...

        def is_ancestor(self, older: str, newer: str) -> bool: ...


MALFORMED = ("", "")
ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")  # the records' id pattern (schemas/)


def ball_of_ref(config: Config, ref: str) -> tuple[str, str] | None:
    """(slice, ball) for a ball branch; ``MALFORMED`` for a ref under the prefix that names
    no ball; None for any other ref."""
    prefix = f"refs/heads/{config.ball_branch_prefix}/"
    if not ref.startswith(prefix):
        return None
    parts = ref[len(prefix):].split("/")
    if len(parts) != 2 or not all(ID.fullmatch(p) for p in parts):
        return MALFORMED  # issue 18 F9: also a name that is no id (a byte not UTF-8)
    return parts[0], parts[1]


class Base(NamedTuple):
    commit: str
    source: str  # where the base came from, for messages
    thrown: ThrowRecord | None = None  # the throw that recorded it


def recorded_base(view: LedgerView, slice_id: str, ball_id: str) -> Base:
    """The base of the ball's current throw; the slice's base when it was never thrown."""
    from leapgit.ledger import query

    for episode in reversed(query.episodes(view, slice_id, ball_id)):
        thrown = query.throw(view, slice_id, ball_id, episode)
        if thrown is not None:
            what = "stack base" if thrown.stack else "base"
            return Base(thrown.base, f"the {what} of throw episode {episode}", thrown)
    rec = query.load_slice(view, slice_id)
    return Base(rec.base, "the slice's base (no throw recorded yet)")


def red_commits(objects: Objects, red: RedRecord | None, base: str, head: str) -> set[str]:
    """The commits base..red: the thrower's red test, not builder rounds."""
    if red is None or not objects.has(red.commit) or not objects.is_ancestor(red.commit, head):
        return set()
    return {c.id.decode() for c in objects.new_commits(red.commit, [base])}


class Rounds(NamedTuple):
    """The ledger's account of a ball's episode (L6)."""

    receipts: tuple[Receipt, ...] = ()  # the episode's receipts
    earlier: frozenset[str] = frozenset()  # commits recorded as rounds of earlier episodes


def recorded_rounds(view: LedgerView, slice_id: str, ball_id: str,
                    episode: int | None = None) -> Rounds:
    """The rounds the ledger records of ``episode``; None: of the current one (the latest
    thrown), none when the ball was never thrown."""
    from leapgit.ledger import query

    numbers = query.episodes(view, slice_id, ball_id)
    if episode is None:
        episode = next((n for n in reversed(numbers)
                        if query.throw(view, slice_id, ball_id, n) is not None), None)
        if episode is None:
            return Rounds()
    earlier = frozenset(r.commit for n in numbers if n < episode
                        for r in query.receipts(view, slice_id, ball_id, n) if r.commit)
    return Rounds(tuple(query.receipts(view, slice_id, ball_id, episode)), earlier)


NONE_RECORDED = Rounds()


class RoundCount(NamedTuple):
    """L6: an episode's rounds are its receipts in the ledger plus the round commits since
    the base that no receipt records, so rewriting or re-creating a ball branch cannot give
    a builder a fifth round."""

    recorded: int  # the episode's receipts
    unrecorded: tuple[str, ...]  # round commits no receipt records, oldest first

    @property
    def used(self) -> int:
        return self.recorded + len(self.unrecorded)

    def over(self, round_cap: int) -> bool:
        """A commit made a round past the cap: round four cannot create round five."""
        return bool(self.unrecorded) and self.used > round_cap

    def extra(self, round_cap: int) -> str:
        """The commit that made round ``round_cap + 1`` (when ``over``)."""
        return self.unrecorded[min(max(round_cap - self.recorded, 0), len(self.unrecorded) - 1)]


def count_rounds(commits: Iterable[str], recorded: Rounds) -> RoundCount:
    """``commits``: the round commits since the base (the red test aside), oldest first."""
    known = {r.commit for r in recorded.receipts if r.commit} | recorded.earlier
    return RoundCount(len(recorded.receipts), tuple(c for c in commits if c not in known))


def check_round_count(ref: str, commits: Sequence[Commit], round_cap: int,
                      recorded: Rounds = NONE_RECORDED) -> list[Refusal]:
    """L6 over the round commits since the base (``count_rounds``)."""
    count = count_rounds((c.id.decode() for c in commits), recorded)
    if not count.over(round_cap):
        return []
    return [Refusal("L6", ref, count.extra(round_cap), None,
                    f"{count.used} rounds in this episode ({count.recorded} recorded in the "
                    f"ledger, {len(count.unrecorded)} round commit(s) since the base that no "
                    f"receipt records); round {round_cap} cannot create round {round_cap + 1}",
                    "checkpoint and resume in a new episode")]


def check_ball_update(ctx: PushContext, upd: RefUpdate) -> list[Refusal]:
    from leapgit.ledger import query

    found = ball_of_ref(ctx.config, upd.ref)
    if found is None:
        return []
    if upd.new is None:
        return [] if found == MALFORMED else check_deletion(ctx, upd, *found)
    if found == MALFORMED:
        return [Refusal("L4", upd.ref, upd.new, None, "a ball branch must be named "
                        f"{ctx.config.ball_branch_prefix}/<slice>/<ball>", "rename the branch")]
    slice_id, ball_id = found
    view = ctx.ledger_view()
    try:
        ball = query.load_thrown_ball(view, slice_id, ball_id)  # F5: the version thrown
        base = recorded_base(view, slice_id, ball_id)
    except LeapError as exc:
        return [Refusal("L4", upd.ref, upd.new, None, f"no ball {slice_id}/{ball_id} in the "
                        f"ledger ({exc.lines()[0]})", "push the ledger (`leap sync`) "
                        "before the ball branch")]
    if base.thrown is None:
        ctx.note(f"{upd.ref}: checked against {base.source}")
    if not ctx.objects.has(base.commit) or not ctx.objects.is_ancestor(base.commit, upd.new):
        return [Refusal("L5", upd.ref, upd.new, None, f"does not descend from {base.source}, "
                        f"{base.commit[:12]}", f"rebuild the ball on {base.commit[:12]}")]
    forged = check_stack(ctx.objects, view, upd.ref, upd.new, ball, base)
    if forged:
        return forged
    forced = _force_push(ctx, upd, base)
    if forced is not None:
        return [forced]
    from leapgit.rules.episodes import episode_reds

    episode = base.thrown.episode if base.thrown is not None else None
    reds = episode_reds(view, slice_id, ball_id, episode)
    claimed = _claimed(ctx, upd, base, reds)
    if claimed:
        return claimed
    return check_history(ctx.objects, upd.ref, ball, base.commit, upd.new, reds,
                         ctx.config.round_cap, recorded_rounds(view, slice_id, ball_id))


def _claimed(ctx: PushContext, upd: RefUpdate, base: Base, reds: Sequence[RedRecord]
             ) -> list[Refusal]:
    """L9 (issue 16): round commits on a published episode come only from the worker that
    holds its live claim; red tests (the thrower's, the test author's) are no rounds."""
    thrown = base.thrown
    if thrown is None or not thrown.published or upd.new is None or not ctx.authority:
        return []  # a lease is live by the server's clock (``rules.ledger._builder_only``)
    from leapgit.rules.claims import builder_problems, claimed_rounds

    since = upd.old if upd.old is not None and ctx.objects.has(upd.old) and \
        ctx.objects.is_ancestor(upd.old, upd.new) else base.commit
    pre = not_rounds(ctx.objects, reds, base.commit, upd.new)
    view = ctx.ledger_view()  # a branch pushed back with rounds built under a claim
    claimed = claimed_rounds(view, thrown.slice, thrown.ball, thrown.episode)
    rounds = [c for c in ctx.objects.new_commits(upd.new, [since])
              if c.id.decode() not in pre and c.id.decode() not in claimed]
    if not rounds:
        return []
    pusher = ctx.pusher.name if ctx.pusher is not None else None
    return [Refusal("L9", upd.ref, rounds[-1].id.decode(), None, why, "claim the ball first "
                    "(`leap worker --remote REMOTE` claims a published ball before it builds)")
            for why in builder_problems(view, thrown.slice, thrown.ball,
                                        thrown.episode, None, pusher, ctx.now)]


def check_deletion(ctx: PushContext, upd: RefUpdate, slice_id: str, ball_id: str
                   ) -> list[Refusal]:
    """L6 (blind review r2): deleting a ball branch loses no record while the ledger keeps
    its rounds; one whose tip holds round commits of the current episode that no receipt
    records would forget them, and a branch created again would count its rounds afresh
    (a force-push by two pushes). Refused until the ledger records them."""
    from leapgit.ledger import query
    from leapgit.rules.episodes import episode_reds

    old = upd.old
    if old is None or not ctx.objects.has(old):
        return []
    view = ctx.ledger_view()
    if not query.open_slice(view, slice_id):
        return []  # merged or abandoned: no round of it counts any more
    try:
        base = recorded_base(view, slice_id, ball_id)
        found = episode_reds(view, slice_id, ball_id,
                             base.thrown.episode if base.thrown is not None else None)
    except LeapError:
        return []  # no ball the ledger knows: no round of it to forget
    if not ctx.objects.has(base.commit) or not ctx.objects.is_ancestor(base.commit, old):
        return []  # an earlier episode's branch: its rounds are that episode's
    commits, pre = round_commits(ctx.objects, found, base.commit, old)
    count = count_rounds((c.id.decode() for c in commits if c.id.decode() not in pre),
                         recorded_rounds(view, slice_id, ball_id))
    if not count.unrecorded:
        return []
    return [Refusal("L6", upd.ref, old, None, f"deleting the branch would forget "
                    f"{len(count.unrecorded)} round commit(s) no receipt records (the oldest "
                    f"{count.unrecorded[0][:12]}): rounds count whether or not a branch keeps "
                    "them", "push the ledger that records them (`leap sync`), then delete "
                    "the branch; or keep it and add the next round on top")]


def check_stack(objects: Objects, view: LedgerView, ref: str, sha: str, ball: BallRecord,
                base: Base) -> list[Refusal]:
    """L5: a ball built on a recorded stack base builds on its dependencies' passed
    candidates and nothing else (``rules.stack``); a forged stack is refused."""
    if base.thrown is None or not base.thrown.stack:
        return []
    from leapgit.ledger import query
    from leapgit.rules.stack import stack_problems

    slice_base = query.load_slice(view, ball.slice).base
    return [Refusal("L5", ref, sha, None, f"{base.source} {base.commit[:12]} is no stack of "
                    f"the passed candidates of its dependencies: {why}", "throw the ball with "
                    f"`leap throw {ball.slice} --ball {ball.ball}`, which builds its stack base "
                    "from the ledger's passes")
            for why in stack_problems(objects, view, slice_base, ball, base.commit,
                                      base.thrown.stack)]


def contract_red(reds: Sequence[RedRecord]) -> RedRecord | None:
    """The red the episode's branch starts from: the latest contract red (T7.1), never a
    finding's red (T7.6), which sits on a candidate further up."""
    return next((r for r in reversed(reds) if not r.finding), None)


def unheld_reds(objects: Ancestry, reds: Sequence[RedRecord], head: str
                ) -> list[tuple[str, str]]:
    """(rule, why) for each red of the episode that the candidate ``head`` does not hold:
    its contract red (T7.1: the failing test comes before the build) and every finding's red
    (T7.6: the tests for the findings of a refusal, which the builder answers on top of
    them). One rule: the client's source step and the server's spine merge ask it, so a
    candidate rebuilt beside a finding's red is refused by both."""
    out: list[tuple[str, str]] = []
    contract = contract_red(reds)
    for red in ([contract] if contract is not None else []) + [r for r in reds if r.finding]:
        if objects.has(red.commit) and objects.is_ancestor(red.commit, head):
            continue
        if red.finding:
            out.append(("T7.6", f"the candidate does not hold red {red.red} at "
                        f"{red.commit[:12]}, the tests for the findings of score "
                        f"{red.answers}"))
        else:
            out.append(("T7.1", f"the candidate does not hold the red commit "
                        f"{red.commit[:12]}"))
    return out


def not_rounds(objects: Objects, reds: Sequence[RedRecord], base: str, head: str
               ) -> set[str]:
    """The commits of base..head that are red tests, not builder rounds: base..the contract
    red (T7.1), and each finding's red commit of the episode, itself alone (T7.6): the
    rounds below it stay rounds."""
    out = red_commits(objects, contract_red(reds), base, head)
    for red in reds:
        if red.finding and objects.has(red.commit) and objects.is_ancestor(red.commit, head) \
                and finding_red_problems(objects, red) == []:
            out.add(red.commit)
    return out


def finding_red_problems(objects: Objects, red: RedRecord) -> list[str] | None:
    """T7.6: what is wrong with a finding's red commit, judged from the objects (the one
    check the server's record rule and the round count ask): the candidate it answers is
    its one parent, and it adds exactly the new test files the record names, with their
    blobs. None while the objects do not hold it (it is no red test then: a round)."""
    if not objects.has(red.commit):
        return None
    if objects.type_of(red.commit) != "commit":
        return [f"red {red.red} names {red.commit[:12]}, which is no commit"]
    commit = objects.commit(red.commit)
    if [p.decode() for p in commit.parents] != [red.base] or not objects.has(red.base):
        return [f"red {red.red} at {red.commit[:12]} is not a child of the candidate "
                f"{red.base[:12]}"]
    before = objects.commit(red.base).tree
    named = {t.path: t.blob for t in red.tests}
    touched = objects.touched(before, commit.tree)
    out = []
    if touched != set(named):
        out.append(f"red {red.red} changes {', '.join(sorted(touched ^ set(named)))} beyond "
                   "or short of the test files it names")
    for path, blob in sorted(named.items()):
        if objects.blob_id_at(before, path) is not None:
            out.append(f"red {red.red} changes {path}, which the candidate holds: a "
                       "finding's red only adds new tests")
        found = objects.blob_id_at(commit.tree, path)
        if (found.decode() if found else None) != blob:
            out.append(f"red {red.red}'s {path} is not the blob it names")
    return out


def round_commits(objects: Objects, reds: Sequence[RedRecord], base: str, head: str
                  ) -> tuple[list[Commit], set[str]]:
    """The commits base..head and, of them, the red tests (``not_rounds``)."""
    commits = objects.new_commits(head, [base])
    return commits, not_rounds(objects, reds, base, head)


def check_history(objects: Objects, ref: str, ball: BallRecord, base: str, head: str,
                  reds: Sequence[RedRecord], round_cap: int, recorded: Rounds,
                  landed: str | None = None) -> list[Refusal]:
    """The ball-branch rules over the commits base..head: each commit (``check_commit``),
    the red before every round and the round count (L6). The ball branch's push asks it;
    so does the spine, of each candidate it merges (issue 18 F5: a commit outside the
    scope that a later one reverts is refused there as on the branch), where ``landed``
    is the spine's tip before the merge: a commit it holds already was judged when it
    landed, and only the commits the merge brings are judged one by one."""
    from leapgit.rules.commits import check_commit

    commits, pre = round_commits(objects, reds, base, head)
    brought = None if landed is None else \
        {c.id for c in objects.new_commits(head, [base, landed])}
    out: list[Refusal] = []
    for commit in commits:
        if brought is not None and commit.id not in brought:
            continue
        red_test = commit.id.decode() in pre  # the red test: scope-checked, but no round
        out.extend(check_commit(objects, ref, ball, commit, round_cap, reds, red_test))
    out.extend(check_red_first(ref, commits, pre, contract_red(reds), recorded))
    rounds = [c for c in commits if c.id.decode() not in pre]
    out.extend(check_round_count(ref, rounds, round_cap, recorded))
    return out


def hidden_rounds(commits: Iterable[Commit], recorded: Rounds, ball_id: str | None = None,
                  slice_id: str | None = None) -> list[tuple[str, str]]:
    """(commit, what makes it a round) of ``commits`` that are rounds: they carry a
    ``Leap-Round`` trailer (a round's receipt), or a receipt records them. ``ball_id``,
    ``slice_id``: a round that names another ball (``Leap-Ball``), or another slice's
    (``Leap-Slice``), is not one of this ball's (a dependency's candidate, below a red
    recorded before a stacked throw; a ball of the same name in a slice that landed on the
    spine the red is written on)."""
    from leapgit.records.trailers import BALL, ROUND, SLICE, parse

    known = {r.commit for r in recorded.receipts if r.commit} | recorded.earlier
    out = []
    for commit in commits:
        found = parse(commit.message)
        sha, number, named = commit.id.decode(), found.get(ROUND), found.get(BALL)
        theirs = found.get(SLICE) not in (None, slice_id) if slice_id is not None else False
        if number is not None and not theirs and (ball_id is None or named in (None, ball_id)):
            out.append((sha, f"Leap-Round: {number}"))
        elif sha in known:
            out.append((sha, "a round the ledger records"))
    return out


def check_red_first(ref: str, commits: Sequence[Commit], pre: set[str], red: RedRecord | None,
                    recorded: Rounds) -> list[Refusal]:
    """L6, T7.1: a red precedes every round of its episode. The commits base..red are the
    thrower's red test, no rounds; a round among them (a red naming the builder's fifth
    commit) would stop counting, and the builder would get rounds past the cap."""
    if red is None:
        return []
    return [Refusal("L6", ref, sha, None, f"a round commit ({what}) before red {red.red} at "
                    f"{red.commit[:12]}: a red precedes every round of its episode, so its "
                    "commits are no red test", "record red before the build; the rounds "
                    "count from the base") for sha, what in
            hidden_rounds((c for c in commits if c.id.decode() in pre), recorded)]


def _force_push(ctx: PushContext, upd: RefUpdate, base: Base) -> Refusal | None:
    """L6: a ball branch of the current episode moves forward only. A tip that does not
    descend from the current base belongs to an earlier episode's dropped branch, and so
    does one the earlier episode recorded when a throw started afresh on the same base."""
    old, new = upd.old, upd.new
    if old is None or new is None or not ctx.objects.has(old) or \
            ctx.objects.is_ancestor(old, new):
        return None
    if not ctx.objects.is_ancestor(base.commit, old):
        return None
    from leapgit.rules.episodes import drops_branch

    if base.thrown is not None and drops_branch(ctx.ledger_view(), base.thrown, old):
        return None  # L3: a fresh throw's branch replaces the one its episode left
    return Refusal("L6", upd.ref, new, None, f"a force-push: {new[:12]} does not "
                   f"descend from the branch's tip {old[:12]}; rewritten rounds are still "
                   "rounds", "add the next round on top of the pushed tip")
