"""Shared test support: real git repositories, the real CLI, a real remote.

No mocks of git: every helper here drives the real `git` binary or the real `leap` entry
point (in this process by default, as a process when asked), so a test fails when the
product does.
"""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

ROOT = Path(__file__).resolve().parent.parent
IDENTITY = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Committer",
    "GIT_COMMITTER_EMAIL": "committer@example.invalid",
}
_ALWAYS_PROCESS = os.environ.get("LEAP_TEST_PROCESS") == "1"


def isolate(mp: pytest.MonkeyPatch, home: Path, cache: Path | None = None) -> None:
    """A fixed identity and no user or system git config, with ``home`` as HOME; ``cache``
    as XDG_CACHE_HOME (the run's, shared by its tests as a user's is by their commands:
    leapgit keeps compiled schema validators there), else one inside ``home``."""
    mp.setenv("HOME", str(home))
    mp.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    mp.setenv("XDG_STATE_HOME", str(home / ".state"))
    mp.setenv("XDG_CACHE_HOME", str(cache or home / ".cache"))
    mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
    # a user's git settings reach no test: a global config named elsewhere than ``home``
    # (hooksPath, templates...), where their repositories are, how they reach remotes
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE",
                "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
                "GIT_CEILING_DIRECTORIES", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_PARAMETERS",
                "GIT_TEMPLATE_DIR", "GIT_SSH",
                "GIT_SSH_COMMAND", "GIT_EXEC_PATH", "GIT_NAMESPACE"):
        mp.delenv(key, raising=False)
    for key, value in IDENTITY.items():
        mp.setenv(key, value)
    # git's housekeeping after a commit, fetch or push (`git maintenance run --auto`, `gc
    # --auto`, a server's `gc --auto` after each push) is no part of what a test checks: a
    # process each time, ~6,000 in a run
    settings = (("maintenance.auto", "false"), ("gc.auto", "0"), ("receive.autogc", "false"))
    for n, (key, value) in enumerate(settings):
        mp.setenv(f"GIT_CONFIG_KEY_{n}", key)
        mp.setenv(f"GIT_CONFIG_VALUE_{n}", value)
    mp.setenv("GIT_CONFIG_COUNT", str(len(settings)))
    # a world's own `pytest` (its proof, a red, a scoring's tests) loads none of the plugins
    # this run's environment holds: hypothesis's alone costs ~1.2 s a start
    mp.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    # `python` in a world's proof and builder commands is this run's interpreter, found
    # first on PATH: not a version manager's shim (pyenv's costs ~10 processes a call)
    venv_bin = os.path.dirname(sys.executable)
    path = os.environ.get("PATH", "")
    if path.split(os.pathsep)[0] != venv_bin:
        mp.setenv("PATH", venv_bin + os.pathsep + path)


def git(*args: str, cwd: Path | str, check: bool = True, input: bytes | None = None,
        env: Mapping[str, str] | None = None) -> str:
    full_env = {**os.environ, **IDENTITY, **(env or {})}
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, input=input,
                          env=full_env)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"git {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr.decode()}"
        )
    return proc.stdout.decode().strip()


def make_repo(path: Path, files: Mapping[str, str | bytes] | None = None,
              branch: str = "main", message: str = "initial") -> Path:
    """A real repository with ``files`` committed on ``branch``."""
    path.mkdir(parents=True, exist_ok=True)
    git("init", "-q", "-b", branch, str(path), cwd=path)
    if files:
        write_files(path, files)
        git("add", "-A", cwd=path)
        git("commit", "-q", "-m", message, cwd=path)
    return path


def write_files(root: Path, files: Mapping[str, str | bytes]) -> None:
    for name, content in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")


def commit_all(root: Path, message: str) -> str:
    git("add", "-A", cwd=root)
    git("commit", "-q", "-m", message, cwd=root)
    return git("rev-parse", "HEAD", cwd=root)


def ref(root: Path, name: str) -> str | None:
    proc = subprocess.run(["git", "rev-parse", "--verify", "--quiet", name], cwd=root,
                          capture_output=True)
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


@dataclass
class Result:
    code: int
    out: str
    err: str

    def __repr__(self) -> str:
        return f"Result(code={self.code}, out={self.out!r}, err={self.err!r})"


def leap(*args: str, cwd: Path | str, env: Mapping[str, str] | None = None,
         input: str | None = None, timeout: float = 120, subprocess: bool = False) -> Result:
    """Run the CLI with ``args`` in ``cwd``, ``env`` over this process's environment and the
    test identity: in this process by default (`tests.inproc`: the same entry point, error
    handler and exit codes, ~5 ms instead of ~130 ms of interpreter start and imports), or in
    a fresh ``python -m leapgit`` process with ``subprocess=True``, for what needs a process
    boundary (signals, a kill, a closed stream, the entry points themselves). LEAP_TEST_PROCESS=1
    runs every call as a process, to check the two agree."""
    full_env = {**IDENTITY, **(env or {})}
    if subprocess or _ALWAYS_PROCESS or threading.current_thread() is not threading.main_thread():
        return leap_process(*args, cwd=cwd, env=full_env, input=input, timeout=timeout)
    from tests.inproc import run_cli

    code, out, err = run_cli(list(args), cwd=cwd, env=full_env, input=input, timeout=timeout)
    return Result(code, out, err)


def hinted_leap(text: str) -> list[list[str]]:
    """The `leap ...` commands a message names in backticks, each as the words a shell
    would pass (the brief: a hint is run exactly as printed)."""
    return [shlex.split(found)[1:] for found in re.findall(r"`(leap [^`]*)`", text)]


def leap_process(*args: str, cwd: Path | str, env: Mapping[str, str] | None = None,
                 input: str | None = None, timeout: float = 120) -> Result:
    """Run the real CLI in a fresh process (the way a user or a hook does)."""
    proc = subprocess.run(
        [sys.executable, "-m", "leapgit", *args], cwd=cwd, capture_output=True, text=True,
        env={**os.environ, **IDENTITY, **(env or {})}, input=input, timeout=timeout,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class GitDaemon:
    """`git daemon --enable=receive-pack` on 127.0.0.1 serving every repo under ``base``."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}"

    def __enter__(self) -> GitDaemon:
        self.proc = subprocess.Popen(
            ["git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
             "--listen=127.0.0.1", f"--port={self.port}", f"--base-path={self.base}",
             str(self.base)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        wait_listening(self.proc, self.port, "git daemon")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc:
            stop(self.proc)


def stop(proc: subprocess.Popen[bytes]) -> None:
    """A server the tests started: asked to stop, killed when it does not within 5 s."""
    proc.terminate()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def wait_listening(proc: subprocess.Popen[bytes], port: int, what: str,
                   seconds: float = 10) -> None:
    """Until ``proc`` (a server started with stderr piped) listens on 127.0.0.1:``port``;
    its stderr in the error when it exits first."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            if proc.poll() is not None:
                err = proc.stderr.read().decode() if proc.stderr else ""
                raise RuntimeError(f"{what} did not start: {err}") from None
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not start")


def leap_inproc(*args: str, cwd: Path) -> Result:
    """The CLI in this process, without the test identity: for big corpora of cases."""
    from tests.inproc import run_cli

    return Result(*run_cli(list(args), cwd=cwd, env={}, input=None, timeout=600))


def write_pass(ledger: object, slice_id: str, ball_id: str, candidate: str, commit: str,
               base: str, *, episode: int = 1, rounds: int = 1, spec_version: int = 1,
               run_id: str = "t-test-pass") -> str:
    """A whole pass record set as `leap score` writes it (score record outcome 1, tribunal
    summary and two verdicts naming the same candidate), for tests that need a passed ball
    without scoring one. The round it grades is recorded first when the ledger lacks it (a
    claim of ``commit``, after holds, in an episode thrown from ``base``), as the server
    wants a pass to grade a recorded claim (L7), and so is a red (``red_files``) when the
    ball has none (T7.1: a pass names a red the ledger holds; recorded before the rounds
    when the ledger holds none yet). Every record is schema-checked; returns the ledger
    commit."""
    from leapgit.ledger import history, query

    view = ledger.require()  # type: ignore[attr-defined]
    red = {} if history.reds(view, slice_id, ball_id) else red_files(slice_id, ball_id, base)
    if red and not query.receipts(view, slice_id, ball_id, episode):
        ledger.append(red, f"test: red of {slice_id}/{ball_id}")  # type: ignore[attr-defined]
        red = {}  # T7.1: red first, before the rounds the pass grades
    files = claimed_round(ledger, slice_id, ball_id, candidate, commit, base, episode=episode,
                          rounds=rounds, spec_version=spec_version)
    files.update(red)  # rounds were recorded already: only a local ledger takes a late red
    files.update(pass_files(slice_id, ball_id, candidate, commit, base, episode=episode,
                            rounds=rounds, spec_version=spec_version, run_id=run_id))
    return str(ledger.append(files, f"test: {slice_id}/{ball_id} passes").commit)  # type: ignore[attr-defined]


def red_files(slice_id: str, ball_id: str, base: str, number: int = 1) -> dict[str, bytes]:
    """Red ``number`` of a ball (T7.1), for tests that need a pass without running `leap
    red`: a red record, schema-checked, that changes no rule's view of the branch (its
    commit is the base, so no commit is its red test; the one test it freezes is absent,
    and stays so). A pass names a red the ledger holds."""
    from leapgit.ledger import layout
    from leapgit.records import schema, yamlio
    from leapgit.records.scoring import FileBlob, RedRecord, RunEvidence

    rec = RedRecord(slice_id, ball_id, number, base, base,
                    (FileBlob(f"tests/test_{ball_id}_red_placeholder.py", "absent"),),
                    RunEvidence("red", "false", 1), "2024-01-01T00:00:00Z")
    path = layout.red_path(slice_id, ball_id, number)
    schema.validate_record(rec.to_dict(), path)
    return {path: yamlio.dumps(rec.to_dict())}


def claimed_round(ledger: object, slice_id: str, ball_id: str, candidate: str, commit: str,
                  base: str, *, episode: int, rounds: int, spec_version: int
                  ) -> dict[str, bytes]:
    """The throw and receipts a pass of round ``rounds`` grades, those the ledger lacks."""
    from leapgit.ledger import layout, query
    from leapgit.records import yamlio
    from leapgit.records.types import Receipt, ThrowRecord

    view = ledger.require()  # type: ignore[attr-defined]
    at = "2024-01-01T00:00:00Z"
    files = {}
    if query.throw(view, slice_id, ball_id, episode) is None:
        thrown = ThrowRecord(slice_id, ball_id, episode, spec_version, base,
                             f"leap/ball/{slice_id}/{ball_id}", at)
        files[layout.throw_path(slice_id, ball_id, episode)] = yamlio.dumps(thrown.to_dict())
    for n in range(len(query.receipts(view, slice_id, ball_id, episode)) + 1, rounds + 1):
        last = n == rounds
        rec = Receipt(slice_id, ball_id, episode, n, 1 if last else 0, f"round {n}", at,
                      claim=True, commit=commit if last else None,
                      candidate=candidate if last else None)
        files[layout.receipt_path(slice_id, ball_id, episode, n)] = yamlio.dumps(rec.to_dict())
    return files


def pass_files(slice_id: str, ball_id: str, candidate: str, commit: str, base: str, *,
               episode: int = 1, rounds: int = 1, spec_version: int = 1,
               run_id: str = "t-test-pass", red: int | None = 1) -> dict[str, bytes]:
    from leapgit.ledger import layout
    from leapgit.records import schema, yamlio
    from leapgit.records.scoring import PassProvenance, Reviewer, RunEvidence, ScoreRecord, Step

    builder = "model=builder-x,family=buildfam,session=s-1"
    folder = layout.tribunal_dir(run_id, slice_id, ball_id)
    head = {"format": 1, "run_id": run_id, "round": 1, "slice": slice_id, "ball": ball_id,
            "candidate": commit, "tree": candidate, "envelope_hash": "0" * 64}
    lenses = ("defect", "proportion")
    records: dict[str, dict[str, object]] = {
        f"{folder}/summary.yaml": {
            "kind": "summary", **head, "series": f"ball:{slice_id}/{ball_id}", "base": base,
            "builder_family": "buildfam", "outcome": "pass", "reason": "unanimous pass",
            "lenses": {lens: "pass" for lens in lenses}, "findings": [], "new_count": 0,
            "recorded_at": "2024-01-01T00:00:00Z"}}
    for lens in lenses:
        records[f"{folder}/verdicts/{lens}.yaml"] = {
            "kind": "verdict", **head, "lens": lens, "outcome": "pass", "reason": "pass",
            "seat": {"outcome": "pass", "reason": "pass", "rung": "r", "attempts": []},
            "findings": [], "recorded_at": "2024-01-01T00:00:00Z"}
    green = RunEvidence("tests", "true", 0)
    prov = PassProvenance(slice_id, ball_id, "goal", builder, spec_version,
                          tuple(Reviewer(lens, "r", "jurorfam") for lens in lenses),
                          tuple(f"{folder}/verdicts/{lens}.yaml" for lens in lenses),
                          f"{folder}/summary.yaml", run_id, (green,), None, red, candidate)
    score = ScoreRecord(slice_id, ball_id, 1, episode, rounds, spec_version, 1, "test pass",
                        candidate, commit, base, (Step("source", "ok", "test"),),
                        "2024-01-01T00:00:00Z", provenance=prov)
    records[layout.score_path(slice_id, ball_id, 1)] = score.to_dict()
    files = {}
    for path, record in records.items():
        schema.validate_record(record, path)
        files[path] = yamlio.dumps(record)
    return files


# What the post-commit hook must not load on a round (issue 3: < 0.6x pre-commit's hook):
# a YAML parser, a schema validator, filelock (the record cache and the flock lock stand in),
# dulwich's Repo with its work-tree machinery (ledger.repo.PlainRepo stands in), and the
# subprocess and tempfile modules only signing needs.
HOOK_HEAVY_PACKAGES = ("ruamel", "fastjsonschema", "filelock")
HOOK_HEAVY_MODULES = ("dulwich.repo", "dulwich.worktree", "subprocess", "tempfile",
                      "decimal")  # every generated validator imports decimal


def hook_round_imports(hook: Path, wt: Path) -> tuple[str, list[str]]:
    """Run the installed post-commit's program on ``wt``'s last commit as the hook script
    does, with ``-X importtime``: (its stderr, the heavy modules it loaded)."""
    import leapgit.hookimpl.post_commit as program

    proc = subprocess.run([sys.executable, "-I", "-S", "-X", "importtime", program.__file__,
                           str(hook)], cwd=wt, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    loaded = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()
              if line.startswith("import time:")}
    assert "dulwich.object_store" in loaded, proc.stderr  # the listing is real
    return proc.stderr, sorted(m for m in loaded if m.split(".")[0] in HOOK_HEAVY_PACKAGES
                               or m in HOOK_HEAVY_MODULES)
