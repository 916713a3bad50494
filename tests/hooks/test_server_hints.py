"""Every hint leads on, the server's too: a refusal of `pre-receive` that names a command is
a promise. Each test pushes through the real server (a bare repository with `leap hooks
install --server` behind `git daemon`), reads the refusal, runs exactly the `leap ...`
command(s) it names, pushes again as before, and shows the push lands."""

from __future__ import annotations

import re
from pathlib import Path

from tests.hooks.test_stored_state import LEDGER, SPINE, passed_merge
from tests.hooks.test_sync import clone, write_slices
from tests.hooks.world import World, remote_refs, run_git
from tests.support import git, hinted_leap, leap


def _line(stderr: str, words: str) -> str:
    found = [line for line in stderr.splitlines() if words in line]
    assert found, stderr
    return found[0]


def _run_hint(line: str, cwd: Path) -> list[list[str]]:
    """Run every `leap ...` command ``line`` names, exactly as printed."""
    hinted = hinted_leap(line)
    assert hinted, line
    for words in hinted:
        res = leap(*words, cwd=cwd)
        assert res.code == 0, (words, res)
    return hinted


def test_the_ledger_first_note_leads_on_through_leap_sync(fresh_world: World) -> None:
    """A clone pushes its proving ledger and the spine merge it proves in one `git push`:
    the spine is judged against the ledger the server stores, and refused; the note says
    "push the ledger first (`leap sync`), then these refs". Exactly `leap sync`, then a
    push of the refs the note names: the spine lands. (`leap sync` replays the clone's
    ledger commits, so a sha pushed before may no longer be its tip: the refs are pushed by
    name, as a user does.)"""
    w = fresh_world
    forged = passed_merge(w)
    git("checkout", "-q", "--detach", cwd=w.work)
    git("branch", "-f", "main", forged.merge, cwd=w.work)
    before = remote_refs(w.bare)
    both = w.push("leap/ledger", "main")
    assert both.returncode != 0, both.stderr
    assert remote_refs(w.bare) == before
    note = _line(both.stderr, "push the ledger first")
    named = re.search(r"note: (\S+): judged against the ledger the server stores", note)
    assert named is not None and named.group(1) == SPINE, note
    assert "then these refs" in note, note
    assert _run_hint(note, w.work) == [["sync"]]
    assert remote_refs(w.bare)[LEDGER] == w.tip("leap/ledger") != before[LEDGER]  # progress
    again = w.push(named.group(1))
    assert again.returncode == 0, again.stderr
    assert remote_refs(w.bare)[SPINE] == forged.merge


def test_a_merge_commit_on_the_ledger_leads_on_through_leap_sync(fresh_world: World
                                                                 ) -> None:
    """A clone that merged the remote's ledger into its own by hand (`git pull`, a merge
    commit) and pushed it is refused: the ledger stays linear, and the hint names `leap
    sync`. Exactly that replays the clone's records on the remote's ledger; the same
    `git push` then holds (nothing left to push) and both clones' records are on a linear
    ledger."""
    w = fresh_world
    one, two = clone(w, "one"), clone(w, "two")
    write_slices(w, one, "one", 1)
    assert leap("sync", cwd=one).code == 0
    write_slices(w, two, "two", 1)
    git("checkout", "-q", "leap/ledger", cwd=two)
    pulled = run_git("pull", "-q", "--no-rebase", "--no-edit", "origin", "leap/ledger",
                     cwd=two)
    assert pulled.returncode == 0, pulled.stderr
    git("checkout", "-q", "main", cwd=two)
    assert git("rev-list", "--merges", "leap/ledger", cwd=two)  # a merge commit, by hand
    before = remote_refs(w.bare)
    pushed = run_git("push", "origin", "leap/ledger", cwd=two)
    assert pushed.returncode != 0, pushed.stderr
    assert remote_refs(w.bare) == before
    line = _line(pushed.stderr, "a merge commit on the ledger")
    assert "[L8]" in line and "replay your records on it with `leap sync`" in line, line
    assert _run_hint(line, two) == [["sync"]]
    again = run_git("push", "origin", "leap/ledger", cwd=two)
    assert again.returncode == 0, again.stderr
    files = git("ls-tree", "-r", "--name-only", "leap/ledger", "slices", cwd=w.bare).split()
    assert {f.split("/")[1] for f in files} >= {"one-0", "two-0"}, files
    assert git("rev-list", "--merges", "leap/ledger", cwd=w.bare) == ""
