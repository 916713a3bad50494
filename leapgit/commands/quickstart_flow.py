"""The quickstart's protocol steps, after the cut: a shared bare remote with the server
hook, red first, throw to the scripted builder, score with scripted jurors, merge onto the
spine (the push is judged by the remote's pre-receive), audit, and the history in git."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from leapgit import git
from leapgit.commands import audit, merge, red, report, score, throw
from leapgit.commands.ball import base as ball_base
from leapgit.commands.quickstart_sample import (
    BUILDER_ID,
    DEMO_RUNGS,
    RED_TESTS,
    SAMPLE_BUILDER,
)
from leapgit.hookimpl.install import install
from leapgit.tribunal.demo import scripted_juror

Echo = Callable[[str], None]
Step = Callable[[Echo, str, str, list[str]], None]
SLICE = "calc-positions"


def commit_files(root: Path, parent: str, files: dict[str, str], message: str) -> str:
    """The thrower's red commit, made with plumbing on ``parent``: no checkout moves."""
    fd, index = tempfile.mkstemp(prefix="leap-quickstart-", suffix=".index")
    os.close(fd)
    env = {"GIT_INDEX_FILE": index}
    try:
        git.run(["read-tree", parent], root, env=env)
        for path, text in files.items():
            blob = git.run(["hash-object", "-w", "--stdin"], root,
                           input=text.encode()).stdout.decode().strip()
            git.run(["update-index", "--add", "--cacheinfo", f"100644,{blob},{path}"], root,
                    env=env)
        tree = git.run(["write-tree"], root, env=env).stdout.decode().strip()
    finally:
        Path(index).unlink(missing_ok=True)
    return git.run(["-c", "user.name=Thrower", "-c", "user.email=thrower@example.invalid",
                    "commit-tree", tree, "-p", parent, "-m", message], root
                   ).stdout.decode().strip()


def _configure(root: Path, url: str) -> None:
    script = root.parent / "builder.py"
    script.write_text(SAMPLE_BUILDER, encoding="utf-8")
    config = root / ".leap" / "config.yaml"
    text = config.read_text(encoding="utf-8").split("tribunal:")[0].replace(
        '  # command: my-agent --non-interactive --task "$LEAP_HANDOFF"',
        f"  command: {sys.executable} {script}\n  identity: {BUILDER_ID}")
    config.write_text(text + DEMO_RUNGS.format(url=url), encoding="utf-8")


def _remote(root: Path, echo: Echo, step: Step) -> Path:
    remote = root.parent / "calc-remote.git"
    git.run(["init", "-q", "--bare", "-b", "main", str(remote)], root.parent)
    install(remote, server=True)
    git.run(["remote", "add", "origin", str(remote)], root)
    git.run(["push", "-q", "-u", "origin", "main", "leap/ledger"], root)
    step(echo, "a shared bare remote with the server hook (pre-receive) installed",
         "git init -q --bare -b main ../calc-remote.git && (cd ../calc-remote.git && "
         "leap hooks install --server) && git remote add origin ../calc-remote.git && "
         "git push -q -u origin main leap/ledger", [f"remote {remote}"])
    return remote


def _red(root: Path, echo: Echo, step: Step, ball: str) -> None:
    # L5: a dependent ball's red is built on its stack base (`leap ball base`), which holds
    # its dependencies' passed candidates
    base = ball_base(SLICE, ball, root)[0].commit
    sha = commit_files(root, base, RED_TESTS[ball], f"red: the contract test of {ball}")
    step(echo, f"red first: the failing contract test of {ball}, recorded before the build",
         f"leap red {SLICE} {ball} {sha[:12]}", red.lines(red.red(SLICE, ball, sha, root)))


def _throw(root: Path, echo: Echo, step: Step, stream: Any, wave: int) -> None:
    thrown = throw.throw(SLICE, start=root)
    step(echo, f"throw wave {wave} to the scripted builder, each ball in its own worktree",
         f"leap throw {SLICE} --run", report.throw_lines(thrown.result))
    result = throw.drive_builders(thrown, 2, stream, live=False)  # progress lines as they come
    for line in report.run_lines(result):
        echo(f"  {line}")


def _score(root: Path, echo: Echo, step: Step, ball: str) -> None:
    said: list[str] = []
    result = score.score_ball(SLICE, ball, start=root, echo=said.append)
    lines = [ln for ln in said if ln.startswith(("tribunal ", "  pass ", "  refuse", "  hold"))]
    step(echo, f"score {ball}: source, metric, tests, blind tribunal, provenance (L7)",
         f"leap score {SLICE} {ball}", lines + score.lines(result))


def _refused_push(root: Path, echo: Echo, step: Step) -> None:
    git.run(["switch", "-q", "--detach", "main"], root)
    (root / "README.md").write_text("# calc\n\nEdited straight on the spine.\n", "utf-8")
    git.run(["-c", "user.name=Demo User", "-c", "user.email=demo@example.invalid",
             "commit", "-q", "-am", "a hotfix straight on main"], root)
    proc = git.run(["push", "--no-verify", "origin", "HEAD:main"], root, check=False)
    git.run(["switch", "-q", "--discard-changes", "main"], root)
    lines = [ln.rstrip() for ln in proc.stderr.decode(errors="replace").splitlines()
             if ln.startswith("remote: leap")]
    step(echo, "the server's pre-receive refuses a commit that skips the spine's rules",
         "git push --no-verify origin HEAD:main", lines)


def protocol_steps(root: Path, echo: Echo, step: Step, stream: Any) -> None:
    with scripted_juror() as url:
        _configure(root, url)
        _remote(root, echo, step)
        for ball in ("lexer", "docs"):
            _red(root, echo, step, ball)
        _throw(root, echo, step, stream, 0)
        for ball in ("lexer", "docs"):
            _score(root, echo, step, ball)
        _red(root, echo, step, "parser")
        _throw(root, echo, step, stream, 1)
        _score(root, echo, step, "parser")
        merged = merge.merge_slice(SLICE, start=root, echo=lambda _: None)
        step(echo, "merge the complete slice onto the spine as the one integrator (L8, L9)",
             f"leap merge {SLICE}", merge.lines(merged))
    result = audit.audit(root)
    step(echo, "re-derive every pass from plain git data", "leap audit",
         audit.lines(result))
    step(echo, "the spine in plain git: one integration merge per ball, trailers and all",
         "git log --graph --format='%h %s%n%(trailers:key=Leap-Candidate)' main",
         git.out(["log", "--graph", "--format=%h %s%n%(trailers:key=Leap-Candidate)",
                  "-n", "4", "main"], root).splitlines())
    _refused_push(root, echo, step)
