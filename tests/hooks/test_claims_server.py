"""Issue 16, blind review (lens: the server is the authority): a hostile or buggy worker
pushing claims, rounds and receipts straight to the server with plain git (no `leap`).
Every attack is a real push to a real bare repository with the real ``pre-receive``; where
the transport names the pusher, a push over a file URL hands ``REMOTE_USER`` to the hook
as `git http-backend` would."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator, Mapping

import pytest

from leapgit.ledger import layout
from leapgit.records import yamlio
from leapgit.records.claims import ClaimRecord
from leapgit.records.types import Receipt, ThrowRecord
from leapgit.timeutil import iso_at, now_iso
from tests.hooks.world import NOW, SLICE, World, build_world, commit, remote_refs, round_message
from tests.support import git, pass_files, red_files
from tests.templates import Served

BALL = "b"
EPISODE = 2  # ball b's episode 1 (unpublished) ended at a -1; episode 2 is published
BRANCH = f"leap/ball/{SLICE}/{BALL}"
LEDGER = "refs/heads/leap/ledger"


def _published(folder: object, served: Served) -> World:
    from pathlib import Path

    w = build_world(Path(str(folder)), served.daemon)
    path, data = w.receipt(BALL, 1, -1, claim=True)
    w.append({path: data}, "b refused")
    return _publish_episode_2(w)


def _publish_episode_2(w: World) -> World:
    """Ball b's episode 2 published to workers afresh, its red recorded, its branch at the
    base, all pushed."""
    rec = ThrowRecord(slice=SLICE, ball=BALL, episode=EPISODE, spec_version=1, base=w.base,
                      branch=BRANCH, thrown_at=NOW, published=True)
    w.append({layout.throw_path(SLICE, BALL, EPISODE): yamlio.dumps(rec.to_dict())},
             "publish b")
    w.append(red_files(SLICE, BALL, w.base), "red of b")
    git("branch", "-f", BRANCH, w.base, cwd=w.work)
    pushed = w.push("leap/ledger", BRANCH)
    assert pushed.returncode == 0, pushed.stderr
    return w


@pytest.fixture
def pw(served: Served) -> Iterator[World]:
    """Ball b's episode 2, published to workers, its red recorded; no claim yet."""
    with served.world("hooks-claims", lambda folder: _published(folder, served)) as copy:
        yield copy


def claim(n: int, action: str, holder: str, *, until: str | None = None,
          renewal: int | None = None, episode: int = EPISODE) -> tuple[str, bytes]:
    if action != "release" and until is None:
        until = iso_at(time.time() + 60)
    rec = ClaimRecord(SLICE, BALL, episode, n, action, holder, now_iso(),  # type: ignore[arg-type]
                      claimed_until=until, renewal=renewal)
    return (layout.claim_path(SLICE, BALL, episode, n, action, renewal),
            yamlio.dumps(rec.to_dict()))


def push_ledger(w: World, records: Mapping[str, bytes], user: str | None = None,
                ) -> tuple[int, str]:
    """One ledger commit of ``records`` pushed; a refused one is taken back locally."""
    w.append(records)
    env = {"REMOTE_USER": user} if user else None
    res = w.push("leap/ledger", url=str(w.bare) if user else None, env=env)
    if res.returncode != 0:
        w.reset_ledger()
    return res.returncode, res.stderr


def taken(w: World, holder: str = "w1", user: str | None = None) -> None:
    code, err = push_ledger(w, dict([claim(1, "take", holder)]), user)
    assert code == 0, err


def receipt(holder: str | None, round_no: int, outcome: int, commit_sha: str | None = None,
            ) -> tuple[str, bytes]:
    rec = Receipt(SLICE, BALL, EPISODE, round_no, outcome, "tried", NOW, claim=True,
                  commit=commit_sha, candidate=None, worker=holder)
    return layout.receipt_path(SLICE, BALL, EPISODE, round_no), yamlio.dumps(rec.to_dict())


# -- what the server already holds (regression guards) ------------------------------------

def test_a_second_live_claim_and_an_overlong_lease_are_refused(pw: World) -> None:
    taken(pw)
    code, err = push_ledger(pw, dict([claim(2, "take", "mallory")]))
    assert code == 1 and "[L9]" in err and "'w1' is live until" in err, err
    for until in ("2999-01-01T00:00:00Z", "2024-01-01T00:00:00+01:00", "soon",
                  iso_at(time.time() + 10 ** 6)):
        code, err = push_ledger(pw, dict([claim(1, "renew", "w1", until=until, renewal=1)]))
        assert code == 1 and "is longer than workers.claim_seconds" in err, (until, err)


def test_another_s_claim_is_not_renewed_or_given_back(pw: World) -> None:
    taken(pw, user="w1")
    for action, renewal in (("renew", 1), ("release", None)):
        code, err = push_ledger(pw, dict([claim(1, action, "mallory", renewal=renewal)]))
        assert code == 1 and "claim 1 is held by 'w1', not 'mallory'" in err, err
        # in the holder's name, but the transport names another pusher
        code, err = push_ledger(pw, dict([claim(1, action, "w1", renewal=renewal)]),
                                user="mallory")
        assert code == 1 and "pushed by 'mallory' (from REMOTE_USER)" in err, err


def test_malformed_claim_records_are_refused_not_crashed_on(pw: World) -> None:
    from tests.hooks.world import forge_ledger_commit

    taken(pw)
    folder = layout.claims_dir(SLICE, BALL, EPISODE)
    good = yamlio.loads(claim(1, "renew", "w1", renewal=1)[1], "renew")
    cases = {
        f"{folder}/1/renew-1.yaml": {**good, "renewal": None},  # renew without a number
        f"{folder}/1/renew-2.yaml": {**good, "renewal": 2},  # a skipped number
        f"{folder}/01/take.yaml": {**good, "action": "take", "renewal": None},
        f"{folder}/0/take.yaml": {**good, "action": "take", "claim": 0},
        f"{folder}/{'9' * 40}/take.yaml": {**good, "action": "take", "claim": int("9" * 40)},
        f"{folder}/3/take.yaml": {**good, "action": "take", "claim": 2},  # path != content
    }
    for path, raw in cases.items():
        raw = {k: v for k, v in raw.items() if v is not None}
        forge_ledger_commit(pw, {path: yamlio.dumps(raw)})
        res = pw.push("leap/ledger")
        assert res.returncode == 1 and "Traceback" not in res.stderr, (path, res.stderr)
        assert "[L8]" in res.stderr or "[L9]" in res.stderr, (path, res.stderr)
        pw.reset_ledger()


def test_rounds_and_receipts_without_the_live_claim_are_refused(pw: World) -> None:
    git("checkout", "-q", BRANCH, cwd=pw.work)
    sha = commit(pw.work, {"src/b.py": "B = 20\n"}, round_message("b: twenty", 1))
    git("checkout", "-q", "main", cwd=pw.work)
    res = pw.push(BRANCH)  # no claim at all
    assert res.returncode == 1 and "no claim on it is live" in res.stderr, res.stderr
    code, err = push_ledger(pw, dict([receipt("w1", 1, 0, sha)]))
    assert code == 1 and "no claim on it is live" in err, err
    taken(pw, "w1")
    res = pw.push(BRANCH, url=str(pw.bare), env={"REMOTE_USER": "mallory"})
    assert res.returncode == 1 and "pushed by 'mallory'" in res.stderr, res.stderr
    code, err = push_ledger(pw, dict([receipt("mallory", 1, 0, sha)]))
    assert code == 1 and "recorded by worker 'mallory'" in err, err
    code, err = push_ledger(pw, dict([receipt(None, 1, 0, sha)]))
    assert code == 1 and "the record names no worker" in err, err
    assert remote_refs(pw.bare)[f"refs/heads/{BRANCH}"] == pw.base


# -- findings ------------------------------------------------------------------------------

def test_a_claim_on_a_passed_episode_is_refused(pw: World) -> None:
    """README: the server refuses 'a claim on a ball ... whose episode ended'. An episode
    that passed (a score of 1) ended; before, only a checkpoint or a -1 receipt counted, so
    a worker could claim a passed ball again (and push rounds on top of its candidate)."""
    taken(pw, "w1")
    git("checkout", "-q", BRANCH, cwd=pw.work)
    sha = commit(pw.work, {"src/b.py": "B = 20\n"}, round_message("b: twenty", 1, 1))
    git("checkout", "-q", "main", cwd=pw.work)
    res = pw.push(BRANCH)
    assert res.returncode == 0, res.stderr
    tree = pw.tip(f"{sha}^{{tree}}")
    rec = Receipt(SLICE, BALL, EPISODE, 1, 1, "built", NOW, claim=True, commit=sha,
                  candidate=tree, worker="w1")
    code, err = push_ledger(pw, {layout.receipt_path(SLICE, BALL, EPISODE, 1):
                                 yamlio.dumps(rec.to_dict())})
    assert code == 0, err
    code, err = push_ledger(pw, dict([claim(1, "release", "w1")]))
    assert code == 0, err
    code, err = push_ledger(pw, pass_files(SLICE, BALL, tree, sha, pw.base, episode=EPISODE))
    assert code == 0, err
    code, err = push_ledger(pw, dict([claim(2, "take", "w2")]))
    assert code == 1 and "[L9]" in err and "passed" in err, err


def test_thousands_of_claim_records_in_one_push_are_judged_in_linear_time(pw: World) -> None:
    """Exhaustion: the claims of an episode are unbounded (each a take and a release, or a
    renewal). Each record's check read every claim of the episode again, so one commit of
    n records cost n^2 record reads. Judged: 1,500 renewals in one push, against 150."""
    taken(pw, "w1")
    timings = []
    for first, n in ((1, 150), (151, 1500)):
        records = dict(claim(1, "renew", "w1", renewal=k) for k in range(first, first + n))
        started = time.monotonic()
        code, err = push_ledger(pw, records)
        timings.append(time.monotonic() - started)
        assert code == 0, err
    # linear: 10x the records, well under 30x the time (quadratic would be ~100x)
    assert timings[1] < 30 * max(timings[0], 0.3), timings


def test_a_deleted_branch_pushed_back_with_recorded_rounds_only_builds_nothing(
        pw: World) -> None:
    """L9 (a hint-coverage hunt): a published ball's branch deleted on the remote could not
    be put back by anyone (its resume's publish was refused): every recorded round counted
    as a round built without a live claim. Rounds the ledger recorded were built under a
    claim already; pushing them back builds nothing. A new round on top still needs the
    live claim."""
    git("checkout", "-q", BRANCH, cwd=pw.work)
    sha = commit(pw.work, {"src/b.py": "B = 20\n"}, round_message("b: twenty", 1))
    git("checkout", "-q", "main", cwd=pw.work)
    taken(pw, "w1")
    assert pw.push(BRANCH).returncode == 0
    for records in ([receipt("w1", 1, 0, sha)], [claim(1, "release", "w1")]):
        code, err = push_ledger(pw, dict(records))
        assert code == 0, err
    git("update-ref", "-d", f"refs/heads/{BRANCH}", cwd=pw.bare)  # deleted by hand there
    back = pw.push(BRANCH)  # no claim is live now: nothing new is built
    assert back.returncode == 0, back.stderr
    assert remote_refs(pw.bare)[f"refs/heads/{BRANCH}"] == sha
    git("checkout", "-q", BRANCH, cwd=pw.work)
    commit(pw.work, {"src/b.py": "B = 30\n"}, round_message("b: thirty", 2))
    git("checkout", "-q", "main", cwd=pw.work)
    res = pw.push(BRANCH)
    assert res.returncode == 1 and "no claim on it is live" in res.stderr, res.stderr


def _mallory_built_episode_1(folder: object, served: Served) -> World:
    """Ball b's episode 1, unpublished (anyone records its rounds), built by mallory: round
    1 at M1, recorded refused (-1) naming M1. Episode 2 is published afresh (no
    ``resumed_from``), its red recorded, its branch at the base."""
    from pathlib import Path

    w = build_world(Path(str(folder)), served.daemon)
    git("checkout", "-q", "-b", "m-work", w.base, cwd=w.work)
    m1 = commit(w.work, {"src/b.py": "B = 666  # mallory's refused round\n"},
                round_message("b: mallory", 1, -1))
    git("checkout", "-q", "main", cwd=w.work)
    path, data = w.receipt(BALL, 1, -1, claim=True, commit=m1)
    w.append({path: data}, "b refused (mallory's round 1)")
    (w.base_dir / "m1").write_text(m1)
    return _publish_episode_2(w)


@pytest.fixture
def mw(served: Served) -> Iterator[World]:
    with served.world("hooks-claims-mallory",
                      lambda folder: _mallory_built_episode_1(folder, served)) as copy:
        yield copy


def _as(w: World, user: str, *refspecs: str) -> subprocess.CompletedProcess[str]:
    return w.push(*refspecs, url=str(w.bare), env={"REMOTE_USER": user})


@pytest.mark.parametrize("holder", [None, "w1"])
def test_a_round_recorded_outside_a_claim_is_no_round_built_under_one(
        mw: World, holder: str | None) -> None:
    """Blind security review (bc73246): the push-back exemption took every receipt of the
    ball, an unpublished (anyone's) and a refused episode's too: mallory, with no claim,
    put her refused round of episode 1 on episode 2's published branch. Only rounds
    recorded under a claim, on the branch this episode goes on with, are exempt."""
    m1 = (mw.base_dir / "m1").read_text()
    if holder is not None:
        taken(mw, holder, user=holder)
    res = _as(mw, "mallory", f"{m1}:refs/heads/{BRANCH}")
    assert res.returncode == 1 and "[L9]" in res.stderr, res.stderr
    assert remote_refs(mw.bare)[f"refs/heads/{BRANCH}"] == mw.base


def test_a_branch_pushed_back_by_another_keeps_the_holders_line(mw: World) -> None:
    """Blind security review (bc73246): mallory deleted the published branch and pushed her
    own recorded line back; the holder's next round was then refused as a force-push. She
    can push back only the holder's recorded line, on which the holder goes on; and a
    merge of recorded commits is no recorded round."""
    m1 = (mw.base_dir / "m1").read_text()
    taken(mw, "w1", user="w1")
    git("checkout", "-q", BRANCH, cwd=mw.work)
    r1 = commit(mw.work, {"src/b.py": "B = 20\n"}, round_message("b: twenty", 1))
    git("checkout", "-q", "main", cwd=mw.work)
    assert _as(mw, "w1", BRANCH).returncode == 0
    code, err = push_ledger(mw, dict([receipt("w1", 1, 0, r1)]), user="w1")
    assert code == 0, err
    assert _as(mw, "mallory", f":refs/heads/{BRANCH}").returncode == 0  # all recorded
    theirs = _as(mw, "mallory", f"{m1}:refs/heads/{BRANCH}")
    assert theirs.returncode == 1 and "[L9]" in theirs.stderr, theirs.stderr
    git("checkout", "-q", "-b", "m-merge", r1, cwd=mw.work)
    git("-c", "core.hooksPath=/dev/null", "merge", "-q", "--no-ff", "-s", "ours", "-m",
        "merge", m1, cwd=mw.work)
    git("checkout", "-q", "main", cwd=mw.work)
    merged = _as(mw, "mallory", f"m-merge:refs/heads/{BRANCH}")
    assert merged.returncode == 1 and "[L9]" in merged.stderr, merged.stderr
    assert _as(mw, "mallory", f"{r1}:refs/heads/{BRANCH}").returncode == 0  # w1's line
    git("checkout", "-q", BRANCH, cwd=mw.work)
    commit(mw.work, {"src/b.py": "B = 21\n"}, round_message("b: twenty-one", 2))
    git("checkout", "-q", "main", cwd=mw.work)
    res = _as(mw, "w1", BRANCH)
    assert res.returncode == 0, res.stderr  # the holder goes on
