"""Red team: a commit's ``encoding`` header. git re-encodes a message from the encoding its
header names before any reader sees it (`git log`, `git log --grep`, `--format=%B`,
`%(trailers)`, and so `git interpret-trailers` on it, and `leap audit`'s graph), while the
rules parse the raw bytes. With ``encoding IBM037`` (EBCDIC) the ASCII trailers the rules
read are noise to git, and EBCDIC bytes the rules read as noise are git's trailers: one
merge names ball a to the server and ball b to every git reader. A message is read one way
only when its commit names no encoding but UTF-8 (``rules.commits.check_message``)."""

from __future__ import annotations

import pytest

from leapgit.records.trailers import parse
from tests.hooks.test_dividers import interpret, log_trailers, passed_merge
from tests.hooks.test_server_rules import refused
from tests.hooks.world import SLICE, World, commit, forge_ledger_commit, remote_refs, round_message
from tests.support import git

BALL_A = f"leap/ball/{SLICE}/a"
# what the rules read (ASCII; a Signed-off-by lets the EBCDIC tail sit in the block)
RULES = (f"integrate {SLICE}/a\n\nLeap-Slice: {SLICE}\nLeap-Ball: a\n"
         "Signed-off-by: m <m@example.invalid>\n").encode()
# what git reads once it decoded the message from IBM037
GITS = f"\n\nintegrate {SLICE}/b\n\nLeap-Slice: {SLICE}\nLeap-Ball: b\n".encode("cp037")


def raw_commit(w: World, tree: str, parents: list[str], encoding: str, message: bytes) -> str:
    head = f"tree {tree}\n" + "".join(f"parent {p}\n" for p in parents) + \
        "author M <m@example.invalid> 1700000000 +0000\n" \
        "committer M <m@example.invalid> 1700000000 +0000\n" \
        f"encoding {encoding}\n\n"
    return git("hash-object", "-t", "commit", "-w", "--stdin", cwd=w.work,
               input=head.encode() + message)


def test_git_reads_an_ebcdic_message_as_another_ball(fresh_world: World) -> None:
    w = fresh_world
    sha = raw_commit(w, w.tip(f"{w.base}^{{tree}}"), [w.base], "IBM037", RULES + GITS)
    assert parse(RULES + GITS).ball == "a"
    assert "Leap-Ball: b" in log_trailers(w, sha) and "Leap-Ball: a" not in log_trailers(w, sha)
    assert "Leap-Ball: b" in interpret(w, sha)
    assert git("log", "-1", "--grep=Leap-Ball: b", "--format=%H", sha, cwd=w.work) == sha


def test_a_spine_merge_that_names_another_ball_to_git_is_refused(fresh_world: World) -> None:
    w = fresh_world
    passed_merge(w, "unused")  # ball a's round, full pass and the lease, on the server
    merge = raw_commit(w, w.tip(f"{BALL_A}^{{tree}}"), [w.base, w.tip(BALL_A)], "IBM037",
                       RULES + GITS)
    before = remote_refs(w.bare)
    refused(w, w.push(f"{merge}:refs/heads/main"), before, "L8",
            f"refs/heads/main {merge[:12]}", "encoding IBM037")


@pytest.mark.parametrize("encoding", ["UTF-8", "utf8"])
def test_a_merge_that_says_utf8_lands(fresh_world: World, encoding: str) -> None:
    w = fresh_world
    passed_merge(w, "unused")
    merge = raw_commit(w, w.tip(f"{BALL_A}^{{tree}}"), [w.base, w.tip(BALL_A)], encoding,
                       f"integrate {SLICE}/a\n\nLeap-Slice: {SLICE}\nLeap-Ball: a\n".encode())
    result = w.push(f"{merge}:refs/heads/main")
    assert result.returncode == 0, result.stderr


def test_a_round_or_ledger_commit_with_another_encoding_is_refused(fresh_world: World) -> None:
    w = fresh_world
    git("checkout", "-q", "-B", BALL_A, w.base, cwd=w.work)
    honest = commit(w.work, {"src/a.py": "A = 10\n"}, round_message("a: ten", 1, 1))
    rnd = raw_commit(w, w.tip(f"{honest}^{{tree}}"), [w.base], "ISO-8859-1",
                     round_message("a: ten", 1, 1).encode())
    result = w.push(f"{rnd}:refs/heads/{BALL_A}")
    assert result.returncode != 0, result.stderr
    assert f"[L6] refs/heads/{BALL_A} {rnd[:12]}" in result.stderr, result.stderr
    git("checkout", "-q", "main", cwd=w.work)
    path, data = w.receipt("a", 1, 0, claim=True)
    tip = forge_ledger_commit(w, {path: data})
    ledger = raw_commit(w, w.tip(f"{tip}^{{tree}}"), [w.tip(f"{tip}^")], "IBM037",
                        b"record\n")
    result = w.push(f"{ledger}:refs/heads/leap/ledger")
    assert result.returncode != 0, result.stderr
    assert f"[L8] refs/heads/leap/ledger {ledger[:12]}" in result.stderr, result.stderr
