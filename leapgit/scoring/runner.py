"""Whether a test command's failure says anything about the code (T7.1, T9). A red is a test
that ran and failed for the missing behaviour; a run that stopped before any test ran (the
runner could not collect or import a test, was misused, found no test, crashed; the shell
found no such command or could not run it; the run timed out) proves nothing about it.

Read from the exit code, the command and what it printed, for the two runners Python ships
or most projects use: pytest (exit 2 interrupted, 3 internal error, 4 usage error, 5 no
tests collected) and unittest (an import error is a ``_FailedTest``; no test ran: "Ran 0
tests", or "NO TESTS RAN" with exit 5 from Python 3.12). Any other command's non-zero exit
is taken as a test that failed."""

from __future__ import annotations

import re

from leapgit.scoring.commands import CommandRun

_PYTEST_COMMAND = re.compile(r"(?:^|[\s/;&|(])(?:py\.test|pytest)(?:\s|$|;|&|\|)")
_PYTEST_OUTPUT = re.compile(r"^=+ test session starts =+$|^INTERNALERROR>"
                            r"|^ERROR: (?:file or directory not found|usage|not found)"
                            r"|Interrupted: \d+ errors? during collection"
                            r"|^no tests ran in ", re.MULTILINE)
_PYTEST_EXITS = {
    2: "pytest exit 2: interrupted, by a collection error or an interrupt",
    3: "pytest exit 3: an internal error",
    4: "pytest exit 4: a usage error (a bad option, or a test path that is not there)",
    5: "pytest exit 5: no tests collected",
}
_COLLECTION = re.compile(r"^_+ ERROR collecting .+ _+$|\d+ errors? during collection",
                         re.MULTILINE)
_UNITTEST_IMPORT = re.compile(r"^ImportError: Failed to import test module"
                              r"|unittest\.loader\._FailedTest", re.MULTILINE)
_NO_TEST_RAN = re.compile(r"^Ran 0 tests in |^NO TESTS RAN", re.MULTILINE)
_UNITTEST_COMMAND = re.compile(r"\bunittest\b")
_MISSING_MODULE = re.compile(r"No module named '([\w.]+)'|cannot import name '\w+' from '([\w.]+)'")


def before_tests(run: CommandRun) -> str | None:
    """Why ``run`` ended before any test ran, or None when a test ran (and passed or
    failed). A timeout counts: it never said what the tests make of the code."""
    if run.timed_out:
        return f"it timed out after {run.seconds:.0f} s"
    code, said = run.exit_code, run.stdout
    if code == 127:
        return "exit 127: the shell found no such command"
    if code == 126:
        return "exit 126: the command could not be run (not executable)"
    pytest = bool(_PYTEST_COMMAND.search(run.command) or _PYTEST_OUTPUT.search(said))
    if pytest and code in _PYTEST_EXITS:
        return _PYTEST_EXITS[code]
    if pytest and code != 0 and _COLLECTION.search(said):
        return f"pytest exit {code}: a test module could not be collected"
    if _UNITTEST_IMPORT.search(said):
        return f"exit {code}: unittest could not import a test module"
    if _NO_TEST_RAN.search(said) or (code == 5 and _UNITTEST_COMMAND.search(run.command)):
        return f"exit {code}: no test ran"
    return None


def imported_from(said: str, paths: tuple[str, ...]) -> str | None:
    """The module a test imported at its top that one of ``paths`` (a ball's scope) is:
    the red fails to import what the ball will write, so the runner stops before any test
    runs. Read from what the runner printed (``No module named 'pkg.new'``, ``cannot import
    name 'f' from 'pkg.mod'``); a module found under a source folder (``src/pkg/new.py``)
    counts."""
    for found in _MISSING_MODULE.finditer(said):
        module = found.group(1) or found.group(2)
        tail = module.replace(".", "/")
        for path in paths:
            if any(path == name or path.endswith("/" + name)
                   for name in (f"{tail}.py", f"{tail}/__init__.py")):
                return module
    return None
