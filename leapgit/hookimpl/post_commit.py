"""git ``post-commit`` (client). In a ball worktree: check the new commit's scope and round
count at once, and record the round in the ledger through ``record_round`` (the only round
accounting). On a scope breach: a loud message with the offending paths and the ball's
rollback, and a recorded ``-1``.

Outside a ball worktree it must cost next to nothing: it reads HEAD and, at most, one line
of ``.leap/config.yaml`` with the standard library, and returns before importing leapgit's
heavier modules. A commit is already made when this runs, so it never fails the commit.
"""

from __future__ import annotations

import os
import sys

HOOK = "post-commit"
DEFAULT_PREFIX = "leap/ball"
# what a recording run imports from site-packages (the ledger's writer, the record reader and
# validator, the ledger lock): found there, the hook needs no ``.pth`` file (``load_site``)
LIBRARIES = (("dulwich",), ("ruamel", "yaml"), ("fastjsonschema",), ("filelock",))
_PREFIX_LINE = r"^ball_branch_prefix:[ \t]*([A-Za-z0-9._/-]+)[ \t]*(#.*)?$"


def _git_dir() -> str | None:
    env = os.environ.get("GIT_DIR")
    if env:
        return env
    if os.path.isdir(".git"):
        return ".git"
    try:
        with open(".git", encoding="utf-8") as fh:  # a linked worktree: "gitdir: <path>"
            line = fh.readline().strip()
    except OSError:
        return None
    return line[len("gitdir:"):].strip() if line.startswith("gitdir:") else None


def common_dir(git_dir: str) -> str:
    """The git dir shared by all worktrees (a linked worktree's names it in ``commondir``)."""
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as fh:
            found = fh.readline().strip()
    except OSError:
        return os.path.abspath(git_dir)
    return os.path.abspath(os.path.join(git_dir, found))


def current_branch() -> str | None:
    git_dir = _git_dir()
    if git_dir is None:
        return None
    try:  # git allows a branch name that is not UTF-8: read it, never a traceback
        with open(os.path.join(git_dir, "HEAD"), encoding="utf-8",
                  errors="surrogateescape") as fh:
            head = fh.readline().strip()
    except OSError:
        return None
    return head[len("ref: refs/heads/"):] if head.startswith("ref: refs/heads/") else None


def ball_prefix() -> str | None:
    """The configured prefix, cheaply; None when only a full YAML parse can tell."""
    try:
        with open(os.path.join(".leap", "config.yaml"), encoding="utf-8",
                  errors="surrogateescape") as fh:
            text = fh.read(1 << 16)
            if fh.read(1):
                return None  # longer than we look at: the setting may come later
    except OSError:
        return DEFAULT_PREFIX
    if "ball_branch_prefix" not in text:
        return DEFAULT_PREFIX
    import re  # only here: importing re costs more than the rest of the fast path

    found = re.findall(_PREFIX_LINE, text, re.MULTILINE)
    return found[0][0] if len(found) == 1 and text.count("ball_branch_prefix") == 1 else None


def ball_of_branch(branch: str, prefix: str) -> tuple[str, str] | None:
    if not branch.startswith(prefix + "/"):
        return None
    parts = branch[len(prefix) + 1:].split("/")
    return (parts[0], parts[1]) if len(parts) == 2 and all(parts) else None


def load_site() -> None:
    """Put site-packages and leapgit's own install root on the path without ``site.main()``,
    which runs every ``.pth`` file: an editable install's finder among them (measured: a
    recording run ~1.5-2 ms faster without them, the hook alone against the hook before).
    site-packages are those of the interpreter's venv (found by its ``pyvenv.cfg``, as
    ``site`` finds it) or of the interpreter; leapgit is where this file lies (site-packages
    itself, or the checkout of an editable install), after site-packages so it shadows
    nothing there. When a library the hook writes the ledger with is not there (installed
    elsewhere, or placed by a ``.pth`` file), ``site.main()`` runs after all."""
    import site

    exe_dir = os.path.dirname(os.path.abspath(sys.executable))
    venv = os.path.dirname(exe_dir)
    if any(os.path.isfile(os.path.join(d, "pyvenv.cfg")) for d in (exe_dir, venv)):
        # as ``site.venv`` sets it: Debian's getsitepackages() names a prefix's site-packages
        # only when sys.prefix is not the base interpreter's
        sys.prefix = sys.exec_prefix = venv
        found = site.getsitepackages([venv])
    else:
        found = site.getsitepackages()
    if not all(any(os.path.isdir(os.path.join(p, *lib)) for p in found) for lib in LIBRARIES):
        site.main()
        return
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.path.extend(p for p in dict.fromkeys((*found, root)) if p not in sys.path)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv if argv is None else argv
    if len(argv) > 1 and os.path.exists(argv[1] + ".leap-legacy"):
        import subprocess  # not leapgit.hookimpl.chain: site-packages are not loaded yet

        legacy = argv[1] + ".leap-legacy"
        if os.access(legacy, os.X_OK):
            try:
                subprocess.run([legacy, *argv[2:]], check=False)
            except OSError:  # no `#!` line: git runs it through the shell (ENOEXEC), as here
                subprocess.run(["/bin/sh", legacy, *argv[2:]], check=False)
    # leapgit made this commit and records the round itself (worktrees.rounds.RECORDING_ENV,
    # spelled out here so the hook imports nothing of leapgit before it must)
    if os.environ.get("LEAP_RECORDS_ROUND"):
        return 0
    branch = current_branch()
    if branch is None or "/" not in branch:
        return 0
    prefix = ball_prefix()
    if prefix is not None and ball_of_branch(branch, prefix) is None:
        return 0  # not a ball worktree: the common case, decided with the standard library
    # A short run that frees nothing worth collecting: the cyclic collector would only walk
    # the ~200 modules' objects as they load (~8 ms of a recording run, measured in-process).
    import gc

    gc.disable()
    if sys.flags.no_site:  # started with -S for speed: now find leapgit and its libraries
        # hashlib without OpenSSL: its built-in SHA-1 hashes the few objects a round writes,
        # and loading libcrypto cost ~1.5 ms of each recording run (measured as a process)
        sys.modules.setdefault("_hashlib", None)  # type: ignore[arg-type]
        load_site()
    try:
        from leapgit.hookimpl.ballround import on_commit

        git_dir = _git_dir()
        on_commit(branch, os.getcwd(), common_dir(git_dir) if git_dir else None)
    except Exception as exc:  # noqa: BLE001 -- the commit is made; say what went wrong, never a traceback
        from leapgit.errors import LeapError, RuleViolation, printable

        lines = exc.lines() if isinstance(exc, LeapError) else \
            [f"{type(exc).__name__}: {printable(str(exc))}"]  # F9: shown, never obeyed
        for line in lines:
            print(f"leap {HOOK}: {line}", file=sys.stderr)
        # a rule refused the round: its own hint says what to do (`leap round` meets the
        # same rule); anything else failed on the way, and `leap round` records it later
        ball = ball_of_branch(branch, prefix or DEFAULT_PREFIX) or ("SLICE", "BALL")
        how = "" if isinstance(exc, RuleViolation) else (
            f"; record it with `leap round {ball[0]} {ball[1]} --outcome N --evidence TEXT`")
        print(f"leap {HOOK}: the round was not recorded{how}", file=sys.stderr)
    return 0


def exit_now(code: int) -> None:
    """Leave without the interpreter's teardown. When ``main`` returns, the work is on disk
    (the ledger ref moved under its lock, every file closed); freeing the ~200 modules a
    recording run loads would only add 10-20 ms to the user's ``git commit``."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    exit_now(main())
