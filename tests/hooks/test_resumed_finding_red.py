"""L6, T7.6 on the server, across `--resume-holds`: a finding's red recorded in episode 1
sits on the ball branch that the resumed episode 2 keeps (same base, same branch). Episode
2's rounds stand on it: it is the test author's red test, no round of episode 2, and its
test file stays frozen. Pushed past the client (`--no-verify`) to a real bare remote with
the server hook behind `git daemon`."""

from __future__ import annotations

import subprocess

from leapgit.ledger import layout
from leapgit.ledger.leases import take_lease
from leapgit.records import yamlio
from leapgit.records.scoring import FileBlob, RedRecord, RunEvidence, ScoreRecord, Step
from leapgit.records.types import ThrowRecord
from tests.hooks.test_server_rules import BALL_A, MERGE_A, blob, red_record, refused, respec_record
from tests.hooks.world import NOW, SLICE, World, commit, remote_refs, round_message
from tests.support import claimed_round, git, pass_files

FINDING_TEST = "src/new.py"  # the one scope path the candidate lacks: the finding's new test


def _refusing_score(w: World, candidate: str) -> dict[str, bytes]:
    """Score 1 of ball a: round 1's claim refused on the tribunal's findings (T7.6)."""
    tree = w.tip(f"{candidate}^{{tree}}")
    rec = ScoreRecord(SLICE, "a", 1, 1, 1, 1, -1, "the tribunal refused", tree, candidate,
                      w.base, (Step("source", "ok", "test"),
                               Step("tribunal", "fail", "a juror found a defect")), NOW)
    return {layout.score_path(SLICE, "a", 1): yamlio.dumps(rec.to_dict())}


def _finding_red(w: World, candidate: str) -> tuple[str, dict[str, bytes]]:
    """Red 2 of ball a: the test author's new failing test on the refused candidate."""
    sha = commit(w.work, {FINDING_TEST: "assert False  # the finding\n"}, "red: a's finding")
    rec = RedRecord(SLICE, "a", 2, sha, candidate,
                    (FileBlob(FINDING_TEST, blob(w, sha, FINDING_TEST)),),
                    RunEvidence("red", "false", 1), NOW, answers=1, episode=1)
    return sha, {layout.red_path(SLICE, "a", 2): yamlio.dumps(rec.to_dict())}


def _push(w: World, *refs: str) -> None:
    """Each ref in turn: the ball branch is judged by the ledger the server stores."""
    for ref in refs:
        pushed = w.push(ref)
        assert pushed.returncode == 0, pushed.stderr


def _episode_one(w: World) -> tuple[str, str]:
    """Episode 1 of ball a to a finding's red on its branch: a contract red, round 1's
    claim, score 1 refusing it on the findings, red 2 on that candidate. Returns (the
    contract red's commit, the finding red's); the branch is left checked out at its tip."""
    git("checkout", "-q", "-B", BALL_A, w.base, cwd=w.work)
    red = commit(w.work, {"tests/test_a.py": "def test_a():\n    assert False\n"}, "red: a")
    w.append(red_record(w, "a", 1, red, {"tests/test_a.py": blob(w, red, "tests/test_a.py")}))
    claim = commit(w.work, {"src/a.py": "A = 10\n"}, round_message("a 1", 1, 1))
    w.append(dict([w.receipt("a", 1, 1, claim=True, candidate=w.tip(f"{claim}^{{tree}}"),
                             commit=claim)]), "a: round 1 claims")
    w.append(_refusing_score(w, claim), "a: score 1 refuses on the findings")
    finding, rec = _finding_red(w, claim)
    w.append(rec, "a: the finding's red")
    _push(w, "leap/ledger", BALL_A)
    return red, finding


def _resumed(w: World) -> str:
    """``_episode_one``, its rounds 2-4 to the checkpoint, then episode 2 thrown as `leap
    throw --resume` writes it (resumed_from 1, the same base and branch). Returns the
    finding red's commit; the branch is left checked out at its tip."""
    _, finding = _episode_one(w)
    rounds = [commit(w.work, {"src/a.py": f"A = 1{n}\n"}, round_message(f"a {n}", n))
              for n in (2, 3, 4)]
    w.append(dict([w.receipt("a", n, 0, claim=False, commit=sha)
                   for n, sha in zip((2, 3, 4), rounds, strict=True)]
                  + [w.checkpoint("a", 4)]), "a: rounds 2-4, checkpoint")
    _push(w, "leap/ledger", BALL_A)
    _throw_two(w, 1)
    return finding


def _throw_two(w: World, spec_version: int) -> None:
    thrown = ThrowRecord(SLICE, "a", 2, spec_version, w.base, BALL_A, NOW, resumed_from=1)
    w.append({layout.throw_path(SLICE, "a", 2): yamlio.dumps(thrown.to_dict())}, "throw a 2")
    _push(w, "leap/ledger")


def _merge(w: World, head: str, episode: int, spec_version: int
           ) -> subprocess.CompletedProcess[str]:
    """A pass of ``head`` in ``episode``, and the spine merge of it pushed."""
    tree = w.tip(f"{head}^{{tree}}")
    with w.ledger() as ledger:
        files = claimed_round(ledger, SLICE, "a", tree, head, w.base, episode=episode,
                              rounds=1, spec_version=spec_version)
        for path, data in pass_files(SLICE, "a", tree, head, w.base, episode=episode,
                                     spec_version=spec_version).items():
            if path != layout.score_path(SLICE, "a", 1):
                files[path] = data
                continue
            score = yamlio.loads(data, path)
            score["score"] = 2  # score 1 refused episode 1's claim
            files[layout.score_path(SLICE, "a", 2)] = yamlio.dumps(score)
        ledger.append(files, "a: episode 2 passes")
        take_lease(ledger, "main", "integrator")
    _push(w, "leap/ledger")
    merge = git("commit-tree", tree, "-p", w.base, "-p", head, "-m", MERGE_A, cwd=w.work)
    return w.push(f"{merge}:refs/heads/main")


def test_a_resumed_episodes_round_on_an_earlier_findings_red_is_taken(fresh_world: World
                                                                       ) -> None:
    """The finding's red is the test author's red test, no round of episode 2 (before, it
    counted as one without its receipt trailers, L6, and the push was refused)."""
    w = fresh_world
    _resumed(w)
    head = commit(w.work, {"src/a.py": "A = 20\n"}, round_message("a: episode 2", 1))
    pushed = w.push(BALL_A)
    assert pushed.returncode == 0, pushed.stderr
    assert remote_refs(w.bare)[f"refs/heads/{BALL_A}"] == head


def test_a_resumed_episodes_round_cannot_edit_an_earlier_findings_test(fresh_world: World
                                                                       ) -> None:
    """The finding's test stays frozen for episode 2's rounds (T7.6, T9: never weaken it)."""
    w = fresh_world
    finding = _resumed(w)
    head = commit(w.work, {"src/a.py": "A = 20\n", FINDING_TEST: "assert True\n"},
                  round_message("a: episode 2, test weakened", 1))
    before = remote_refs(w.bare)
    refused(w, w.push(BALL_A), before, "T7.1", head[:12], FINDING_TEST,
            f"a frozen test file of the red commit {finding[:12]} was edited")


def test_a_resumed_episodes_pass_lands_on_the_spine_holding_the_findings_red(
        fresh_world: World) -> None:
    """The spine judges the candidate's history as its branch does: the finding's red of
    episode 1 is a red test, which the candidate holds (T7.6, ``unheld_reds``)."""
    w = fresh_world
    _resumed(w)
    head = commit(w.work, {"src/a.py": "A = 20\n"}, round_message("a: episode 2", 1, 1))
    _push(w, BALL_A)
    git("checkout", "-q", "main", cwd=w.work)
    landed = _merge(w, head, 2, 1)
    assert landed.returncode == 0, landed.stderr


def test_a_fresh_throw_after_a_refuse_is_not_asked_for_the_earlier_findings_red(
        fresh_world: World) -> None:
    """Episode 1 is refused (-1) after its finding's red; the ball is respecced (same scope)
    and thrown afresh on the same base, naming resumed_from 1 as `leap throw` writes it
    (L3). Its new branch starts from the contract red, beside the finding's red: the spine
    takes its pass without that red."""
    w = fresh_world
    red, _ = _episode_one(w)
    refused_round = commit(w.work, {"src/a.py": "A = 0\n"}, round_message("a 2", 2, -1))
    w.append(dict([w.receipt("a", 2, -1, claim=False, commit=refused_round)]), "a: -1")
    _push(w, "leap/ledger", BALL_A)
    w.append(respec_record(w, "a", 2, ()), "a: respecced")
    _throw_two(w, 2)
    git("checkout", "-q", "-B", "fresh", red, cwd=w.work)
    head = commit(w.work, {"src/a.py": "A = 10  # afresh\n"}, round_message("a: afresh", 1, 1))
    git("checkout", "-q", "main", cwd=w.work)
    landed = _merge(w, head, 2, 2)
    assert landed.returncode == 0, landed.stderr


def _thrown_afresh(w: World) -> tuple[str, str]:
    """Episode 1 left at its finding's red (round 2 refused without a commit), respecced,
    and thrown afresh on the same base: (its contract red, the finding's red)."""
    red, finding = _episode_one(w)
    w.append(dict([w.receipt("a", 2, -1, claim=False)]), "a: -1, no commit")
    w.append(respec_record(w, "a", 2, ()), "a: respecced")
    _push(w, "leap/ledger")
    _throw_two(w, 2)
    return red, finding


def test_a_fresh_throw_replaces_a_branch_left_at_its_findings_red(fresh_world: World
                                                                  ) -> None:
    """L3, L6 (``rules.episodes.drops_branch``): episode 1's branch was left at its
    finding's red (the next round was refused without a commit: no receipt names a commit
    above the red); thrown afresh on the same base, its new branch replaces that one. A
    red's commit is recorded work, like a receipt's (blind review: before, only receipts'
    commits and the base were, and the fresh branch could never be pushed)."""
    w = fresh_world
    red, finding = _thrown_afresh(w)
    assert remote_refs(w.bare)[f"refs/heads/{BALL_A}"] == finding
    git("checkout", "-q", "-B", BALL_A, red, cwd=w.work)
    head = commit(w.work, {"src/a.py": "A = 10  # afresh\n"}, round_message("a: afresh", 1, 1))
    git("checkout", "-q", "main", cwd=w.work)
    pushed = w.push(f"+{BALL_A}")
    assert pushed.returncode == 0, pushed.stderr
    assert remote_refs(w.bare)[f"refs/heads/{BALL_A}"] == head


def test_bringing_a_ball_home_never_puts_an_episode_a_fresh_throw_dropped_back(
    fresh_world: World,
) -> None:
    """L3, L6: thrown afresh on the same base, the ball's branch here starts at the base,
    while the remote still holds episode 1's branch (its finding's red) until the fresh
    branch is published. Bringing the ball home then (`leap run --remote`'s look, `leap
    throw --remote`'s take-home, a score) fast-forwarded the fresh branch onto episode 1's
    tip, and the publish that followed saw nothing to push (blind review of issue 13). The
    dropped tip is kept out; rounds pushed on the fresh branch still come home. The fresh
    branch starts at the contract red, as `leap throw` makes it."""
    from leapgit.ledger.workspace import open_workspace
    from leapgit.loop import remote as rm

    w = fresh_world
    red, finding = _thrown_afresh(w)
    git("checkout", "-q", "main", cwd=w.work)
    git("update-ref", f"refs/heads/{BALL_A}", red, cwd=w.work)  # the fresh branch
    ws = open_workspace(w.work)
    rm.sync_with_balls(ws, "origin", push=False)
    assert rm.bring_home(ws, "origin", BALL_A) == red
    assert git("rev-parse", BALL_A, cwd=w.work) == red
    # a round of the fresh episode, pushed from elsewhere: it comes home
    git("checkout", "-q", "-B", "elsewhere", red, cwd=w.work)
    head = commit(w.work, {"src/a.py": "A = 10  # afresh\n"}, round_message("a: afresh", 1, 1))
    git("checkout", "-q", "main", cwd=w.work)
    pushed = w.push(f"+{head}:refs/heads/{BALL_A}")
    assert pushed.returncode == 0, pushed.stderr
    rm.sync_with_balls(ws, "origin", push=False)
    assert rm.bring_home(ws, "origin", BALL_A) == head
    assert git("rev-parse", BALL_A, cwd=w.work) == head
