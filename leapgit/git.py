"""Plain git, run as a subprocess with a scrubbed environment, and repository discovery.

Hooks inherit ``GIT_DIR``, ``GIT_INDEX_FILE`` and friends from the git that called them; a
git started for another repository (or another worktree) must not see them.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from leapgit.errors import EXIT_HOLD, LeapError, UsageError
from leapgit.records.types import ABSENT

# Variables that describe *which* repository git works on. Identity and config variables
# (GIT_AUTHOR_*, GIT_CONFIG_*) are left alone.
_LOCATION_VARS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_QUARANTINE_PATH",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
)


class GitFailed(LeapError):
    """A git command this program needed failed."""


class RemoteUnavailable(GitFailed):
    """A remote that did not answer (git could not reach it), or could not judge a push (its
    hook failed closed on an error of its own): nothing was pushed, a hold (exit 3). A loop
    that can wait (`leap run --remote`, `leap worker`) looks again (``loop.remote.Reach``)."""

    exit_code = EXIT_HOLD


# What git says of a remote it could not talk to at all, and what a leapgit server hook
# says when it cannot judge a push (``hookimpl.failclosed``): worth looking again later.
UNAVAILABLE = ("unable to connect", "Could not read from remote", "unable to access",
               "Connection refused", "Could not resolve host", "does not appear to be a git",
               "No such file or directory", "Connection reset", "the remote end hung up",
               "access denied or repository not exported", "internal error, refusing")


# What git says when the connection dropped mid-push: the refs may have moved already.
DROPPED = ("unexpected disconnect", "error in sideband demultiplexer")
# The remote took the connection but could not store the objects (its disk full or moved
# away mid-push, a size limit): no ref moved, no hook judged anything.
UNSTORED = ("remote unpack failed", "(unpacker error)")
# ... said by the remote (``remote:`` lines): with none, this clone failed to send (an object
# it lacks: "fatal: unable to read"), and it says so itself. Nor is the remote refusing what
# it read (its fsck, its reachability check) a failure to store.
STORED_BUT_REFUSED = ("fsck error", "unable to read", "are reachable", "reachable objects")
# ... unless the remote answered and said no: an HTTP 4xx, an ssh key it does not take
REFUSED = ("The requested URL returned error: 4", "Permission denied")


def unavailable(text: str) -> bool:
    return any(why in text for why in UNAVAILABLE) and not any(no in text for no in REFUSED)


def unavailable_push(remote: str, text: str, remote_lines: list[str], root: Path | str
                     ) -> RemoteUnavailable | None:
    """What a failed push (from ``root``) says when the remote did not answer, or its hook
    could not judge the push (``remote_lines``: what the server said); None for a refusal
    or anything else."""
    if any(cut in text for cut in DROPPED):  # after the refs moved, or before: unknown
        return RemoteUnavailable(f"the connection to {remote} dropped during the push "
                                 f"({says(text) or 'no answer'}): it may have landed",
                                 hint="the next look at the remote tells")
    if any(lost in text for lost in UNSTORED) and remote_lines and \
            not any(no in text for no in STORED_BUT_REFUSED):
        stored = [ln[7:].strip() for ln in remote_lines] or [says(text) or "no word"]
        return RemoteUnavailable(f"{remote} could not store the push ({stored[-1]}): nothing "
                                 "was pushed", hint="its disk, its rights or a size limit of "
                                 "its own (receive.maxInputSize): try again; if it stays, "
                                 "its keeper reads the server's side")
    broken = [ln[7:].strip() for ln in remote_lines if "internal error, refusing" in ln]
    if broken:
        return RemoteUnavailable(f"{remote} could not judge the push: {broken[0]}; nothing "
                                 "was pushed", hint="its hook failed on an error of its own: "
                                 "try again; if it stays, its keeper reads the server's side")
    if remote_lines or not unavailable(text):
        return None
    # a git daemon says "access denied" both for a repository it cannot find now and for
    # one it serves to fetches only: a look tells the two apart
    if "access denied" in text and run(["ls-remote", remote, "refs/leap/probe"], root,
                                       check=False).returncode == 0:
        return None
    return RemoteUnavailable(f"cannot reach {remote}: {says(text) or 'no answer'}; nothing was "
                             "pushed (an atomic push lands whole or not at all)",
                             hint="check the remote's URL and that it is reachable")


def scrubbed_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _LOCATION_VARS}
    env.setdefault("GIT_TERMINAL_PROMPT", "0")
    env["LC_ALL"] = "C"
    # issue 18 F3: leapgit reads the objects the rules judged, never a replace ref's (dulwich
    # reads none either); ref names are given in full where a tag could shadow a short one
    env["GIT_NO_REPLACE_OBJECTS"] = "1"
    if _as_is:
        _read_as_is(env)
    if extra:
        env.update(extra)
    return env


_as_is = 0  # inside ``as_is``: how deep


@contextlib.contextmanager
def as_is() -> Iterator[None]:
    """The audit's reading: every git run inside reads the commits as they are and changes
    nothing in the repository (``_read_as_is``)."""
    global _as_is
    _as_is += 1
    try:
        yield
    finally:
        _as_is -= 1


def _read_as_is(env: dict[str, str]) -> None:
    """No graft's parents (``info/grafts``, or a graft file the environment names: a local
    hack that would hide commits and their edits), and none of git's housekeeping (`gc
    --auto` after a partial clone's fetches of what the audit reads would pack refs and
    expire reflogs the audit judges). Only for reading: a git that writes keeps the user's
    grafts, so its cleanup never drops history only a graft holds."""
    env["GIT_GRAFT_FILE"] = os.devnull
    count = int(env.get("GIT_CONFIG_COUNT", "0") or "0")
    for key, value in (("gc.auto", "0"), ("maintenance.auto", "false")):
        env[f"GIT_CONFIG_KEY_{count}"], env[f"GIT_CONFIG_VALUE_{count}"] = key, value
        count += 1
    env["GIT_CONFIG_COUNT"] = str(count)


@contextlib.contextmanager
def _worktree_lock(args: Sequence[str], cwd: Path | str) -> Iterator[None]:
    """`git worktree` commands of one repository, one at a time, across threads and
    processes: each reads every worktree's admin folder, and one another writes half-way
    fails (`fatal: failed to read .git/worktrees/<name>/commondir`), as two scorings or two
    reds of `leap run` would make it."""
    if not args or args[0] != "worktree":
        yield
        return
    from filelock import FileLock

    common = _common_dir(cwd)
    if common is None:
        yield
        return
    with FileLock(str(common / "leap-worktree.lock"), thread_local=False):
        yield


# The git common dir of each folder asked about (a folder's repository does not move
# under a running process; `leap run` asks once per worktree command otherwise).
_common_dirs: dict[str, Path] = {}


def _common_dir(cwd: Path | str) -> Path | None:
    key = os.path.abspath(cwd)
    found = _common_dirs.get(key)
    if found is None:
        proc = subprocess.run(["git", "rev-parse", "--git-common-dir"], cwd=cwd,
                              capture_output=True, env=scrubbed_env())
        if proc.returncode != 0:
            return None
        found = _common_dirs[key] = Path(key) / os.fsdecode(proc.stdout.strip())
    return found


def run(
    args: Sequence[str],
    cwd: Path | str,
    *,
    input: bytes | None = None,
    check: bool = True,
    env: Mapping[str, str] | None = None,
    detached: bool = False,
) -> subprocess.CompletedProcess[bytes]:
    """``detached``: in a session of its own, so a Ctrl-C in the terminal (SIGINT to the
    foreground process group) reaches leapgit, which decides, and never kills this git (and
    the hooks it runs) half way through a write leapgit must finish."""
    try:
        with _worktree_lock(args, cwd):
            proc = subprocess.run(
                ["git", *args],
                cwd=cwd,
                input=input,
                capture_output=True,
                env=scrubbed_env(env),
                start_new_session=detached,
            )
    except (FileNotFoundError, NotADirectoryError) as exc:
        if not os.path.isdir(cwd):  # the folder git was to run in, not git, is missing
            raise GitFailed(f"git {' '.join(args[:2])} cannot run in {cwd}: no such folder "
                            "(deleted or moved while leap ran?)") from exc
        raise GitFailed("git is not installed or not on PATH", hint="install git") from exc
    if check and proc.returncode != 0:
        # git's fatal:/error: line names what failed (the index.lock it found); the lines
        # after it are advice ("remove the file manually to continue.", a usage line)
        detail = says(proc.stderr.decode(errors="replace")) or f"exit {proc.returncode}"
        raise GitFailed(f"git {' '.join(args[:2])} failed: {detail}")
    return proc


def out(args: Sequence[str], cwd: Path | str) -> str:
    return run(args, cwd).stdout.decode().strip()


class RepoPaths(NamedTuple):
    """Where a repository lives: its work tree (None when bare) and its git dirs."""

    top: Path | None
    git_dir: Path
    common_dir: Path

    @property
    def bare(self) -> bool:
        return self.top is None

    @property
    def root(self) -> Path:
        """The work tree, or the git dir of a bare repository."""
        return self.top if self.top is not None else self.git_dir


def discover(start: Path | str = ".") -> RepoPaths:
    proc = run(
        ["rev-parse", "--is-bare-repository", "--absolute-git-dir", "--git-common-dir",
         "--show-toplevel"],
        start,
        check=False,
    )
    lines = proc.stdout.decode().splitlines()
    # In a bare repository --show-toplevel fails after printing the rest: still a repository.
    if proc.returncode != 0 and not (len(lines) >= 3 and lines[0] == "true"):
        raise UsageError(
            f"not inside a git repository: {Path(start).resolve()}",
            hint="run this inside a git repository, or `git init` one first",
        )
    bare = lines[0] == "true"
    git_dir = Path(lines[1])
    common = Path(lines[2])
    if not common.is_absolute():
        common = (Path(start).resolve() / common).resolve()
    top = None if bare or len(lines) < 4 else Path(lines[3])
    return RepoPaths(top=top, git_dir=git_dir, common_dir=common)


def rev_parse(rev: str, cwd: Path | str) -> str | None:
    proc = run(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], cwd, check=False)
    return proc.stdout.decode().strip() if proc.returncode == 0 else None


def changed_files(root: Path, base: str, commit: str) -> list[str]:
    raw = run(["diff", "--name-only", "-z", "--no-renames", base, commit], root).stdout
    return sorted(p.decode("utf-8", "surrogateescape") for p in raw.split(b"\0") if p)


def blob_at(root: Path, commit: str, path: str) -> str:
    proc = run(["rev-parse", "--verify", "--quiet", f"{commit}:{path}"], root, check=False)
    return proc.stdout.decode().strip() or ABSENT


def is_ancestor(root: Path, older: str, newer: str) -> bool:
    return run(["merge-base", "--is-ancestor", older, newer], root,
                   check=False).returncode == 0


def branch_remote(root: Path, branch: str) -> str | None:
    """What ``branch.<branch>.remote`` says (a remote's name, a URL or a path), or None:
    unset, empty, or ``.`` (a branch of this repository)."""
    proc = run(["config", "--get", f"branch.{branch}.remote"], root, check=False)
    name = proc.stdout.decode("utf-8", "surrogateescape").strip()
    return name if proc.returncode == 0 and name and name != "." else None


def leap_tracking(remote: str, ref: str) -> str:
    """Where this clone keeps ``remote``'s copy of ``ref`` (``refs/heads/X``) that leapgit
    fetched (`leap sync`, the loop's looks): apart from git's own ``refs/remotes/``."""
    return f"refs/leap/remotes/{remote}/{ref.removeprefix('refs/')}"


def remotes_holding(ref: str, names: Iterable[str], remotes: Iterable[str]) -> list[str]:
    """Those of ``remotes`` (the clone's remotes, by name) whose copy of ``ref``
    (``refs/heads/X``) this clone keeps among the ref ``names`` given: where leapgit fetched
    it (``leap_tracking``) or where git did (``refs/remotes/<remote>/X``). Named remotes
    only: ``refs/remotes/origin/wip/main`` is origin's ``wip/main``, never a copy of
    ``main`` from a remote called ``origin/wip``."""
    held = set(names)
    branch = ref.removeprefix("refs/heads/")
    return [r for r in remotes
            if leap_tracking(r, ref) in held or f"refs/remotes/{r}/{branch}" in held]


def shallow_commits(common_dir: Path) -> frozenset[str]:
    """The commits a shallow clone (`git clone --depth`) holds without their parents, as
    git lists them in the common git dir's ``shallow`` file: empty in a whole clone."""
    try:
        text = (common_dir / "shallow").read_text("ascii", errors="replace")
    except OSError:
        return frozenset()
    return frozenset(text.split())


def remotes(root: Path) -> list[str]:
    """The names of the repository's remotes, in git's order."""
    return [name for name in run(["remote"], root).stdout.decode(
        "utf-8", "surrogateescape").split("\n") if name]


def reflog_moves(root: Path, ref: str, tip: str | None) -> list[str]:
    """The commits ``ref`` moved to, newest first, as its reflog records them (what `git
    reflog show --format=%H` lists), less a line for a move that never happened: a writer
    (dulwich or git) appends the line before it renames the ref's lock into place, and one
    killed in between left it. Such a line is the last with the ref still at its old tip,
    or the next line moves the ref from that same old tip (issue 18 F7)."""
    where = Path(out(["rev-parse", "--git-path", f"logs/{ref}"], root))
    try:
        text = (where if where.is_absolute() else Path(root) / where).read_bytes()
    except OSError:
        return []
    moves = []
    for line in text.splitlines():
        fields = line.split(b"\t", 1)[0].split(b" ")
        if len(fields) >= 2 and len(fields[0]) == len(fields[1]) == 40:
            moves.append((fields[0].decode(), fields[1].decode()))
    zero = "0" * 40
    found = []
    for i, (old, new) in enumerate(moves):
        after = moves[i + 1][0] if i + 1 < len(moves) else (tip or zero)
        if new != zero and (after != old or old == new):
            found.append(new)
    return found[::-1]


def says(err: str) -> str:
    """What a failed git command said: its first ``fatal:`` or ``error:`` line, else its
    last (its advice lines come after, e.g. "and the repository exists.")."""
    lines = [ln.strip() for ln in err.strip().splitlines() if ln.strip()]
    return next((ln for ln in lines if ln.startswith(("fatal:", "error:"))),
                lines[-1] if lines else "")
