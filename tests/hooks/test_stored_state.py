"""Issue 18 F1: the server judges every ref against the state it STORES. A ledger that
exists only in a push proves nothing: git's receive-pack moves each ref on its own (unless
the client asked for ``--atomic``), so the pushed ledger may never land while the spine
merge it was meant to prove does. Every attack here is a real push to a real bare
repository with the real ``pre-receive``: a raw receive-pack client where the attack needs
a chosen ``<old>``, stock `git push` (two of them racing) otherwise."""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from leapgit.ledger.leases import active_lease, take_lease
from tests.hooks.rawpush import Command, raw_push
from tests.hooks.world import SLICE, World, commit, remote_refs, round_message, run_git
from tests.support import git, write_pass

BALL_A = f"leap/ball/{SLICE}/a"
LEDGER, SPINE = "refs/heads/leap/ledger", "refs/heads/main"


@dataclass(frozen=True)
class Forged:
    """A spine merge of ball a and the ledger commit that proves it (pass and lease)."""

    ledger: str  # the proving ledger commit
    merge: str  # the spine merge commit
    parent: str  # the ledger commit the proof was written on


def passed_merge(w: World, holder: str = "integrator") -> Forged:
    """Ball a's round, its full pass and the lease, written on the local ledger (which is
    left there), and the integrator's merge commit of it on the spine (main untouched)."""
    parent = w.tip("leap/ledger")
    git("checkout", "-q", "-B", BALL_A, w.base, cwd=w.work)
    commit(w.work, {"src/a.py": "A = 10\n"}, round_message("a: ten", 1, 1))
    git("checkout", "-q", "main", cwd=w.work)
    tree = w.tip(f"{BALL_A}^{{tree}}")
    with w.ledger() as ledger:
        write_pass(ledger, SLICE, "a", tree, w.tip(BALL_A), w.base)
        take_lease(ledger, "main", holder)
    merge = git("commit-tree", w.tip(f"{BALL_A}^{{tree}}"), "-p", w.base, "-p", w.tip(BALL_A),
                "-m", "integrate s1/a\n\nLeap-Slice: s1\nLeap-Ball: a", cwd=w.work)
    return Forged(w.tip("leap/ledger"), merge, parent)


def proven(bare: Path, merge: str) -> bool:
    """Whether the ledger the server stores proves ``merge``: a full pass of its candidate
    and an open lease (a lease released since would be history, not a missing proof)."""
    from dulwich.repo import Repo

    from leapgit.ledger import leases
    from leapgit.ledger.store import LedgerView
    from leapgit.rules.passes import is_full_pass

    with Repo(str(bare)) as repo:
        tip = repo.refs[LEDGER.encode()].decode()
        candidate = repo[repo[merge.encode()].parents[1]].tree.decode()  # type: ignore[attr-defined]
        view = LedgerView(repo, tip)
        return is_full_pass(view, SLICE, "a", candidate) and \
            bool(leases.leases(view, "main"))


def side_record(w: World, parent: str) -> str:
    """An honest ledger commit on ``parent`` that is not the proof: a round of ball b."""
    git("update-ref", "refs/heads/leap/ledger", parent, cwd=w.work)
    path, data = w.receipt("b", 1, 0, claim=True)
    return w.append({path: data}, "round 1 of b")


def test_forked_ledger_with_a_chosen_old_cannot_carry_a_spine_merge(fresh_world: World
                                                                     ) -> None:
    """The ledger fork starts from an older ledger commit and names it as ``<old>``: git's
    compare-and-swap refuses that ledger update, and the spine merge it proved landed."""
    w = fresh_world
    older = w.tip("leap/ledger~1")  # the throw of a: the fork's base
    git("update-ref", "refs/heads/leap/ledger", older, cwd=w.work)
    forged = passed_merge(w)
    before = remote_refs(w.bare)
    result = raw_push(w.work, w.bare, [Command(LEDGER, older, forged.ledger),
                                       Command(SPINE, w.base, forged.merge)])
    assert remote_refs(w.bare) == before, result.stderr
    assert "[L8] refs/heads/leap/ledger" in result.stderr, result.stderr
    assert f"names its old tip {older[:12]}, but this repository holds it at " \
        f"{before[LEDGER][:12]}" in result.stderr, result.stderr
    assert result.status.get(SPINE) != "ok", result.status


def test_spine_is_judged_against_the_stored_ledger_not_the_pushed_one(fresh_world: World
                                                                      ) -> None:
    """A push of the proving ledger and the merge at once is refused (the ledger could fail
    while the spine lands); the ledger first, then the spine, lands both."""
    w = fresh_world
    forged = passed_merge(w)
    before = remote_refs(w.bare)
    both = w.push(f"{forged.ledger}:{LEDGER}", f"{forged.merge}:{SPINE}")
    assert both.returncode != 0, both.stderr
    assert "[L9] refs/heads/main" in both.stderr and "no open integrator lease" in \
        both.stderr, both.stderr
    assert "the ledger the server stores" in both.stderr and "push the ledger first" in \
        both.stderr, both.stderr
    assert remote_refs(w.bare) == before
    first = w.push(f"{forged.ledger}:{LEDGER}")
    assert first.returncode == 0, first.stderr
    then = w.push(f"{forged.merge}:{SPINE}")
    assert then.returncode == 0, then.stderr
    assert remote_refs(w.bare)[SPINE] == forged.merge


def test_ball_branch_is_judged_against_the_stored_ledger(fresh_world: World) -> None:
    """A ledger fork that starts episode 2 of ball a on a new base, with a chosen
    ``<old>``, and the ball branch rewritten onto that base: against the stored ledger
    (episode 1 still open) the rewrite is a force-push that resets the round count."""
    w = fresh_world
    stored = w.tip("leap/ledger")
    git("checkout", "-q", "-B", BALL_A, w.base, cwd=w.work)
    rounds = [commit(w.work, {"src/a.py": f"A = {n}\n"}, round_message(f"a {n}", n))
              for n in range(1, 5)]
    assert w.push(BALL_A).returncode == 0
    git("checkout", "-q", "--detach", w.base, cwd=w.work)
    elsewhere = commit(w.work, {"README.md": "# moved on\n"}, "another base")
    git("checkout", "-q", "-B", BALL_A, elsewhere, cwd=w.work)
    fresh = commit(w.work, {"src/a.py": "A = 5\n"}, round_message("a: a fresh start", 1))
    w.append(dict([*(w.receipt("a", n, 0, claim=True, commit=sha)
                     for n, sha in enumerate(rounds, start=1)), w.checkpoint("a", 4)]))
    w.throw("a", episode=2, base=elsewhere)
    fork = w.tip("leap/ledger")
    side_record(w, stored)
    assert w.push("leap/ledger").returncode == 0  # the server's ledger moves on
    git("checkout", "-q", "main", cwd=w.work)
    before = remote_refs(w.bare)
    result = raw_push(w.work, w.bare, [Command(LEDGER, stored, fork),
                                       Command(f"refs/heads/{BALL_A}", rounds[-1], fresh)])
    assert remote_refs(w.bare) == before, result.stderr
    assert "[L8] refs/heads/leap/ledger" in result.stderr, result.stderr
    alone = w.push(f"+{fresh}:refs/heads/{BALL_A}")
    assert alone.returncode != 0
    assert f"[L6] refs/heads/{BALL_A}" in alone.stderr and "a force-push" in alone.stderr, \
        alone.stderr
    assert remote_refs(w.bare) == before


ITERATIONS, BUDGET = 30, 120.0  # iterations, and seconds they may take at most


def _start_push(w: World, *refspecs: str) -> subprocess.Popen[str]:
    import os

    from tests.support import IDENTITY

    return subprocess.Popen(["git", "push", "--porcelain", "--no-verify", w.url, *refspecs],
                            cwd=w.work, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, **IDENTITY})


def test_racing_pushes_never_land_an_unproven_spine(fresh_world: World) -> None:
    """Two ordinary pushes race, many times: one carries the proving ledger and the merge
    (at once, or the ledger first and then the spine), the other an honest ledger record
    on the same tip. Whichever ledger update wins, the spine lands only when the ledger
    the server stores proves it; the honest order does land it."""
    w = fresh_world
    start = w.tip("leap/ledger")
    forged = passed_merge(w)
    other = side_record(w, start)
    landed = iterations = 0
    deadline = time.monotonic() + BUDGET
    while iterations < ITERATIONS and time.monotonic() < deadline:
        git("update-ref", LEDGER, start, cwd=w.bare)  # the server's admin resets its refs
        git("update-ref", SPINE, w.base, cwd=w.bare)
        at_once = iterations % 2 == 0
        # every fourth: the racer comes once the ledger push is in (the honest order, which
        # must land); a race alone was won by the smaller push every time on a quiet machine
        settled = iterations % 4 == 1
        attacker = _start_push(w, f"{forged.ledger}:{LEDGER}",
                               *([f"{forged.merge}:{SPINE}"] if at_once else []))
        if settled:
            attacker.communicate(timeout=60)
        racer = _start_push(w, f"{other}:{LEDGER}")
        attacker.communicate(timeout=60)
        racer.communicate(timeout=60)
        if not at_once:
            run_git("push", "--porcelain", "--no-verify", w.url, f"{forged.merge}:{SPINE}",
                    cwd=w.work)
        spine = remote_refs(w.bare)[SPINE]
        if spine == forged.merge:
            assert proven(w.bare, forged.merge), f"iteration {iterations}: the spine " \
                "landed a merge the server's ledger does not prove"
            landed += 1
        iterations += 1
    assert iterations >= 10, f"only {iterations} iterations in {BUDGET} s"
    assert landed > 0, "the honest order (ledger first, then the spine) never landed"


def test_merge_lands_with_the_ledger_first(fresh_world: World) -> None:
    """The lease taken locally and the merge pushed by a client that syncs first: the
    stored ledger proves the spine by the time it is judged (the flow `leap merge` uses)."""
    w = fresh_world
    forged = passed_merge(w)
    with w.ledger() as ledger:
        assert active_lease(ledger.require(), "main") is not None
    assert w.push("leap/ledger").returncode == 0
    result = w.push(f"{forged.merge}:{SPINE}", verify=True)
    assert result.returncode == 0, result.stderr
    assert proven(w.bare, forged.merge)


def test_one_run_judges_against_one_stored_ledger(fresh_world: World) -> None:
    """Blind review r1 F1: one pre-receive run reads the stored ledger several times (the
    lease, the pass, the history); a legitimate ledger push landing between two reads made
    the spine judged half against L0 (lease open, no pass) and half against L1 (pass, lease
    released), and accepted, though neither ledger proves the merge. Every read of one run
    is served from one snapshot of the stored tips. The concurrent push is played in at the
    exact moment between the lease read and the pass read."""
    from dulwich.repo import Repo

    import leapgit.rules.spine as spine_rule
    from leapgit.ledger.leases import release_lease
    from leapgit.rules.context import PushContext, RefUpdate, server_config
    from leapgit.rules.objects import Objects
    from leapgit.rules.push import check_push

    w = fresh_world
    with w.ledger() as ledger:
        take_lease(ledger, "main", "integrator")
    assert w.push("leap/ledger").returncode == 0
    l0 = w.tip("leap/ledger")
    git("checkout", "-q", "-B", BALL_A, w.base, cwd=w.work)
    commit(w.work, {"src/a.py": "A = 10\n"}, round_message("a: ten", 1, 1))
    git("checkout", "-q", "main", cwd=w.work)
    tree = w.tip(f"{BALL_A}^{{tree}}")
    with w.ledger() as ledger:
        write_pass(ledger, SLICE, "a", tree, w.tip(BALL_A), w.base)
        release_lease(ledger, "main", "integrator")
    l1 = w.tip("leap/ledger")
    merge = git("commit-tree", tree, "-p", w.base, "-p", w.tip(BALL_A),
                "-m", "integrate s1/a\n\nLeap-Slice: s1\nLeap-Ball: a", cwd=w.work)
    # the objects reach the server; its ledger stays at l0
    assert w.push(f"{l1}:refs/heads/carrier", f"{merge}:refs/heads/carrier2").returncode == 0

    real = spine_rule._check_lease

    def lease_then_a_ledger_push_lands(ctx: object, upd: object) -> object:
        out = real(ctx, upd)  # type: ignore[arg-type]
        git("update-ref", LEDGER, l1, l0, cwd=w.bare)  # a concurrent ledger push lands
        return out

    spine_rule._check_lease = lease_then_a_ledger_push_lands  # type: ignore[assignment]
    try:
        with Repo(str(w.bare)) as repo:
            objects = Objects(repo)
            ctx = PushContext(objects, server_config(objects),
                              (RefUpdate(SPINE, w.base, merge),), authority=True)
            lines = [r.line() for r in check_push(ctx)]
    finally:
        spine_rule._check_lease = real  # type: ignore[assignment]
    assert lines, "judged against a mix of two ledgers, the merge was accepted"
    assert any("[L7]" in line and "no pass" in line for line in lines), lines


def test_a_ball_unknown_to_the_stored_ledger_says_push_the_ledger_before_it(
        fresh_world: World) -> None:
    """Blind review r2: the hint said "with or before", but a ball branch pushed with the
    ledger that records it is judged against the ledger the server stores, and refused;
    the hint says "before", and `leap sync`, which it names, leads on."""
    from leapgit.ledger import layout
    from leapgit.records import yamlio
    from leapgit.records.types import ThrowRecord
    from tests.hooks.world import NOW
    from tests.support import leap

    w = fresh_world
    (w.work / "s2.yaml").write_text(
        "slice: s2\nspine: integrator\nballs:\n  - id: c\n    goal: c is 30\n"
        "    spec: set C to 30\n    scope: [src/c.py]\n    proof: \"true\"\n"
        "    tests: \"true\"\n    rollback: restore-scope\n  - id: d\n    goal: d\n"
        "    spec: a readme\n    scope: [README.md]\n    proof: \"true\"\n"
        "    tests: \"true\"\n    rollback: restore-scope\n")
    cut = leap("slice", "cut", "s2.yaml", cwd=w.work)
    assert cut.code == 0, cut
    rec = ThrowRecord(slice="s2", ball="c", episode=1, spec_version=1, base=w.base,
                      branch="leap/ball/s2/c", thrown_at=NOW)
    w.append({layout.throw_path("s2", "c", 1): yamlio.dumps(rec.to_dict())}, "throw c")
    git("checkout", "-q", "-B", "leap/ball/s2/c", w.base, cwd=w.work)
    commit(w.work, {"src/c.py": "C = 30\n"}, round_message("c: thirty", 1, 1))
    git("checkout", "-q", "main", cwd=w.work)
    before = remote_refs(w.bare)
    both = w.push("leap/ledger", "leap/ball/s2/c")
    assert both.returncode != 0, both.stderr
    assert "[L4] refs/heads/leap/ball/s2/c" in both.stderr, both.stderr
    assert "no ball s2/c in the ledger" in both.stderr, both.stderr
    assert "push the ledger (`leap sync`) before the ball branch" in both.stderr, both.stderr
    assert "with or" not in both.stderr, both.stderr
    assert remote_refs(w.bare) == before
    synced = leap("sync", cwd=w.work)
    assert synced.code == 0, synced
    then = w.push("leap/ball/s2/c")
    assert then.returncode == 0, then.stderr
    assert remote_refs(w.bare)["refs/heads/leap/ball/s2/c"] == w.tip("leap/ball/s2/c")


def test_the_spine_commits_are_judged_without_the_lease_and_the_push_with_it(
        fresh_world: World) -> None:
    """``check_spine_commits`` (what a clone asks of its own spine before any work) is
    ``check_spine_update`` without the lease: an honest integration merge with no lease
    open holds there, and only the push is refused for the lease (L9); a commit made
    outside an integration is refused by both alike (L8)."""
    from dulwich.repo import Repo

    from leapgit.ledger.leases import release_lease
    from leapgit.records.config import load_config
    from leapgit.rules.context import PushContext, RefUpdate
    from leapgit.rules.objects import Objects
    from leapgit.rules.spine import check_spine_commits, check_spine_update

    w = fresh_world
    forged = passed_merge(w)
    with w.ledger() as ledger:
        release_lease(ledger, "main", "integrator", "the merge is not pushed yet")
    outside = git("commit-tree", f"{w.base}^{{tree}}", "-p", w.base, "-m", "a note",
                  cwd=w.work)

    def judged(new: str) -> tuple[list[str], list[str]]:
        with Repo(str(w.work)) as repo:
            upd = RefUpdate(SPINE, w.base, new)
            ctx = PushContext(Objects(repo), load_config(w.work), (upd,))
            return ([r.line() for r in check_spine_commits(ctx, upd)],
                    [r.line() for r in check_spine_update(ctx, upd)])

    commits, push = judged(forged.merge)
    assert commits == [], commits
    assert len(push) == 1 and push[0].startswith("[L9]") and "no open integrator lease" in \
        push[0], push
    commits, push = judged(outside)
    assert commits == push and len(push) == 1 and push[0].startswith("[L8]"), (commits, push)
    assert "not an integration merge" in push[0], push
