"""T9: a reported surviving mutant is a claim. Each finding's ``mutant`` (a unified diff to a
candidate file) is applied in a throwaway worktree of the candidate and the ball's tests run
there under the test time cap: exit 0 means the mutant SURVIVED (a confirmed survivor is a
refuse with that evidence), exit 1 KILLED it; a timeout is not a survivor and a collection
or usage error (any other exit), a patch that does not apply or reaches past the candidate's
own code is not a kill: INVALID. KILLED and INVALID claims are reported as unsupported. The
re-runs are measured against the mutation-free baseline, the candidate's tests run unchanged:
unless that is cleanly green, every verdict of the convening is INVALID (exit 1)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from leapgit import git
from leapgit.errors import LeapError
from leapgit.tribunal import testmap, worktree
from leapgit.tribunal.envelope import Envelope
from leapgit.tribunal.mechanical import Check, Mechanical, Run, run_tests
from leapgit.tribunal.routing import LensPlan
from leapgit.tribunal.seating import LensResult, Seat, fuse
from leapgit.tribunal.verdict import Finding, Rerun

KILLED, SURVIVED, INVALID = "KILLED", "SURVIVED", "INVALID"
MAX_RERUNS = 16  # claims re-run per convening; the rest are INVALID, never silently dropped
BASELINE = "mutation-free baseline is green"
_TAIL = 300


@dataclass(frozen=True)
class Harness:
    root: Path
    head: str
    tests: str | None
    timeout: float
    allowed: frozenset[str]  # the candidate's own code: files the change touched, no tests


def harness(root: Path, head: str, tests: str | None, timeout: float,
            envelope: Envelope) -> Harness:
    allowed = frozenset(f.path for f in envelope.files
                        if f.role == "changed" and not testmap.is_test(f.path))
    return Harness(root, head, tests, timeout, allowed)


def _tail(run: Run) -> str:
    return " ".join(run.output[-_TAIL:].split())


def baseline(h: Harness) -> str | None:
    """Why the candidate's tests are not cleanly green unmutated, or None."""
    assert h.tests is not None
    try:
        with worktree.temporary(h.root, h.head) as tree:  # the mutants' own control
            run = run_tests(h.tests, tree, h.timeout)
    except LeapError as exc:  # a harness that cannot run is INVALID, never a crash (T9)
        return f"the harness cannot run: {exc}"
    if run.code == 0:
        return None
    how = f"timed out after {h.timeout:g} s" if run.code is None else f"exit {run.code}"
    return f"{how}: {_tail(run)}"


def _paths(tree: Path, patch: bytes) -> tuple[tuple[str, ...], str | None]:
    """The files ``patch`` changes, and why it may not be applied, if it may not."""
    # paths as they are (git quotes a non-ASCII one otherwise); one with a tab, newline or
    # quote stays quoted and is named no candidate file: INVALID, never a wrong file
    proc = git.run(["-c", "core.quotePath=false", "apply", "--numstat", "--summary", "-"],
                   tree, input=patch, check=False)
    if proc.returncode != 0:
        return (), f"the patch does not parse: {_last(proc.stderr)}"
    lines = proc.stdout.decode("utf-8", "replace").splitlines()
    changes = [ln.strip() for ln in lines if ln.startswith(" ")]
    if changes:  # create, delete, rename, mode change: a mutant edits code in place
        return (), f"the patch does more than edit a file ({changes[0]})"
    paths = tuple(ln.split("\t", 2)[2] for ln in lines if ln.count("\t") >= 2)
    return paths, None if paths else "the patch changes no file"


def _unchanged(tree: Path, paths: tuple[str, ...]) -> bool:
    """T9: the patched files are byte for byte the candidate's: nothing was mutated."""
    return git.run(["diff", "--quiet", "--", *paths], tree, check=False).returncode == 0


def _state(tree: Path) -> set[str]:
    """Every path of ``tree`` that differs from its commit, with how (``git status``)."""
    out = git.run(["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"],
                  tree).stdout
    return {entry.decode("utf-8", "surrogateescape") for entry in out.split(b"\0") if entry}


def _apply(tree: Path, data: bytes, paths: tuple[str, ...],
           allowed: frozenset[str]) -> str | None:
    """Apply the patch; why it is no mutant of the candidate's own code, or None. What the
    tree holds after is the proof, not what ``--numstat`` listed: a ``diff --git`` whose
    ``+++`` names another file renames without saying so (T9)."""
    before = _state(tree)
    applied = git.run(["apply", "-"], tree, input=data, check=False)
    if applied.returncode != 0:
        return f"the patch does not apply: {_last(applied.stderr)}"
    moved = sorted(e[3:] for e in _state(tree) ^ before
                   if not (e[:2] == " M" and e[3:] in allowed))
    if moved:
        return (f"it changes {', '.join(dict.fromkeys(moved))}, not only the candidate's own "
                f"code ({', '.join(sorted(allowed)) or 'none'})")
    if _unchanged(tree, paths):  # the candidate again: its baseline, no mutant
        return "it changes no byte of the candidate (it puts back what it takes out)"
    return None


def _last(stderr: bytes) -> str:
    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else "no message"


def rerun(h: Harness, patch: str) -> Rerun:
    if h.tests is None:
        return Rerun(INVALID, "no tests command to re-run it with (--tests): not re-run")
    try:
        return _rerun(h, h.tests, patch)
    except LeapError as exc:  # a tree that cannot be set up is not a kill (T9)
        return Rerun(INVALID, f"the harness cannot run: {exc}: not a kill, not a survivor "
                     "(T9)")


def _rerun(h: Harness, tests: str, patch: str) -> Rerun:
    data = patch.encode("utf-8") if patch.endswith("\n") else (patch + "\n").encode("utf-8")
    with worktree.temporary(h.root, h.head) as tree:
        paths, problem = _paths(tree, data)
        outside = sorted(set(paths) - h.allowed)
        if problem is None and outside:
            problem = (f"it patches {', '.join(outside)}, not the candidate's own code "
                       f"({', '.join(sorted(h.allowed)) or 'none'})")
        if problem is None:
            problem = _apply(tree, data, paths, h.allowed)
        if problem is not None:
            return Rerun(INVALID, f"{problem}: not a kill, not a survivor (T9)", paths)
        run = run_tests(tests, tree, h.timeout)
    return _status(run, h.timeout, paths)


def _status(run: Run, timeout: float, paths: tuple[str, ...]) -> Rerun:
    if run.code is None:
        return Rerun(INVALID, f"the tests timed out after {timeout:g} s: a timeout is not a "
                     "survivor (T9)", paths)
    if run.code == 0:
        return Rerun(SURVIVED, f"the tests pass with it applied to {', '.join(paths)}: the "
                     "mutant survives (T9)", paths)
    if run.code == 1:
        return Rerun(KILLED, f"the tests fail with it applied (exit 1): killed: "
                     f"{_tail(run)}", paths)
    return Rerun(INVALID, f"exit {run.code}: a collection or usage error is not a kill (T9): "
                 f"{_tail(run)}", paths)


Rerunner = Callable[[str], Rerun]


def _seat(seat: Seat | None, check: Rerunner) -> Seat | None:
    """The seat with each claimed mutant re-run; a confirmed survivor refuses it."""
    if seat is None or seat.verdict is None or not any(f.mutant for f in seat.verdict.findings):
        return seat
    findings = tuple(replace(f, rerun=check(f.mutant)) if f.mutant else f
                     for f in seat.verdict.findings)
    verdict = replace(seat.verdict, findings=findings)
    survived = [f for f in findings if f.rerun and f.rerun.status == SURVIVED]
    if not survived:
        return replace(seat, verdict=verdict)
    first = survived[0]
    why = f"a mutant survived: {first.claim}: {first.rerun.detail if first.rerun else ''}"
    return replace(seat, outcome="refuse", reason=f"{why}; {seat.reason}",
                   verdict=replace(verdict, outcome="refuse", reason=why))


def _unsupported(result: LensResult) -> list[Finding]:
    seats = (result.primary, result.verifier)
    return [f for s in seats if s is not None and s.verdict is not None
            for f in s.verdict.findings if f.rerun and f.rerun.status != SURVIVED]


def claimed(results: Sequence[LensResult]) -> int:
    return sum(1 for r in results for s in (r.primary, r.verifier)
               if s is not None and s.verdict is not None for f in s.verdict.findings
               if f.mutant)


def judge(result: LensResult, plan: LensPlan, check: Rerunner) -> LensResult:
    """T9: re-run the lens's claimed mutants; held lenses gave no verdict to check."""
    if result.outcome == "hold" or result.halted:
        return result
    primary, verifier = _seat(result.primary, check), _seat(result.verifier, check)
    if primary is result.primary and verifier is result.verifier:
        return result
    assert primary is not None
    fused = fuse(plan, primary, verifier)
    weak = _unsupported(fused)
    if weak:
        named = "; ".join(f"{f.rerun.status}: {f.rerun.detail}" for f in weak if f.rerun)
        fused = replace(fused, reason=f"{fused.reason}; unsupported mutant claim(s): {named}")
    return replace(fused, unverified=result.unverified)


def invalid(result: LensResult, why: str) -> LensResult:
    """T9: a harness whose baseline is not cleanly green refuses every verdict."""
    return replace(result, outcome="refuse",
                   reason=f"INVALID: the mutation-free baseline is not cleanly green ({why}): "
                          f"every verdict of this convening is INVALID (T9); was: "
                          f"{result.outcome}: {result.reason}")


def counted(h: Harness) -> Rerunner:
    """``rerun`` for the first MAX_RERUNS claims; the rest are INVALID, said so."""
    done = [0]

    def check(patch: str) -> Rerun:
        done[0] += 1
        if done[0] > MAX_RERUNS:
            return Rerun(INVALID, f"not re-run: over the cap of {MAX_RERUNS} mutants a "
                         "convening re-runs (T9)")
        return rerun(h, patch)
    return check


def with_baseline(checks: Mechanical | None, why: str | None) -> Mechanical | None:
    if why is None:
        return checks
    bad = Check(BASELINE, "invalid", f"the harness refuses every verdict: {why} (T9)")
    return Mechanical((*(checks.checks if checks else ()), bad))


def lines(results: Sequence[LensResult]) -> list[str]:
    out = []
    for r in results:
        for role, seat in (("primary", r.primary), ("verifier", r.verifier)):
            if seat is None or seat.verdict is None:
                continue
            for i, f in enumerate(seat.verdict.findings, 1):
                if f.rerun is not None:
                    label = "confirmed" if f.rerun.status == SURVIVED else "unsupported"
                    out.append(f"  mutant {r.lens} {role} finding {i}: {f.rerun.status} "
                               f"({label}): {f.rerun.detail}")
    return out


def recheck(h: Harness, results: list[LensResult], plans: Sequence[LensPlan],
            checks: Mechanical | None, on_result: Callable[[LensResult], LensResult],
            echo: Callable[[str], None]) -> tuple[list[LensResult], Mechanical | None]:
    """After the seats: every claimed mutant re-run (T9), each changed verdict recorded
    again through ``on_result``; a red baseline makes every verdict INVALID."""
    if not claimed(results):
        return results, checks
    why = baseline(h) if h.tests is not None else None
    by_lens = {plan.lens.id: plan for plan in plans}
    if why is not None:
        never = Rerun(INVALID, "not re-run: the mutation-free baseline is not cleanly green")
        results = [on_result(invalid(judge(r, by_lens[r.lens], lambda _: never), why))
                   for r in results]
        echo(f"mutation-free baseline: INVALID ({why}): every verdict is INVALID (T9)")
        return results, with_baseline(checks, why)
    check = counted(h)
    judged = [judge(r, by_lens[r.lens], check) for r in results]
    results = [on_result(j) if j is not r else r for j, r in zip(judged, results, strict=True)]
    for line in lines(results):
        echo(line)
    return results, checks
