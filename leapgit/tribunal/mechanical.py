"""T7 (5), T9: checks a juror cannot fake, run as typed commands in throwaway worktrees.
The new tests pass at head; the suite is not worse than at base; the candidate's tests run
against the base code really fail (else a fake green); the test files are unchanged since
the red commit. A base that is not cleanly green makes the harness INVALID: it refuses to
grade. A timeout is not a pass, and a collection error is not a kill."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leapgit import git
from leapgit.procs import run_group
from leapgit.tribunal import testmap, worktree
from leapgit.tribunal.changes import Change, path_text

_FAILED = re.compile(r"^(?:FAILED|ERROR)\s+(\S+)|^not ok \d+\s*-?\s*(.+)$", re.MULTILINE)
TAIL = 1500


@dataclass(frozen=True)
class Run:
    code: int | None  # None: timed out
    output: str

    @property
    def failing(self) -> frozenset[str]:
        return frozenset((a or b).strip() for a, b in _FAILED.findall(self.output))


@dataclass(frozen=True)
class Check:
    name: str
    result: str  # ok | fail | invalid
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "result": self.result, "detail": self.detail}


@dataclass(frozen=True)
class Mechanical:
    checks: tuple[Check, ...]

    @property
    def invalid(self) -> bool:
        return any(c.result == "invalid" for c in self.checks)

    @property
    def outcome(self) -> str:
        return "pass" if all(c.result == "ok" for c in self.checks) else "refuse"

    @property
    def reason(self) -> str:
        bad = [c for c in self.checks if c.result != "ok"]
        if not bad:
            return "all mechanical checks hold"
        label = "INVALID: " if self.invalid else ""
        return label + "; ".join(f"{c.name}: {c.detail}" for c in bad)

    def to_dict(self) -> dict[str, Any]:
        return {"outcome": self.outcome, "invalid": self.invalid,
                "checks": [c.to_dict() for c in self.checks]}


def run_tests(command: str, tree: Path, timeout: float) -> Run:
    code, out = run_group(command, tree, git.scrubbed_env(), timeout)
    text = out.decode("utf-8", "replace")
    return Run(code, text[-TAIL:] if code is None else text)


def contract_tests(root: Path, change: Change, red: str | None) -> list[str]:
    if red:
        raw = git.run(["diff", "--name-only", "-z", "--no-renames", change.base, red], root).stdout
        return sorted(path_text(p) for p in raw.split(b"\0") if p)
    return [p for p in change.touched if testmap.is_test(p) and p in change.entries]


def _blob(root: Path, rev: str, path: str) -> str | None:
    proc = git.run(["rev-parse", "--verify", "--quiet", f"{rev}:{path}"], root, check=False)
    return proc.stdout.decode().strip() or None


def unchanged_since_red(root: Path, red: str, head: str, tests: list[str]) -> Check:
    moved = [p for p in tests if _blob(root, red, p) != _blob(root, head, p)]
    if moved:
        return Check("tests unchanged since red", "fail",
                     f"changed after the red commit {red[:12]}: {', '.join(moved)} (T9)")
    return Check("tests unchanged since red", "ok", f"{len(tests)} file(s) as at {red[:12]}")


def _tail(run: Run) -> str:
    return " ".join(run.output[-300:].split())


def baseline(root: Path, base: str, command: str, timeout: float) -> tuple[Check, Run]:
    """The tests at the base: once they passed there, not again for a command that scores
    (``worktree.once_a_tree``: the balls of a wave share their base)."""
    check, run, _ = _baseline(root, base, command, timeout)
    return check, run


def _baseline(root: Path, base: str, command: str, timeout: float,
              again: bool = False) -> tuple[Check, Run, bool]:
    """``baseline``, and whether its run is kept from an earlier ask; ``again``: a failure
    at the head put a kept pass in doubt, and the check says so."""
    run, kept = worktree.in_fresh(root, base, ("tests", command, repr(timeout)),
                                  lambda tree: run_tests(command, tree, timeout),
                                  lambda run: run.code == 0, again=again)
    if run.code == 0:
        return Check("base is cleanly green", "ok",
                     "exit 0 (kept: run earlier in this command)" if kept else "exit 0"), \
            run, kept
    why = "timed out" if run.code is None else f"exit {run.code}"
    earlier = "it passed earlier in this command, and now: " if again else ""
    return Check("base is cleanly green", "invalid",
                 f"{earlier}the harness refuses to grade: base {why}: {_tail(run)} (T9)"), \
        run, kept


def tests_at(root: Path, commit: str, command: str, timeout: float) -> Run:
    with worktree.temporary(root, commit) as tree:
        return run_tests(command, tree, timeout)


def at_head(run: Run, base: Run) -> Check:
    """The tests' ``run`` at the head, against their ``base`` run."""
    if run.code is None:
        return Check("new tests pass at head", "invalid", "timed out: not a pass (T9)")
    worse = sorted(run.failing - base.failing)
    if run.code != 0:
        ids = f"failing: {', '.join(worse)}" if worse else _tail(run)
        return Check("new tests pass at head", "fail", f"exit {run.code}; {ids}")
    return Check("new tests pass at head", "ok", "exit 0; no test worse than at base")


def fake_green(root: Path, change: Change, tests: list[str], command: str,
               timeout: float) -> Check:
    name = "fake-green check fails"
    with worktree.temporary(root, change.base) as tree:
        present = [p for p in tests if p in change.entries]
        git.run(["checkout", change.head, "--", *present], tree)
        run = run_tests(command, tree, timeout)
    if run.code == 0:
        return Check(name, "fail", "the candidate's tests pass against the base code: a fake "
                     "green (T7)")
    if run.code == 1:
        return Check(name, "ok", "the candidate's tests fail against the base code")
    why = "timed out" if run.code is None else f"exit {run.code} (a collection or usage error)"
    return Check(name, "invalid", f"{why} is not a kill: {_tail(run)} (T9)")


def run_checks(root: Path, change: Change, command: str, red: str | None,
               timeout: float) -> Mechanical:
    tests = contract_tests(root, change, red)
    if not tests:
        return Mechanical((Check("new tests exist", "fail",
                                 "the change carries no test files: nothing proves it (T7)"),))
    checks = [unchanged_since_red(root, red, change.head, tests)] if red else []
    base_check, base_run, kept = _baseline(root, change.base, command, timeout)
    checks.append(base_check)
    if base_check.result != "ok":
        return Mechanical(tuple(checks))
    head_run = tests_at(root, change.head, command, timeout)
    head = at_head(head_run, base_run)
    if head.result != "ok" and kept:  # a base pass kept from an earlier ask may be stale
        base_check, base_run, _ = _baseline(root, change.base, command, timeout, again=True)
        if base_check.result != "ok":  # the base is not green now: no grade (T9)
            return Mechanical((*checks[:-1], head, base_check))
        head = at_head(head_run, base_run)
    checks.append(head)
    checks.append(fake_green(root, change, tests, command, timeout))
    return Mechanical(tuple(checks))
