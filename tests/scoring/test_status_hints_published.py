"""Hints as `leap status` and `leap run` print them, each run exactly as printed (a blind
review of hints and operator consequence): in a slice published to workers, after a
respec, and with a remote whose name a shell reads."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

from tests.scoring.test_followed_hints import _world
from tests.scoring.tiny import PYTEST, SLICE, served
from tests.support import git, hinted_leap, leap, make_repo

# sub's builder writes a wrong `sub` (its frozen red fails): the score refuses the ball
WRONG = textwrap.dedent("""\
    import os, pathlib
    if os.environ["LEAP_BALL"] == "sub":
        pathlib.Path("pkg/calc.py").write_text(
            "def add(a, b):\\n    return a + b\\n\\n\\ndef sub(a, b):\\n    return a + b\\n")
    else:
        pathlib.Path("README.md").write_text("# tiny, documented\\n")
    pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 1\\nevidence: built\\n")
    """)


def _ball(status_json: str, ball: str) -> dict:
    [sl] = json.loads(status_json)["slices"]
    return next(b for wave in sl["waves"] for b in wave if b["ball"] == ball)


def test_ready_line_of_a_slice_published_to_workers_throws_it_to_the_workers(
        tmp_path: Path, scripted_url: str) -> None:
    """report._ball_lines: in a slice published to workers (`leap throw S --ball sub
    --remote origin`), the ready ball doc reads "ready to throw (L5): `leap throw tiny
    --ball doc` throws it; `leap run tiny --remote origin` ...". The first command, run as
    printed, throws doc into a worktree HERE, unpublished: no worker ever builds it, and
    on this thrower (no builder: that is why it publishes) the next `leap run tiny
    --remote origin` status names spends two rounds of doc failing to start a builder and
    ends its episode at 0 ("fix builder.command")."""
    repo = _world(tmp_path, scripted_url)
    served(tmp_path, repo)
    assert leap("throw", SLICE, "--ball", "sub", "--remote", "origin", cwd=repo).code == 0
    cfg = repo / ".leap" / "config.yaml"  # the thrower has no builder: workers build
    cfg.write_text(re.sub(r'  command: ".*builder\.py"', '  command: "no-such-builder"',
                          cfg.read_text()))
    shown = leap("status", cwd=repo).out
    [line] = [x for x in shown.splitlines() if "ready to throw" in x]
    throw = hinted_leap(line)[0]
    assert throw[:2] == ["throw", SLICE], line
    assert leap(*throw, cwd=repo).code == 0
    doc = _ball(leap("status", "--json", cwd=repo).out, "doc")
    assert doc["throw"]["published"], (
        f"`leap {' '.join(throw)}`, as status printed it in a slice published to workers, "
        f"threw doc here, for no worker: {doc['throw']}")


def test_status_of_a_refused_ball_respecced_names_what_goes_on(
        tmp_path: Path, scripted_url: str) -> None:
    """report._throw_detail / status._refused: a refused ball shows "next: repair the spec
    with `leap ball respec tiny sub FILE`, then `leap run tiny` throws it again". Once that
    respec is done, status shows nothing at all of what goes on (`_refused` leaves a
    respecced ball out, and `_ball_lines` has no line for a refused verdict), though `leap
    run` throws it ("respecced to version 2 after its refusal: a new episode"), and the
    README says: under a ball that is not done, status names what goes on with it."""
    repo = _world(tmp_path, scripted_url)
    (tmp_path / "builder.py").write_text(WRONG)
    assert leap("run", SLICE, cwd=repo).code == 1
    before = leap("status", cwd=repo).out
    [nxt] = [x for x in before.splitlines() if "next: repair the spec" in x]
    respec = hinted_leap(nxt)[0]
    spec = tmp_path / "v2.yaml"
    spec.write_text(f"goal: sub works\nspec: make sub subtract, a - b\n"
                    f"scope: [pkg/calc.py, tests/test_sub.py]\n"
                    f"proof: {PYTEST} tests/test_sub.py\ntests: {PYTEST} tests\n"
                    "rollback: restore-scope\n")
    assert leap(*[str(spec) if w == "FILE" else w for w in respec], cwd=repo).code == 0
    sub = _ball(leap("status", "--json", cwd=repo).out, "sub")
    assert any(f"leap run {SLICE}" in ln or f"leap throw {SLICE}" in ln
               for ln in sub["lines"]), (
        f"status names nothing that goes on for the respecced refused ball: {sub['lines']}")


def test_status_without_a_ledger_names_a_sync_the_shell_runs_as_printed(
        tmp_path: Path) -> None:
    """store.missing_hint (out of the diff, but the head of the chain the new `leap sync`
    refusal ends): a clone whose one remote is named `up$stream` (a name git takes) has no
    ledger; `leap status` names `leap sync up$stream`, unquoted: a shell runs `leap sync
    up` ('up' is no remote), while the new sync refusal quotes the same name."""
    import subprocess

    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    bare = tmp_path / "bare.git"
    git("init", "-q", "--bare", str(bare), cwd=tmp_path)
    git("remote", "add", "up$stream", str(bare), cwd=repo)
    said = leap("status", cwd=repo)
    [sync] = re.findall(r"`(leap sync [^`]*)`", said.err)
    import os
    import sys

    from tests.support import IDENTITY

    done = subprocess.run(sync.replace("leap", f"{sys.executable} -m leapgit", 1), shell=True,
                          cwd=repo, capture_output=True, text=True,
                          env={**os.environ, **IDENTITY})
    assert "holds no ledger" in done.stderr, (
        f"status names `{sync}`; run as printed: {done.stderr.strip()}")


def test_a_run_stopped_with_its_remote_out_of_reach_names_itself_quoted(
        tmp_path: Path, scripted_url: str) -> None:
    """drive.SliceRun (the RemoteUnavailable stop beside `_left`, and `_over`'s gave_up
    line, same text): "...; a hold; `leap run tiny --remote x$y` again once it answers".
    The remote's name goes in unquoted (every other `--remote R` hint quotes it): run as
    printed, a shell passes `x` and leap refuses a remote that does not exist."""
    import os
    import subprocess
    import sys

    from tests.support import IDENTITY

    repo = _world(tmp_path, scripted_url)
    git("remote", "add", "x$y", "git://127.0.0.1:9/r.git", cwd=repo)
    said = leap("run", SLICE, "--remote", "x$y", "--max-minutes", "0.01", cwd=repo)
    assert said.code == 3 and "out of reach" in said.err, said
    [run] = re.findall(r"`(leap run [^`]*)`", said.err)
    again = subprocess.run(run.replace("leap", f"{sys.executable} -m leapgit", 1) +
                           " --max-minutes 0.01", shell=True, cwd=repo, capture_output=True,
                           text=True, env={**os.environ, **IDENTITY}, timeout=120)
    assert "is not a remote" not in again.stderr, (
        f"`{run}` run as printed: {again.stderr.strip()}")
