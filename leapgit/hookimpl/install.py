"""Install and uninstall leapgit's hooks, the way the pre-commit framework does: a small
templated script pinning the interpreter that installed leapgit, an id line so leapgit
knows its own files, a foreign hook moved aside and chained (it runs first), and restored
byte for byte, mode and all, on uninstall (it is linked and renamed, never copied)."""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import NamedTuple

from dulwich.refs import check_ref_format

from leapgit import git
from leapgit.errors import UsageError
from leapgit.gitobj import refname
from leapgit.hookimpl import post_commit
from leapgit.hookimpl.chain import LEGACY_SUFFIX
from leapgit.ledger.workspace import require_folder
from leapgit.records.config import check_refs
from leapgit.records.types import Config
from leapgit.rules.context import PIN_LEDGER, PIN_SPINE

ID_LINE = b"# leapgit-hook-id: 7f3c9a5e-leapgit"
CLIENT_HOOKS = ("post-commit", "pre-push")
SERVER_HOOKS = ("pre-receive",)
MODULES = {
    "post-commit": "leapgit.hookimpl.post_commit",
    "pre-push": "leapgit.hookimpl.pre_push",
    "pre-receive": "leapgit.hookimpl.pre_receive",
}
# A guard hook whose interpreter is gone refuses (fail closed); post-commit cannot.
MISSING_EXIT = {"post-commit": "0", "pre-push": "1", "pre-receive": "1"}


@dataclass(frozen=True)
class HookAction:
    hook: str
    path: Path
    action: str


class Setting(NamedTuple):
    """One of git's own settings a server install turns on, and what it is for."""

    key: str
    value: str
    why: str


@dataclass(frozen=True)
class HooksResult:
    hooks_dir: Path
    actions: tuple[HookAction, ...]
    pinned: tuple[tuple[str, str], ...] = ()  # (git config key, value) set on a server
    settings: tuple[Setting, ...] = ()  # git's own settings a server install sets
    husky: Path | None = None  # husky's folder of hook files, which must call leapgit's
    # a server whose HEAD names a branch it holds, while it holds none of the pinned spine
    unpinned_head: str | None = None


def husky_folder(effective: Path) -> Path | None:
    """The folder of the project's own husky hook files, when ``core.hooksPath`` hands git's
    hooks to husky: v9 points it at husky's generated ``.husky/_`` (a dispatcher ``h`` that
    runs ``.husky/<hook>``, named after the script that sourced it), v8 at ``.husky`` itself
    (with ``_/husky.sh``). leapgit's hooks cannot live there: husky rewrites ``_`` on every
    install, v9's dispatcher finds no hook for a chained ``<hook>.leap-legacy``, and v8's
    folder is tracked."""
    if effective.name == "_" and (effective / "h").is_file():
        return effective.parent
    if (effective / "_" / "husky.sh").is_file():
        return effective
    return None


def husky_line(hook: str) -> str:
    """The line a husky hook file runs leapgit's ``hook`` with, from the common git dir's
    hooks; it does nothing in a clone without leapgit's hooks installed."""
    return (f'h="$(git rev-parse --git-common-dir)/hooks/{hook}"; '
            f'[ ! -x "$h" ] || "$h" "$@"')


def render(hook: str, python: str | None = None) -> bytes:
    text = resources.files("leapgit._hooks").joinpath("hook.sh").read_text("utf-8")
    for key, value in (("@HOOK@", hook), ("@COMMAND@", command(hook)),
                       ("@PYTHON@", shlex.quote(python or sys.executable)),
                       ("@MISSING_EXIT@", MISSING_EXIT[hook])):
        text = text.replace(key, value)
    return text.encode("utf-8")


def command(hook: str) -> str:
    """How the hook starts Python. post-commit runs on every commit: it starts without
    ``site`` (-S), decides from HEAD whether it has anything to do, and loads ``site`` only
    when it has (see ``post_commit.main``)."""
    if hook == "post-commit":
        return f"-I -S {shlex.quote(str(Path(post_commit.__file__).resolve()))}"
    return f"-I -m {MODULES[hook]}"


def is_ours(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return ID_LINE in fh.read(4096)
    except OSError:
        return False


def hooks_dir(paths: git.RepoPaths, force: bool) -> Path:
    """Where git looks for hooks: the common git dir's ``hooks`` (so linked worktrees share
    them) unless ``core.hooksPath`` says otherwise, which needs ``force``."""
    default = paths.common_dir / "hooks"
    effective = Path(git.out(["rev-parse", "--git-path", "hooks"], paths.root))
    if not effective.is_absolute():
        effective = (paths.root / effective).resolve()
    if effective.resolve() != default.resolve() and not force:
        raise UsageError(
            f"core.hooksPath sends git to {effective}, not {default}",
            field="core.hooksPath",
            hint="pass --force to install there, or unset core.hooksPath",
        )
    real = effective.resolve()
    if paths.top is not None and real.is_relative_to(paths.top.resolve()) and \
            not real.is_relative_to(paths.common_dir.resolve()) and not force:
        # A hooks folder linked into the work tree: installing would write tracked files.
        raise UsageError(
            f"git's hooks folder {effective} resolves to {real}, inside the work tree",
            field="hooks", hint="pass --force to write leapgit's hooks there anyway, or "
                                "make the hooks folder a plain folder inside .git",
        )
    return effective


def _staged(path: Path, data: bytes) -> Path:
    """``data`` written beside ``path``, executable, ready to take its place in one rename."""
    tmp = path.with_name(path.name + ".leap-tmp")
    tmp.write_bytes(data)
    tmp.chmod(0o755)
    return tmp


def _write(path: Path, data: bytes) -> None:
    os.replace(_staged(path, data), path)


def _same_file(a: Path, b: Path) -> bool:
    one, two = os.lstat(a), os.lstat(b)
    return (one.st_dev, one.st_ino) == (two.st_dev, two.st_ino)


def install_one(folder: Path, hook: str) -> HookAction:
    target = folder / hook
    legacy = folder / (hook + LEGACY_SUFFIX)
    data = render(hook)
    if not (target.exists() or target.is_symlink()):
        _write(target, data)
        return HookAction(hook, target, "installed")
    if is_ours(target):
        if target.read_bytes() == data:
            return HookAction(hook, target, "already installed")
        _write(target, data)
        return HookAction(hook, target, "updated")
    interrupted = (legacy.exists() or legacy.is_symlink()) and _same_file(target, legacy)
    if (legacy.exists() or legacy.is_symlink()) and not interrupted:
        raise UsageError(
            f"both {target.name} and {legacy.name} are foreign hooks", file=str(target),
            hint=f"merge them by hand into {legacy.name}, remove {target.name}, and install "
                 "again; leapgit never overwrites a hook it did not write",
        )
    # blind review r2 (reversibility): the foreign hook stays at its place until leapgit's
    # takes it in one rename; moved aside first, a failure in between left a server with
    # no pre-receive. A hard link is the same file under the legacy name, not a copy; one
    # left by an install that died before the rename is that install's (``interrupted``)
    staged = _staged(target, data)
    if not interrupted:
        try:
            os.link(target, legacy, follow_symlinks=False)
        except OSError:  # a filesystem without hard links: two renames, a moment apart
            os.replace(target, legacy)
    os.replace(staged, target)
    return HookAction(hook, target, f"installed; the existing hook runs first, from {legacy.name}")


def pin_server_refs(paths: git.RepoPaths, spine: str | None,
                    ledger_ref: str | None) -> tuple[tuple[str, str], ...]:
    """Pin the spine and the ledger ref in the server's own git config, which no push can
    change (a branch's ``.leap/config.yaml`` can be written by any pusher). An option given
    wins; else an earlier pin stays; else the defaults."""

    def current(key: str) -> str | None:
        proc = git.run(["config", "--local", "--get", key], paths.git_dir, check=False)
        if proc.returncode != 0:
            return None
        return proc.stdout.decode().strip() or None

    spine = spine or current(PIN_SPINE) or Config().spine
    ledger_ref = ledger_ref or current(PIN_LEDGER) or Config().ledger_ref
    if not check_ref_format(refname(f"refs/heads/{spine}")):
        raise UsageError(f"{spine!r} is not a valid branch name", field="--spine",
                         hint="name the spine branch, e.g. main")
    check_refs(Config(spine=spine, ledger_ref=ledger_ref), "--spine/--ledger-ref")
    pins = ((PIN_SPINE, spine), (PIN_LEDGER, ledger_ref))
    for key, value in pins:
        git.run(["config", "--local", key, value], paths.git_dir)
    return pins


SERVER_SETTINGS = (
    # git checks every pushed object before pre-receive runs: a tree naming an entry twice
    # (git reads the first, dulwich the last) never reaches the rules; pre-receive refuses
    # one anyway (``rules/trees.py``), for a server where this is off
    Setting("receive.fsckObjects", "true", "git checks every pushed object before the "
            "hook runs"),
    # issue 18 F3: the server's own git (`git show main:...`, `git archive`, mirrors) never
    # shows a replace ref's object in place of the one the rules judged; pre-receive
    # refuses replace refs, and this covers one planted before the hook or by hand
    Setting("core.useReplaceRefs", "false", "so git show, git archive and mirrors on the "
            "server never show a refs/replace/ object in place of the one the rules judged"),
)


def server_settings(paths: git.RepoPaths) -> tuple[Setting, ...]:
    for setting in SERVER_SETTINGS:
        git.run(["config", "--local", setting.key, setting.value], paths.git_dir)
    return SERVER_SETTINGS


def install(start: Path | str = ".", *, server: bool = False, force: bool = False,
            spine: str | None = None, ledger_ref: str | None = None) -> HooksResult:
    paths = git.discover(start)
    if paths.bare and not server:
        raise UsageError(f"{paths.git_dir} is a bare repository; client hooks need a work tree",
                         hint="on a server, run `leap hooks install --server`")
    if (spine or ledger_ref) and not server:
        raise UsageError("--spine and --ledger-ref pin the refs a server protects",
                         hint="pass them with --server; a clone reads .leap/config.yaml")
    husky = None if server else husky_folder(Path(git.out(
        ["rev-parse", "--path-format=absolute", "--git-path", "hooks"], paths.root)))
    # with husky, leapgit's hooks go where git looks without core.hooksPath, and husky's
    # hook files call them (``husky_line``); never into husky's folder, even with --force
    folder = paths.common_dir / "hooks" if husky else hooks_dir(paths, force)
    require_folder(folder, field="hooks",  # before a server's pins: nothing half-set
                   hint="move it away, or point core.hooksPath at a folder")
    pins = pin_server_refs(paths, spine, ledger_ref) if server else ()
    settings = server_settings(paths) if server else ()
    folder.mkdir(parents=True, exist_ok=True)
    hooks = SERVER_HOOKS if server else CLIENT_HOOKS
    return HooksResult(folder, tuple(install_one(folder, h) for h in hooks), pins, settings,
                       husky, _unpinned_head(paths, dict(pins)) if server else None)


def _unpinned_head(paths: git.RepoPaths, pins: dict[str, str]) -> str | None:
    """The branch a server holds while it holds none of the pinned spine: its HEAD's, or
    its only branch besides the ledger and ball branches (a `trunk` or `master` server
    pinned to the default `main` protects nothing yet). A server that holds the spine, or
    no branch yet, or several with none at HEAD, says nothing (`git init --bare` names
    `master` on many servers whose projects push `main`)."""
    spine = pins[PIN_SPINE]
    if git.rev_parse(f"refs/heads/{spine}", paths.git_dir) is not None:
        return None
    proc = git.run(["symbolic-ref", "--quiet", "--short", "HEAD"], paths.git_dir, check=False)
    head = proc.stdout.decode("utf-8", "surrogateescape").strip()
    if head and git.rev_parse(f"refs/heads/{head}", paths.git_dir) is not None:
        return head
    listed = git.run(["for-each-ref", "--format=%(refname)", "refs/heads/"], paths.git_dir)
    names = [n.removeprefix("refs/heads/") for n in listed.stdout.decode(
        "utf-8", "surrogateescape").split("\n") if n and n != pins[PIN_LEDGER]]
    others = [n for n in names if not n.startswith("leap/")]
    return others[0] if len(others) == 1 else None


def uninstall_one(folder: Path, hook: str) -> HookAction | None:
    target = folder / hook
    legacy = folder / (hook + LEGACY_SUFFIX)
    if not (target.exists() or target.is_symlink()):
        return None
    if not is_ours(target):
        return HookAction(hook, target, "not leapgit's; left alone")
    if legacy.exists() or legacy.is_symlink():
        os.replace(legacy, target)
        return HookAction(hook, target, "removed; the original hook is back")
    target.unlink()
    return HookAction(hook, target, "removed")


def uninstall(start: Path | str = ".") -> HooksResult:
    """Remove leapgit's hooks from where git looks now and from the common git dir's
    ``hooks`` (an install may predate a change of ``core.hooksPath``); each folder gets its
    own chained hook back."""
    paths = git.discover(start)
    effective = hooks_dir(paths, force=True)
    folders: dict[Path, Path] = {}
    for folder in (paths.common_dir / "hooks", effective):
        folders.setdefault(folder.resolve(), folder)
    done = [uninstall_one(folder, h) for folder in folders.values()
            for h in (*CLIENT_HOOKS, *SERVER_HOOKS)]
    return HooksResult(effective, tuple(a for a in done if a is not None))
