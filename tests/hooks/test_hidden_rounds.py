"""T7.1, L6: the rounds a red must come before are this ball's own. A ball's red written on
a spine where another slice landed (its balls' rounds merged in) sits above rounds that
name the same ball id in that other slice: they are not this ball's rounds, and its red is
not refused for them (``rules.balls.hidden_rounds``, asked by the server's ``_red_first``).
A round naming no slice or this one still counts."""

from __future__ import annotations

from dulwich.objects import Commit

from leapgit.rules.balls import Rounds, hidden_rounds


def _commit(message: str) -> Commit:
    commit = Commit()
    commit.tree = b"4b825dc642cb6eb9a060e54bf8d69288fbee4904"
    commit.author = commit.committer = b"T <t@example.invalid>"
    commit.author_time = commit.commit_time = 1_700_000_000
    commit.author_timezone = commit.commit_timezone = 0
    commit.message = message.encode()
    return commit


def test_a_round_of_a_ball_of_the_same_name_in_another_slice_is_not_this_balls() -> None:
    other = _commit("leap: round 1 of s1/a (pass)\n\nLeap-Slice: s1\nLeap-Ball: a\n"
                    "Leap-Round: 1\nLeap-Outcome: 1\n")
    mine = _commit("leap: round 1 of s2/a (pass)\n\nLeap-Slice: s2\nLeap-Ball: a\n"
                   "Leap-Round: 1\nLeap-Outcome: 1\n")
    bare = _commit("a builder's own commit\n\nLeap-Round: 2\nLeap-Outcome: 0\n")
    found = hidden_rounds([other, mine, bare], Rounds(), "a", "s2")
    assert [sha for sha, _ in found] == [mine.id.decode(), bare.id.decode()], found
    # without a slice to tell them apart, every round naming the ball counts, as before
    assert len(hidden_rounds([other, mine, bare], Rounds(), "a")) == 3
