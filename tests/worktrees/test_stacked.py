"""Stacked bases (issue 14 item 1, L5): a ball whose dependencies passed is thrown from the
slice's base with each dependency's passed candidate merged in, so its red test and its
builder see the code it depends on.

A realistic two-ball slice on a real remote (`git daemon` on 127.0.0.1, the server hook
installed): ``ops`` adds ``calc.ops.sub``; ``fmt`` depends on it and its red test calls
``sub``, which exists only in ops's candidate. Builders are a real shell script; jurors a
scripted OpenAI-compatible server on 127.0.0.1 that reads the envelope it is sent.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from leapgit.ledger import layout
from leapgit.ledger.store import Ledger
from leapgit.records import yamlio
from leapgit.records.types import ThrowRecord
from tests.hooks.world import run_git
from tests.scoring.world import Project, ball_yaml, build_project, commit_files, config
from tests.support import git
from tests.templates import Served
from tests.tribunal.jurors import LoopbackServer

if TYPE_CHECKING:
    from leapgit.records.types import StackEntry

SLICE = "calc"
DRAFT = (f"slice: {SLICE}\nspine: integrator\ndescription: subtraction, and a diff shown "
         "with it\nballs:\n"
         + ball_yaml("ops", ["calc/ops.py", "tests/test_sub.py"], "test_sub")
         + ball_yaml("fmt", ["calc/fmt.py", "tests/test_diff.py"], "test_diff", ("ops",)))
OPS_RED = ("tests/test_sub.py", "import unittest\n\nfrom calc import ops\n\n\n"
           "class T(unittest.TestCase):\n    def test_sub(self):\n"
           "        self.assertTrue(hasattr(ops, 'sub'), 'calc.ops has no sub')\n"
           "        self.assertEqual(ops.sub(3, 1), 2)\n")
# fmt's red imports what only ops's candidate holds: at the slice's base it cannot even load
FMT_RED = ("tests/test_diff.py", "import unittest\n\nfrom calc import fmt\nfrom calc.ops import "
           "sub\n\n\nclass T(unittest.TestCase):\n    def test_diff(self):\n"
           "        self.assertEqual(sub(3, 1), 2)\n"
           "        self.assertTrue(hasattr(fmt, 'show_diff'), 'calc.fmt has no show_diff')\n"
           "        self.assertEqual(fmt.show_diff(3, 1), '3 - 1 = 2')\n")
BUILDER = """\
#!/bin/sh
set -e
case "$LEAP_BALL" in
ops)
  printf 'def add(a, b):\\n    return a + b\\n\\n\\ndef sub(a, b):\\n    return a - b\\n' \\
    > calc/ops.py
  printf 'outcome: 1\\nevidence: sub added\\n' > "$LEAP_REPORT" ;;
fmt)
  # L5: the worktree is the stack base, which holds ops's candidate
  if ! grep -q 'def sub' calc/ops.py; then
    echo "fmt: no sub at $LEAP_BASE" >> "$SEEN"
    printf 'outcome: 0\\nevidence: calc.ops has no sub to build on\\n' > "$LEAP_REPORT"
    exit 0
  fi
  echo "fmt: sub at $LEAP_BASE" >> "$SEEN"
  printf 'from calc.ops import sub\\n\\n\\ndef show(x):\\n    return str(x)\\n\\n\\n' \\
    > calc/fmt.py
  printf 'def show_diff(a, b):\\n    return f"{a} - {b} = {sub(a, b)}"\\n' >> calc/fmt.py
  printf 'outcome: 1\\nevidence: show_diff built on sub\\n' > "$LEAP_REPORT" ;;
esac
"""

# --- a scripted juror that quotes the envelope it reads (a supported finding, T6, T9) ---

_LENS = re.compile(r"one lens: ([a-z_]+)\.")
_FILE = re.compile(r"^(?:=====|-----) (?:\S+ )?BEGIN FILE (\S+) [^\n]*\n([^\n]+)$", re.M)


def verdict(prompt: str) -> dict[str, Any]:
    lens = _LENS.search(prompt)
    quoted = next((m for m in _FILE.finditer(prompt)
                   if not m.group(2).startswith(("=====", "-----"))), None)
    finding = {"severity": "info", "file": quoted.group(1) if quoted else "",
               "claim": "scripted juror: the file reads as specified",
               "evidence": quoted.group(2) if quoted else ""}
    return {"verdict": "pass", "findings": [finding], "lens": lens.group(1) if lens else ""}


class _Juror(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        prompt = "\n".join(m.get("content", "") for m in body.get("messages", []))
        data = json.dumps({"choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": json.dumps(verdict(prompt))}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def juror_server() -> Iterator[str]:
    server = LoopbackServer(("127.0.0.1", 0), _Juror)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def juror_url() -> Iterator[str]:
    """One scripted juror for the run: the stacked worlds are built once and copied, and a
    copy's config names the juror its first build knew (test_restack copies them too)."""
    with juror_server() as url:
        yield url


# --- the worlds ---

def ok(p: Project, *args: str) -> str:
    res = p.leap(*args)
    assert res.code == 0, (args, res)
    return res.out


def ops_passed(folder: Path, served: Served, url: str) -> Project:
    """The slice cut and pushed; ops red, built by the shell builder and passed."""
    p = build_project(folder, served.daemon, url, DRAFT)
    (folder / "builder.sh").write_text(BUILDER)
    (p.work / ".leap" / "config.yaml").write_bytes(config(url, f"sh {folder / 'builder.sh'}"))
    p.env["SEEN"] = str(folder / "seen.txt")
    red = commit_files(p.work, p.base, {OPS_RED[0]: OPS_RED[1]}, "red: ops")
    ok(p, "red", SLICE, "ops", red)
    thrown = ok(p, "throw", SLICE, "--run")
    assert "not thrown: fmt: calc/fmt is waiting: dependency ops has not passed" in thrown
    ok(p, "score", SLICE, "ops")
    return p


def stack_of(p: Project) -> str:
    """`leap ball base` of fmt: the commit its red is built on (first line)."""
    return ok(p, "ball", "base", SLICE, "fmt").split()[0]


def fmt_thrown(p: Project, run: bool = True) -> str:
    """fmt's red recorded on its stack base, and fmt thrown (and built with ``run``)."""
    base = stack_of(p)
    red = commit_files(p.work, base, {FMT_RED[0]: FMT_RED[1]}, "red: fmt")
    ok(p, "red", SLICE, "fmt", red)
    ok(p, "throw", SLICE, *(["--run"] if run else []))
    return base


def fmt_passed(folder: Path, served: Served, url: str) -> Project:
    p = ops_passed(folder, served, url)
    fmt_thrown(p)
    ok(p, "score", SLICE, "fmt")
    return p


@pytest.fixture
def ops_world(served: Served, juror_url: str) -> Iterator[Project]:
    with served.world("stacked-ops-passed",
                      lambda folder: ops_passed(folder, served, juror_url)) as p:
        yield p


@pytest.fixture
def fmt_world(served: Served, juror_url: str) -> Iterator[Project]:
    with served.world("stacked-fmt-passed",
                      lambda folder: fmt_passed(folder, served, juror_url)) as p:
        yield p


def record(p: Project, path: str) -> dict[str, Any]:
    data: dict[str, Any] = yamlio.loads(
        git("show", f"refs/heads/leap/ledger:{path}", cwd=p.work).encode(), path)
    return data


def throw_of(p: Project, ball: str, episode: int = 1) -> ThrowRecord:
    return ThrowRecord.from_dict(record(p, layout.throw_path(SLICE, ball, episode)))


# --- the tests ---

def test_a_dependent_ball_builds_on_its_dependencys_candidate_and_lands(
        ops_world: Project) -> None:
    p = ops_world
    ops_commit, ops_tree = p.tip("leap/ball/calc/ops"), p.tip("leap/ball/calc/ops^{tree}")
    # before its dependency's candidate is under it, fmt's red cannot even import sub
    early = commit_files(p.work, p.base, {FMT_RED[0]: FMT_RED[1]}, "red on the slice base")
    refused = p.leap("red", SLICE, "fmt", early)
    assert refused.code == 1 and "does not add to the ball's base" in refused.err, refused
    assert f"`leap ball base {SLICE} fmt` names it" in refused.err

    # `leap status` names the command that prints the base to build the red on
    assert f"its failing test committed on its stack base (`leap ball base {SLICE} fmt`)" \
        in ok(p, "status", SLICE)
    first = p.leap("ball", "base", SLICE, "fmt")
    assert first.code == 0, first
    base = first.out.split()[0]
    assert f"+ ops: score 1, candidate {ops_tree[:12]} (commit {ops_commit[:12]})" in first.out
    assert stack_of(p) == base  # deterministic: the same inputs, the same commit
    assert p.tip(f"refs/leap/bases/{SLICE}/fmt") == base
    parents = git("show", "-s", "--format=%P", base, cwd=p.work).split()
    assert parents == [p.base, ops_commit]
    assert git("show", "-s", "--format=%an <%ae> %cn", base, cwd=p.work) == \
        "leapgit <leapgit@localhost> leapgit"
    assert git("show", f"{base}:calc/ops.py", cwd=p.work) == \
        git("show", f"{ops_commit}:calc/ops.py", cwd=p.work)

    from leapgit.records.types import StackEntry

    fmt_thrown(p)
    thrown = throw_of(p, "fmt")
    assert thrown.base == base
    assert thrown.stack == (StackEntry("ops", 1, ops_tree, ops_commit),)
    assert (p.base_dir / "seen.txt").read_text() == f"fmt: sub at {base}\n"
    scored = p.leap("score", SLICE, "fmt")
    assert scored.code == 0 and "score 1 of calc/fmt: 1 (pass)" in scored.out, scored
    fmt_score = record(p, layout.score_path(SLICE, "fmt", 1))
    assert fmt_score["base"] == base  # the source step compared against the stack
    assert sorted(t["path"] for t in fmt_score["source"]["touched"]) == ["calc/fmt.py",
                                                                         "tests/test_diff.py"]

    # the server takes the honest stacked ball branch (its parents are the slice's base
    # and ops's recorded pass), once its ledger holds the throw
    ok(p, "sync")
    pushed = run_git("push", "--no-verify", "origin", "leap/ball/calc/fmt", cwd=p.work)
    assert pushed.returncode == 0, pushed.stderr

    merged = p.leap("merge", SLICE)
    assert merged.code == 0 and "pushed to origin" in merged.out, merged
    tip = p.tip("main")
    assert p.remote_tip("refs/heads/main") == tip
    # one integration merge per ball, in dependency order; fmt's candidate is what landed
    seconds = git("log", "--first-parent", "--format=%P", f"{p.base}..main",
                  cwd=p.work).splitlines()
    assert [line.split()[1] for line in seconds] == [p.tip("leap/ball/calc/fmt"), ops_commit]
    fmt_tree = p.tip("leap/ball/calc/fmt^{tree}")
    assert fmt_score["candidate"] == fmt_tree
    for path in ("calc/fmt.py", "tests/test_diff.py", "calc/ops.py", "tests/test_sub.py"):
        assert git("rev-parse", f"main:{path}", cwd=p.work) == \
            git("rev-parse", f"{fmt_tree}:{path}", cwd=p.work)
    audit = p.leap("audit")
    assert audit.code == 0 and "all holds" in audit.out, audit


def test_merging_a_merged_slice_says_so_and_exits_0(fmt_world: Project) -> None:
    """Issue 14 item 11: `leap merge` of a slice already merged is no error."""
    p = fmt_world
    assert p.leap("merge", SLICE).code == 0
    tip, ledger = p.tip("main"), p.tip("leap/ledger")
    again = p.leap("merge", SLICE)
    assert again.code == 0, again
    assert again.out.strip() == (f"slice {SLICE} is already merged: every ball's pass is on "
                                 f"main, last at {tip[:12]} ({layout.merge_path(SLICE)}); "
                                 "nothing to do")
    assert (p.tip("main"), p.tip("leap/ledger")) == (tip, ledger)  # no lease, no record


def forged_base(p: Project, how: str) -> tuple[str, StackEntry]:
    """A stack base for fmt that is not the stack of ops's pass, and the entry its throw
    record claims: ``parent``: merged from a commit on ops's candidate that no pass records;
    ``bytes``: the right parents, with a byte of its own in ops's file."""
    from leapgit.records.types import StackEntry

    ops_commit, ops_tree = p.tip("leap/ball/calc/ops"), p.tip("leap/ball/calc/ops^{tree}")
    honest = StackEntry("ops", 1, ops_tree, ops_commit)
    evil = commit_files(p.work, ops_commit, {"calc/ops.py": "def sub(a, b):\n    return 0\n"},
                        "not a pass")
    if how == "parent":
        parents, tree = [p.base, evil], p.tip(f"{evil}^{{tree}}")
    else:
        parents, tree = [p.base, ops_commit], p.tip(f"{evil}^{{tree}}")
    args = [a for sha in parents for a in ("-p", sha)]
    return git("commit-tree", tree, *args, "-m", "a forged stack", cwd=p.work), honest


@pytest.mark.parametrize(("how", "why"), [
    ("parent", "is neither the slice's base"),
    ("bytes", "it changes calc/ops.py against the slice's base, with bytes no dependency's "
              "candidate has there")])
def test_a_forged_stack_base_is_refused_by_the_server(ops_world: Project, how: str,
                                                      why: str) -> None:
    p = ops_world
    base, claimed = forged_base(p, how)
    forged = ThrowRecord(SLICE, "fmt", 1, 1, base, "leap/ball/calc/fmt", "2024-01-01T00:00:00Z",
                         stack=(claimed,))
    with Ledger(p.work / ".git") as ledger:
        ledger.append({layout.throw_path(SLICE, "fmt", 1): yamlio.dumps(forged.to_dict())},
                      f"throw {SLICE}: fmt", [("Leap-Slice", SLICE), ("Leap-Ball", "fmt")])
    pushed = run_git("push", "--no-verify", "origin", "refs/heads/leap/ledger", cwd=p.work)
    assert pushed.returncode == 0, pushed.stderr  # a record names a base; the branch is judged
    red = commit_files(p.work, base, {FMT_RED[0]: FMT_RED[1]}, "red: fmt")
    pushed = run_git("push", "--no-verify", "origin", f"{red}:refs/heads/leap/ball/calc/fmt",
                     cwd=p.work)
    assert pushed.returncode != 0
    assert "[L5] refs/heads/leap/ball/calc/fmt" in pushed.stderr, pushed.stderr
    assert "is no stack of the passed candidates of its dependencies: " in pushed.stderr
    assert why in pushed.stderr, pushed.stderr
    assert p.remote_tip("refs/heads/leap/ball/calc/fmt") is None


def test_a_dependency_reopened_after_the_throw_holds_the_dependent(fmt_world: Project) -> None:
    p = fmt_world
    first_tree = p.tip("leap/ball/calc/ops^{tree}")
    wt = p.worktree("ops")
    target = wt / "calc" / "ops.py"
    passed_bytes = target.read_text()
    target.write_text(passed_bytes + "# one more byte\n")
    git("commit", "-qam", "ops: one more byte\n\nLeap-Round: 2\nLeap-Outcome: 1", cwd=wt)

    status = json.loads(ok(p, "status", SLICE, "--json"))
    fmt = next(b for w in status["slices"][0]["waves"] for b in w if b["ball"] == "fmt")
    assert (fmt["readiness"], fmt["by"]) == ("held", "ops")
    assert fmt["throw"]["stack"] == [{"ball": "ops", "score": 1, "candidate": first_tree,
                                      "commit": git("rev-parse", f"{fmt['throw']['base']}^2",
                                                    cwd=p.work)}]
    why = (f"its dependency ops was reopened (L8) after fmt was thrown on its candidate "
           f"{first_tree[:12]} (score 1)")
    assert f"held: {why}" in ok(p, "status", SLICE)
    thrown = p.leap("throw", SLICE, "--ball", "fmt")
    assert thrown.code == 3, thrown
    assert f"calc/fmt is held: {why} [L5]" in thrown.err
    assert f"`leap score {SLICE} ops`" in thrown.err

    # ops passes again with other bytes: fmt still stands on the old ones, nothing lands
    assert "score 2 of calc/ops: 1 (pass)" in ok(p, "score", SLICE, "ops")
    held = p.leap("merge", SLICE)
    assert held.code == 3, held
    assert f"fmt (held: {why})" in held.err and "nothing lands" in held.err
    # the way on is a restack of fmt on ops's new pass (tests/worktrees/test_restack.py)
    assert f"`leap red {SLICE} fmt --carry`, then `leap throw {SLICE} --ball fmt --run`" in \
        held.err, held
    assert p.tip("main") == p.base

    # or ops's branch holds its first candidate's bytes again, and a score of it
    target.write_text(passed_bytes)
    git("commit", "-qam", "ops: back to the passed bytes\n\nLeap-Round: 3\nLeap-Outcome: 1",
        cwd=wt)
    assert p.tip("leap/ball/calc/ops^{tree}") == first_tree
    assert "score 3 of calc/ops: 1 (pass)" in ok(p, "score", SLICE, "ops")
    status = json.loads(ok(p, "status", SLICE, "--json"))
    fmt = next(b for w in status["slices"][0]["waves"] for b in w if b["ball"] == "fmt")
    assert fmt["readiness"] == "passed"
    merged = p.leap("merge", SLICE)
    assert merged.code == 0, merged
    assert p.remote_tip("refs/heads/main") == p.tip("main") != p.base
