"""`leap ball check`: the builder's L2 check of its file map, in the ball's own worktree.

The map is reference data, never instruction. Every scope path must resolve inside the
worktree (no absolute path, no ``..``, no symlink that leaves it); every file is re-opened
and its blob id compared: at the throw base against the stamp taken at the cut (a stale map),
and on disk against the ball branch's own last commit (a change no round recorded). A file
stamped ``absent`` must still be absent. A wrong map is -1. A missing dependency (a file the
proof needs that does not exist, a tool the proof runs that is not installed) is 0.
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from dulwich.objects import Blob

from leapgit import git
from leapgit.errors import Hold, LeapError, Problem, RuleViolation
from leapgit.gitobj import oid
from leapgit.ledger.repo import open_repo
from leapgit.records.types import ABSENT, BallRecord, ThrowRecord
from leapgit.rules.objects import Objects
from leapgit.slices.scope import ScopeError, TreeResolver

if TYPE_CHECKING:
    from leapgit.gitobj import GitRepo

DIRECTORY = "directory"
# what POSIX sh (/bin/sh, which runs every command line leapgit starts; dash on Debian)
# answers itself: bash's `source` and `[[` do not start there (a blind review)
_SHELL_BUILTINS = {"cd", "test", "[", "true", "false", "echo", "exit", "export", "set", ":",
                   "exec", "command", "env", ".", "eval", "umask", "ulimit", "trap", "unset",
                   "wait", "read", "printf", "shift", "pwd", "type", "kill", "readonly"}
# words that open a compound command in POSIX sh: a command line that starts with one
# (`if ...; fi`, `while ...`, `{ ...; }`) names its programs further on (a blind review:
# `leap run` refused such a red.command as "'if' is not on PATH"); a subshell's `(` is an
# operator, split off with the others (``command_words``)
_SHELL_GRAMMAR = {"if", "for", "while", "until", "case", "{", "!"}


@dataclass(frozen=True)
class Finding:
    outcome: Literal[-1, 0]
    path: str
    message: str


@dataclass(frozen=True)
class CheckResult:
    slice: str
    ball: str
    worktree: Path
    files: int
    findings: tuple[Finding, ...]

    @property
    def outcome(self) -> Literal[-1, 0, 1]:
        if any(f.outcome == -1 for f in self.findings):
            return -1
        return 0 if self.findings else 1

    def evidence(self) -> str:
        if not self.findings:
            return f"L2 check: {self.files} scope file(s) resolve inside the worktree and match"
        return "L2 check: " + "; ".join(f"{f.path}: {f.message}" for f in self.findings)

    def error(self) -> LeapError | None:
        """The refusal (-1, wrong map) or hold (0, missing dependency) this check amounts to."""
        if not self.findings:
            return None
        worst = [f for f in self.findings if f.outcome == self.outcome]
        problems = [Problem(f.message, file=f.path, rule="L2") for f in worst]
        if self.outcome == -1:
            return RuleViolation(problems=problems)
        return Hold(problems=problems)


def blob_of_file(path: Path) -> str:
    if path.is_symlink():
        return Blob.from_string(os.readlink(path).encode()).id.decode()
    if not path.exists():
        return ABSENT
    if path.is_dir():
        return DIRECTORY  # a folder where a file should be: never equal to any blob id
    return Blob.from_string(path.read_bytes()).id.decode()


_EXECUTABLE = 0o100755
_FILE_MODES = (0o100644, _EXECUTABLE)


def exec_bit_counts(repo: GitRepo) -> bool:
    """Whether git records a file's executable bit here (``core.fileMode``, which git turns
    off itself on a filesystem without one): where it does not, no mode is compared."""
    return bool(repo.get_config().get_boolean((b"core",), b"filemode", True))


def holds(path: Path, blob: str, mode: int | None = None) -> bool:
    """Whether the file at ``path`` holds ``blob`` as git stores it, and ``mode`` (a file's
    100644 or 100755) when given: git records the executable bit as a change. Its bytes are
    the blob's where no attribute converts them; where one does (an eol conversion, a clean
    filter such as Git LFS's: a checkout writes other bytes than the blob's), git is asked
    what it would store for them (``stored_blob``). For judging, and for leaving a file
    alone: never to decide that a file may be written over or removed (a clean filter that
    drops lines would call uncommitted edits unchanged; rewind and prune compare bytes)."""
    if mode in _FILE_MODES and path.is_file() and not path.is_symlink() and \
            bool(path.stat().st_mode & 0o100) != (mode == _EXECUTABLE):  # the owner's, as git
        return False
    found = blob_of_file(path)
    if found == blob or found in (ABSENT, DIRECTORY) or path.is_symlink():
        return found == blob
    return stored_blob(path) == blob


def checkout_bytes(worktree: Path, path: str, blob: str, data: bytes) -> bytes:
    """What a checkout writes for ``blob`` at ``path`` (its attributes' eol conversion and
    smudge filter applied: `git cat-file --filters`); ``data``, the blob's own bytes, when
    git cannot say."""
    proc = git.run(["cat-file", "--filters", f"--path={path}", blob], worktree, check=False)
    return proc.stdout if proc.returncode == 0 else data


def stored_blob(path: Path) -> str:
    """The blob git would store for the file at ``path``, through the attributes of the
    checkout it is in (`git hash-object`); its bytes' own id outside a checkout."""
    if path.is_symlink() or not path.is_file():
        return blob_of_file(path)
    proc = git.run(["hash-object", "--", path.name], path.parent, check=False)
    found = proc.stdout.decode().strip()
    return found if proc.returncode == 0 and found else blob_of_file(path)


def check_ball(common_dir: Path, worktree: Path, ball: BallRecord,
               thrown: ThrowRecord) -> CheckResult:
    findings: list[Finding] = []
    head = git.rev_parse("HEAD", worktree) or thrown.base
    with open_repo(str(common_dir)) as repo:
        base_tree = repo.object_store[oid(thrown.base)].tree
        head_tree = repo.object_store[oid(head)].tree
        at_base = TreeResolver(repo, base_tree, worktree)
        at_head = TreeResolver(repo, head_tree, None)
        entries, modes = Objects(repo), exec_bit_counts(repo)

        def mode_at(real: str) -> int | None:
            found = entries.entry_at(head_tree, real) if modes else None
            return None if found is None else found[0]

        for entry in ball.scope:
            findings.extend(_check_entry(entry.path, entry.blob, at_base, at_head, worktree,
                                         mode_at))
    findings.extend(_dependencies(ball, worktree))
    return CheckResult(ball.slice, ball.ball, worktree, len(ball.scope), tuple(findings))


def _check_entry(path: str, stamp: str, at_base: TreeResolver, at_head: TreeResolver,
                 worktree: Path, mode_at: Callable[[str], int | None]) -> list[Finding]:
    try:
        base = at_base.resolve(path)  # L2: inside, not absolute, no '..', no symlink escape
        head = at_head.resolve(path)
    except ScopeError as exc:
        return [Finding(-1, path, str(exc))]
    if base.blob != stamp:
        return [Finding(-1, path, f"stale map: expected {stamp} (stamped at the cut), "
                                  f"actual {base.blob} at the throw base {base.path}")]
    mode = mode_at(head.real)
    if not holds(worktree / base.real, head.blob, mode):
        actual = stored_blob(worktree / base.real)
        if actual == head.blob and mode is not None:  # the bytes hold: the executable bit
            return [Finding(-1, path, f"changed outside any round: its mode is not "
                                      f"{mode:o}, as the commit has it")]
        return [Finding(-1, path, f"changed outside any round: expected {head.blob}, "
                                  f"actual {actual} in the worktree")]
    return []


def command_words(command: str) -> list[str]:
    """A command line's words as /bin/sh splits them, less its ``VAR=value`` prefixes, its
    operators (``;``, ``&&``, ``|``, a subshell's parentheses...), what follows a redirect
    and its comments; raises ValueError when it does not split (an unclosed quote). A word
    keeps no operator stuck to it: ``tests/a.py;`` is the file ``tests/a.py``."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True  # a comment runs to its line's end (inside a word too)
    words: list[str] = []
    redirected = False
    for token in lexer:
        if token and all(c in lexer.punctuation_chars for c in token):
            redirected = "<" in token or ">" in token
            continue
        if redirected:
            redirected = False
            continue
        words.append(token)
    while words and "=" in words[0] and not words[0].startswith("="):
        words.pop(0)  # VAR=value prefixes
    return words


def is_builtin(word: str) -> bool:
    """Whether /bin/sh itself answers ``word``, the first word of a command line: a builtin
    or a word that opens a compound command (``if``, ``{``)."""
    return word in _SHELL_BUILTINS or word in _SHELL_GRAMMAR


def _dependencies(ball: BallRecord, worktree: Path) -> list[Finding]:
    """L2: a missing dependency is a hold, not a refuse."""
    try:
        words = command_words(ball.proof)
    except ValueError:
        return []
    if not words:
        return []
    found: list[Finding] = []
    tool = words[0]
    if "/" in tool:
        if not (worktree / tool).exists() and not Path(tool).is_absolute():
            found.append(Finding(0, tool, "the proof's program does not exist in the worktree"))
    elif not is_builtin(tool) and shutil.which(tool) is None:
        found.append(Finding(0, tool, "the proof needs this tool, which is not installed"))
    scoped = set(ball.paths) | {s.resolved for s in ball.scope if s.resolved}
    for word in words[1:]:
        name = word.split("::", 1)[0]
        if "/" not in name or name.startswith(("-", "/")) or any(c in name for c in "*?$<>"):
            continue
        if name not in scoped and not (worktree / name).exists():
            found.append(Finding(0, name, "the proof needs this file, which does not exist "
                                          "(missing dependency)"))
    return found
