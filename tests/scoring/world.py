"""A real leapgit project for scoring tests: a bare remote with the server hook behind
`git daemon` on 127.0.0.1, a clone with leapgit configured (a scripted builder that is a
real process, a scripted juror server on loopback), and a three-ball slice with
dependencies: ops; fmt and cli on ops."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from leapgit.records import yamlio
from tests.support import IDENTITY, GitDaemon, Result, git, leap, make_repo

SLICE = "calc"
BUILDER_ID = "model=scripted-builder,family=demo,session=builder-1"
FILES = {
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a + b\n",
    "calc/fmt.py": "def show(x):\n    return str(x)\n",
    "calc/cli.py": "from calc.ops import add\n\n\ndef main():\n    return add(1, 2)\n",
    "tests/__init__.py": "",
    "tests/test_ops.py": textwrap.dedent("""\
        import unittest

        from calc.ops import add


        class T(unittest.TestCase):
            def test_add(self):
                self.assertEqual(add(1, 2), 3)
        """),
}
TESTS = "python -m unittest -q"


def ball_yaml(ball: str, scope: list[str], test: str, deps: tuple[str, ...] = (),
              extra: str = "") -> str:
    deps_line = f"\n    depends_on: [{', '.join(deps)}]" if deps else ""
    return (f"  - id: {ball}\n    goal: {ball} works\n    spec: make {ball} work\n"
            f"    scope: [{', '.join(scope)}]\n"
            f"    proof: python -m unittest -q tests.{test}\n"
            f"    tests: {TESTS}\n    rollback: restore-scope{deps_line}\n{extra}")


SLICE_DRAFT = (f"slice: {SLICE}\nspine: integrator\ndescription: subtraction, shown and "
               "used\nballs:\n"
               + ball_yaml("ops", ["calc/ops.py", "tests/test_sub.py"], "test_sub")
               + ball_yaml("fmt", ["calc/fmt.py", "tests/test_fmt.py"], "test_fmt", ("ops",))
               + ball_yaml("cli", ["calc/cli.py", "tests/test_cli.py"], "test_cli", ("ops",)))

RED_TESTS = {
    "ops": ("tests/test_sub.py", "import unittest\n\nfrom calc import ops\n\n\n"
            "class T(unittest.TestCase):\n    def test_sub(self):\n"
            "        self.assertEqual(ops.sub(3, 1), 2)\n"),
    "fmt": ("tests/test_fmt.py", "import unittest\n\nfrom calc.fmt import show\n\n\n"
            "class T(unittest.TestCase):\n    def test_show(self):\n"
            "        self.assertEqual(show(2), '= 2')\n"),
    "cli": ("tests/test_cli.py", "import unittest\n\nfrom calc import cli\n\n\n"
            "class T(unittest.TestCase):\n    def test_version(self):\n"
            "        self.assertEqual(cli.version(), '1')\n"),
}

# A real builder process: what it writes is chosen by the ball and $LEAP_MODE_<ball>.
BUILDER = textwrap.dedent("""\
    import json, os, pathlib, sys
    ball = os.environ["LEAP_BALL"]
    plan = pathlib.Path(sys.argv[0]).with_name("plan.json")
    files = json.loads(plan.read_text()).get(ball) if plan.exists() else None
    mode = os.environ.get("LEAP_MODE_" + ball.upper(), "honest")
    def put(path, text):
        p = pathlib.Path(path); p.parent.mkdir(parents=True, exist_ok=True); p.write_text(text)
    if files:
        for path, text in files.items():
            put(path, text)
    elif ball == "ops":
        put("calc/ops.py", "def add(a, b):\\n    return a + b\\n\\n\\ndef sub(a, b):\\n"
            "    return a - b\\n")
    elif ball == "fmt":
        put("calc/fmt.py", "def show(x):\\n    return f'= {x}'\\n")
    elif ball == "cli":
        put("calc/cli.py", "from calc.ops import add\\n\\n\\ndef main():\\n"
            "    return add(1, 2)\\n\\n\\ndef version():\\n    return '1'\\n")
    if mode == "edit-test":
        put("tests/test_sub.py", "def test_nothing():\\n    pass\\n")
    pathlib.Path(os.environ["LEAP_REPORT"]).write_text("outcome: 1\\nevidence: built\\n")
    """)


def commit_files(root: Path, parent: str, files: Mapping[str, str], message: str) -> str:
    """A commit of ``files`` on ``parent`` made with plumbing: no checkout is touched."""
    index = root / ".git" / "leap-test.index"
    env = {**os.environ, **IDENTITY, "GIT_INDEX_FILE": str(index)}
    run = lambda *a, **k: subprocess.run(["git", *a], cwd=root, env=env, check=True,  # noqa: E731
                                         capture_output=True, **k).stdout.decode().strip()
    run("read-tree", parent)
    for path, text in files.items():
        blob = run("hash-object", "-w", "--stdin", input=text.encode())
        run("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
    tree = run("write-tree")
    index.unlink(missing_ok=True)
    return run("commit-tree", tree, "-p", parent, "-m", message)


@dataclass
class Project:
    base_dir: Path
    bare: Path
    work: Path
    daemon: GitDaemon
    juror_url: str
    base: str
    env: dict[str, str] = field(default_factory=dict)

    def leap(self, *args: str, env: Mapping[str, str] | None = None) -> Result:
        return leap(*args, cwd=self.work, env={**self.env, **(env or {})}, timeout=300)

    def tip(self, rev: str) -> str:
        return git("rev-parse", rev, cwd=self.work)

    def remote_tip(self, ref: str) -> str | None:
        out = git("for-each-ref", "--format=%(objectname)", ref, cwd=self.bare)
        return out or None

    def worktree(self, ball: str, slice_id: str = SLICE) -> Path:
        return self.work.parent / "work.leap-worktrees" / slice_id / ball

    def red(self, ball: str, slice_id: str = SLICE, test: tuple[str, str] | None = None
            ) -> Result:
        path, text = test or RED_TESTS[ball]
        sha = commit_files(self.work, self.red_base(ball, slice_id), {path: text},
                           f"red: {ball}")
        return self.leap("red", slice_id, ball, sha)

    def red_base(self, ball: str, slice_id: str = SLICE) -> str:
        """The commit the ball's red is built on, as `leap ball base` names it (L5: a
        dependent ball's stack base); the slice's base when it names none yet."""
        res = self.leap("ball", "base", slice_id, ball)
        return res.out.split()[0] if res.code == 0 else self.base


def config(juror_url: str, builder: str, tests_timeout: float = 60) -> bytes:
    return yamlio.dumps({
        "version": 1, "spine": "main", "ledger_ref": "refs/heads/leap/ledger",
        "round_limit": 4, "ball_branch_prefix": "leap/ball",
        "builder": {"command": builder, "timeout": 60, "identity": BUILDER_ID},
        "tribunal": {"timeout": 10, "test_timeout": tests_timeout, "rungs": [{
            "id": "scripted", "provider": "openai", "model": "scripted-juror",
            "endpoint": juror_url, "family": "scripted", "cost": 0,
            "tiers": ["generalist", "operator_safety", "deep_state", "fast_structural"],
            "context_tokens": 32000}]},
    })


def build_project(base_dir: Path, daemon: GitDaemon, juror_url: str,
                  draft: str = SLICE_DRAFT, files: Mapping[str, str] | None = None,
                  plan: Mapping[str, Mapping[str, str]] | None = None,
                  committed: Mapping[str, object] | None = None) -> Project:
    """``committed``: config keys the project sets and commits to the spine before its
    first push (the server judges by the spine's config: a round_limit, say)."""
    bare = base_dir / "origin.git"
    git("init", "-q", "--bare", "-b", "main", str(bare), cwd=base_dir)
    res = leap("hooks", "install", "--server", cwd=bare)
    assert res.code == 0, res
    work = make_repo(base_dir / "work", {**FILES, **(files or {})})
    (base_dir / "builder.py").write_text(BUILDER)
    if plan:
        import json

        (base_dir / "plan.json").write_text(json.dumps(plan))
    res = leap("init", cwd=work)
    assert res.code == 0, res
    (work / ".leap" / "config.yaml").write_bytes(
        config(juror_url, f"{sys.executable} {base_dir / 'builder.py'}"))
    (work / ".git" / "info" / "exclude").write_text(".leap/\n")
    if committed is not None:
        path = work / ".leap" / "config.yaml"
        path.write_bytes(yamlio.dumps({**yamlio.loads(path.read_bytes(), str(path)),
                                       **committed}))
        (work / ".git" / "info" / "exclude").write_text(".leap/*\n!.leap/config.yaml\n")
        git("add", ".leap/config.yaml", cwd=work)
        git("commit", "-q", "-m", "leap config", cwd=work)
    base = git("rev-parse", "HEAD", cwd=work)
    for i, text in enumerate(draft.split("\n---\n")):
        (base_dir / f"slice{i}.yaml").write_text(text)
        res = leap("slice", "cut", str(base_dir / f"slice{i}.yaml"), cwd=work)
        assert res.code == 0, res
    url = daemon.url(str(bare.relative_to(daemon.base)))
    git("remote", "add", "origin", url, cwd=work)
    git("push", "-q", "-u", "origin", "main", "leap/ledger", cwd=work)
    return Project(base_dir, bare, work, daemon, juror_url, base)
