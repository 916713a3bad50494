"""Issue 18 F7: a ledger writer killed (SIGKILL) between the reflog append and the ref's
rename (dulwich writes the reflog line while it holds the ref's lock, then renames the lock
into place) leaves a reflog line for a move that never happened. `leap audit` took it for
a rewrite of the ledger ("ledger-history-kept", L8) for good. The audit must not count
that line, and the next write's crash recovery leaves the reflog as git would have it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from leapgit.ledger import layout
from leapgit.records import yamlio
from leapgit.records.types import ABSENT, BallRecord, SliceRecord, StampedScope
from tests.support import git, leap, make_repo

REF = "refs/heads/leap/ledger"
# The real writer, killed at the one point between the two steps: right after dulwich's
# logger appended the reflog line, before it renames the ref's lock into place.
DIE_AFTER_REFLOG = textwrap.dedent("""\
    import json, os, signal, sys
    from leapgit.ledger import repo
    from leapgit.ledger.store import Ledger

    line = repo.PlainRepo._write_reflog
    def then_die(self, *args):
        line(self, *args)
        os.kill(os.getpid(), signal.SIGKILL)
    repo.PlainRepo._write_reflog = then_die
    with Ledger(sys.argv[1]) as ledger:
        records = {k: v.encode() for k, v in json.loads(sys.stdin.read()).items()}
        ledger.append(records, "cut slice " + sys.argv[2])
    """)


def cut(name: str, base: str) -> dict[str, bytes]:
    """A whole cut (L1: the slice record with each ball's first spec), as `leap slice cut`
    writes it, each ball scoped to a new file."""
    balls = ("x", "y")
    rec = SliceRecord(slice=name, spine="integrator", base=base, balls=balls, waves=(balls,),
                      cut_at="2024-01-01T00:00:00Z")
    out = {layout.slice_path(name): yamlio.dumps(rec.to_dict())}
    for ball in balls:
        spec = BallRecord(name, ball, 1, "g", "s", (StampedScope(f"{name}/{ball}.py", ABSENT),),
                          "true", "restore-scope", recorded_at="2024-01-01T00:00:00Z")
        out[layout.ball_path(name, ball)] = yamlio.dumps(spec.to_dict())
    return out


def reflog(root: Path) -> list[tuple[str, str]]:
    text = (root / ".git" / "logs" / REF).read_text()
    return [(line.split()[0], line.split()[1]) for line in text.splitlines() if line]


def history_kept(root: Path) -> dict[str, object]:
    res = leap("audit", "--json", cwd=root)
    report = json.loads(res.out)
    found = [v for v in report["violations"] if v["check"] == "ledger-history-kept"]
    return {"code": res.code, "violations": found}


def test_a_writer_killed_between_reflog_and_ref_leaves_no_false_rewrite(tmp_path: Path
                                                                       ) -> None:
    root = make_repo(tmp_path / "repo", {"f": "x\n"})
    assert leap("init", cwd=root).code == 0
    base = git("rev-parse", "main", cwd=root)
    tip = git("rev-parse", REF, cwd=root)
    lost = json.dumps({k: v.decode() for k, v in cut("lost", base).items()}).encode()
    killed = subprocess.run([sys.executable, "-c", DIE_AFTER_REFLOG, str(root / ".git"),
                             "lost"], input=lost, capture_output=True)
    assert killed.returncode == -9, killed.stderr
    # the crash is real: a reflog line moves the ref to a commit it never held
    old, phantom = reflog(root)[-1]
    assert old == tip and phantom != tip
    assert git("rev-parse", REF, cwd=root) == tip
    assert history_kept(root) == {"code": 0, "violations": []}
    # the next write recovers the crash: the reflog holds only moves that happened
    from leapgit.ledger.store import Ledger

    with Ledger(root / ".git") as ledger:
        written = ledger.append(cut("kept", base), "cut slice kept")
    moves = reflog(root)
    assert phantom not in {new for _, new in moves}
    assert all(moves[i][1] == moves[i + 1][0] for i in range(len(moves) - 1)), moves
    assert moves[-1][1] == written.commit
    assert history_kept(root) == {"code": 0, "violations": []}
    assert git("reflog", "show", "--format=%H", REF, cwd=root).split()[0] == written.commit


def test_a_real_rewrite_of_the_ledger_still_fails_the_audit(tmp_path: Path) -> None:
    """The audit skips only a line whose move never happened: a ref that really held a
    record and was moved back (its reflog says so, line after line) is a rewrite (L8)."""
    root = make_repo(tmp_path / "repo", {"f": "x\n"})
    assert leap("init", cwd=root).code == 0
    base = git("rev-parse", "main", cwd=root)
    start = git("rev-parse", REF, cwd=root)
    from leapgit.ledger.store import Ledger

    records = cut("dropped", base)
    with Ledger(root / ".git") as ledger:
        held = ledger.append(records, "cut slice dropped").commit
    git("update-ref", "-m", "rewrite", REF, start, held, cwd=root)
    found = history_kept(root)
    assert found["code"] == 1
    assert sorted((v["subject"], v["commit"]) for v in found["violations"]) == \
        sorted((p, held) for p in records), found  # each record the rewrite dropped
