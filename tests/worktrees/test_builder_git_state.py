"""A builder that leaves its worktree's git in a state git refuses to work in (an
`index.lock` it never removed, a HEAD on a branch that does not exist) ends its round at -1,
and the receipt says what git said: its `fatal:` line, never the advice git prints after it.
Before: "git add -A failed: remove the file manually to continue." (which file?) and
"git rev-parse HEAD failed: 'git <command> [<revision>...] -- [<file>...]'"."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from leapgit.ledger import query
from leapgit.ledger.store import Ledger
from tests.support import leap
from tests.worktrees.conftest import set_config

Builder = Callable[..., str]


def _evidence(repo: Path) -> str:
    with Ledger(repo / ".git") as ledger:
        (got,) = query.receipts(ledger.require(), "dia", "A", 1)
    assert got.outcome == -1, got
    return got.evidence


def test_a_left_index_lock_is_named(diamond: Path, builder: Builder) -> None:
    set_config(diamond, builder=builder(
        "import subprocess\n"
        "pathlib.Path('src/a.py').write_text('A = 2\\n')\n"
        "lock = subprocess.run(['git', 'rev-parse', '--git-path', 'index.lock'],"
        " capture_output=True, text=True).stdout.strip()\n"
        "pathlib.Path(lock).write_text('')\n"))
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond)
    assert r.code == 1, r
    evidence = _evidence(diamond)
    assert "fatal: Unable to create" in evidence and "index.lock': File exists" in evidence, \
        evidence
    assert "index.lock': File exists" in r.out, r


def test_a_head_on_no_branch_says_so(diamond: Path, builder: Builder) -> None:
    set_config(diamond, builder=builder(
        "import subprocess\n"
        "subprocess.run(['git', 'symbolic-ref', 'HEAD', 'refs/heads/nope'], check=True)\n"))
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond)
    assert r.code == 1, r
    evidence = _evidence(diamond)
    assert "fatal: ambiguous argument 'HEAD'" in evidence, evidence
    assert "git <command>" not in evidence, evidence
