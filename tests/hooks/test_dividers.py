"""Blind review r2 of issue 18: a commit message with a ``---`` divider line. leapgit's
trailer parser follows `git interpret-trailers` (the message ends at the divider), while
`git log --format=%(trailers)` reads on past it: the same merge names ball a to the server
and ball b to an auditor's `git log` (and to every reader built on %(trailers)). So a
message holding a divider line is refused on every ref the server judges, at the one
message check (``rules.commits.check_message``); a message without one reads the same to
both of git's readers."""

from __future__ import annotations

import pytest

from leapgit.ledger.leases import take_lease
from leapgit.records.trailers import has_divider, parse
from tests.hooks.world import SLICE, World, commit, forge_ledger_commit, remote_refs, round_message
from tests.support import git, write_pass

BALL_A = f"leap/ball/{SLICE}/a"
TWO_FACED = (f"integrate {SLICE}/a\n\nLeap-Slice: {SLICE}\nLeap-Ball: a\n\n---\n\n"
             f"Leap-Slice: {SLICE}\nLeap-Ball: b\n")
HONEST = f"integrate {SLICE}/a\n\nLeap-Slice: {SLICE}\nLeap-Ball: a\n"


def log_trailers(w: World, sha: str) -> str:
    return git("log", "-1", "--format=%(trailers:only,unfold)", sha, cwd=w.work)


def interpret(w: World, sha: str) -> str:
    body = git("log", "-1", "--format=%B", sha, cwd=w.work).encode()
    return git("interpret-trailers", "--parse", cwd=w.work, input=body)


def passed_merge(w: World, message: str) -> str:
    """Ball a's round and full pass, the lease, pushed; a merge of it with ``message``."""
    git("checkout", "-q", "-B", BALL_A, w.base, cwd=w.work)
    commit(w.work, {"src/a.py": "A = 10\n"}, round_message("a: ten", 1, 1))
    git("checkout", "-q", "main", cwd=w.work)
    with w.ledger() as ledger:
        write_pass(ledger, SLICE, "a", w.tip(f"{BALL_A}^{{tree}}"), w.tip(BALL_A), w.base)
        take_lease(ledger, "main", "integrator")
    pushed = w.push("leap/ledger")
    assert pushed.returncode == 0, pushed.stderr
    return git("commit-tree", w.tip(f"{BALL_A}^{{tree}}"), "-p", w.base, "-p", w.tip(BALL_A),
               "-m", message, cwd=w.work)


def test_git_reads_a_divider_message_two_ways(fresh_world: World) -> None:
    """The disagreement itself, on git's own readers, and which one the parser follows."""
    w = fresh_world
    sha = git("commit-tree", f"{w.base}^{{tree}}", "-m", TWO_FACED, cwd=w.work)
    assert "Leap-Ball: b" in log_trailers(w, sha)
    assert "Leap-Ball: a" in interpret(w, sha)
    assert parse(TWO_FACED).ball == "a" and has_divider(TWO_FACED)
    honest = git("commit-tree", f"{w.base}^{{tree}}", "-m", HONEST, cwd=w.work)
    assert log_trailers(w, honest) == interpret(w, honest) == \
        f"Leap-Slice: {SLICE}\nLeap-Ball: a"
    assert not has_divider(HONEST)


@pytest.mark.parametrize("line", ["---", "--- ", "---\tpatch"])
def test_a_spine_merge_whose_message_holds_a_divider_is_refused(fresh_world: World,
                                                                line: str) -> None:
    w = fresh_world
    merge = passed_merge(w, TWO_FACED.replace("\n---\n", f"\n{line}\n"))
    before = remote_refs(w.bare)
    result = w.push(f"{merge}:refs/heads/main")
    assert result.returncode != 0, result.stderr
    assert f"[L8] refs/heads/main {merge[:12]}" in result.stderr, result.stderr
    assert "a `---` divider line" in result.stderr, result.stderr
    assert remote_refs(w.bare) == before


def test_the_same_merge_without_a_divider_lands(fresh_world: World) -> None:
    w = fresh_world
    merge = passed_merge(w, HONEST)
    result = w.push(f"{merge}:refs/heads/main")
    assert result.returncode == 0, result.stderr
    assert remote_refs(w.bare)["refs/heads/main"] == merge


def test_a_round_whose_message_holds_a_divider_is_refused(fresh_world: World) -> None:
    w = fresh_world
    git("checkout", "-q", "-B", BALL_A, w.base, cwd=w.work)
    commit(w.work, {"src/a.py": "A = 10\n"},
           round_message("a: ten", 1, 1) + "\n---\n\nLeap-Round: 4\nLeap-Outcome: 1\n")
    before = remote_refs(w.bare)
    result = w.push(BALL_A)
    assert result.returncode != 0, result.stderr
    assert f"[L6] refs/heads/{BALL_A}" in result.stderr, result.stderr
    assert "a `---` divider line" in result.stderr, result.stderr
    assert remote_refs(w.bare) == before


def test_a_ledger_commit_whose_message_holds_a_divider_is_refused(fresh_world: World
                                                                  ) -> None:
    w = fresh_world
    path, data = w.receipt("b", 1, 0, claim=True)
    forge_ledger_commit(w, {path: data}, "round 1 of a\n\nLeap-Slice: s1\n\n---\n\n"
                        "Leap-Slice: s9")
    before = remote_refs(w.bare)
    result = w.push("leap/ledger")
    assert result.returncode != 0, result.stderr
    assert "[L8] refs/heads/leap/ledger" in result.stderr, result.stderr
    assert "a `---` divider line" in result.stderr, result.stderr
    assert remote_refs(w.bare) == before


def test_leapgit_never_writes_a_divider_line() -> None:
    from leapgit.records.trailers import format_message

    message = format_message("subject", [("Leap-Slice", "s1")], "a reason\n---\nmore\n--- x")
    assert not has_divider(message)
    assert parse(message).slice == "s1"
    titled = format_message("--- a subject", [("Leap-Slice", "s1")])
    assert not has_divider(titled) and parse(titled).slice == "s1"


def test_a_red_test_commit_whose_message_holds_a_divider_is_refused(fresh_world: World
                                                                    ) -> None:
    """The thrower's red test carries no receipt, but its trailers are read too (a
    ``Leap-Round`` there is a round hidden below the red, L6): one reading only."""
    from tests.hooks.test_server_rules import blob, red_record

    w = fresh_world
    git("checkout", "-q", "-B", BALL_A, w.base, cwd=w.work)
    red = commit(w.work, {"tests/test_a.py": "def test_a():\n    assert A == 10\n"},
                 "red: a\n\n---\n\nLeap-Round: 1\nLeap-Outcome: 1\n")
    w.append(red_record(w, "a", 1, red, {"tests/test_a.py": blob(w, red, "tests/test_a.py")}))
    commit(w.work, {"src/a.py": "A = 10\n"}, round_message("a: ten", 1, 1))
    git("checkout", "-q", "main", cwd=w.work)
    assert w.push("leap/ledger").returncode == 0
    before = remote_refs(w.bare)
    result = w.push(BALL_A)
    assert result.returncode != 0, result.stderr
    assert f"[L6] refs/heads/{BALL_A} {red[:12]}" in result.stderr, result.stderr
    assert "a `---` divider line" in result.stderr, result.stderr
    assert remote_refs(w.bare) == before


RESPELLED = f"integrate {SLICE}/a\n\nLeap-Slice: {SLICE}\nLeap-Ball: b\nleap-ball: a\n"


def test_git_log_and_the_parser_read_a_respelled_key_apart(fresh_world: World) -> None:
    """`leap-ball: a` after `Leap-Ball: b`: the parser (case-blind, as git) reads a, a
    reader of `git log` that matches the key as leapgit writes it (the audit's graph,
    `git log --grep "Leap-Ball: b"`) reads b."""
    from leapgit.records.trailers import respelled_keys

    w = fresh_world
    sha = git("commit-tree", f"{w.base}^{{tree}}", "-m", RESPELLED, cwd=w.work)
    shown = dict(line.split(": ", 1) for line in log_trailers(w, sha).splitlines())
    assert shown["Leap-Ball"] == "b" and parse(RESPELLED).ball == "a"
    assert respelled_keys(RESPELLED) == ["leap-ball"] and respelled_keys(HONEST) == []


def test_a_spine_merge_with_a_respelled_leap_key_is_refused(fresh_world: World) -> None:
    w = fresh_world
    merge = passed_merge(w, RESPELLED)
    before = remote_refs(w.bare)
    result = w.push(f"{merge}:refs/heads/main")
    assert result.returncode != 0, result.stderr
    assert f"[L8] refs/heads/main {merge[:12]}" in result.stderr, result.stderr
    assert "the trailer key leap-ball is a Leap-* key in another case" in result.stderr, \
        result.stderr
    assert remote_refs(w.bare) == before


def test_a_round_with_a_respelled_leap_key_is_refused(fresh_world: World) -> None:
    w = fresh_world
    git("checkout", "-q", "-B", BALL_A, w.base, cwd=w.work)
    commit(w.work, {"src/a.py": "A = 10\n"}, "a\n\nLeap-Round: 1\nleap-outcome: 1\n")
    before = remote_refs(w.bare)
    result = w.push(BALL_A)
    assert result.returncode != 0, result.stderr
    assert f"[L6] refs/heads/{BALL_A}" in result.stderr, result.stderr
    assert "leap-outcome is a Leap-* key in another case" in result.stderr, result.stderr
    assert remote_refs(w.bare) == before
