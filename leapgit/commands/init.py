"""`leap init`: write `.leap/config.yaml` and start the ledger branch. Idempotent."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from leapgit import git
from leapgit.commands.hooks import husky_lines
from leapgit.commands.init_signing import setup_signing, signing_key
from leapgit.errors import UsageError
from leapgit.hookimpl.install import install
from leapgit.ledger.workspace import Workspace, open_workspace, require_folder
from leapgit.records import yamlio
from leapgit.records.config import CONFIG_PATH, parse_config, spine_problems
from leapgit.records.types import LedgerRoot
from leapgit.timeutil import now_iso
from leapgit.worktrees.place import worktree_root

if TYPE_CHECKING:
    from leapgit.commands.init_signing import SigningSetup


@dataclass(frozen=True)
class SigningChoice:
    """What ``leap init --signing`` was told (or asked for): see ``init_signing``."""

    key: Path
    create: bool
    name: str
    roles: tuple[str, ...]
    require: bool | None


CONFIG_TEMPLATE = """\
# leapgit configuration. Every key is checked against schemas/config.schema.json.
version: 1

# The protected branch that passed balls merge onto, through one integrator (L8, L9).
spine: {spine}

# Where the ledger lives: an orphan branch, written only by leapgit, never checked out.
ledger_ref: {ledger_ref}

# Rounds a builder gets per episode. Four at most (L6: no fifth round).
round_limit: 4

# Ball branches are <prefix>/<slice>/<ball>.
ball_branch_prefix: leap/ball

# Where ball worktrees are created (default: a folder beside this checkout).
worktrees:
  # root: ../my-repo.leap-worktrees
  # A command run in each fresh worktree (ball, red, score) before anything else, for
  # generated or ignored files the proof needs: its output goes to the round's log.
  # setup: cp "$LEAP_REPO_ROOT/.env" . && make generated-files

# The builder: any command, run in the ball's worktree once per round.
builder:
  # command: my-agent --non-interactive --task "$LEAP_HANDOFF"
  # timeout: 1800

# The blind tribunal's rung matrix and verifiers (see README "Tribunal").
tribunal:
  rungs: []
  required_verifiers: []
"""


@dataclass(frozen=True)
class InitResult:
    root: Path
    config_path: Path
    config_written: bool
    ledger_ref: str
    ledger_commit: str
    ledger_created: bool
    spine: str = ""
    spine_chosen: str = ""  # why a new config names this spine, when --spine did not
    hooks: str = ""
    signing: SigningSetup | None = None
    husky: tuple[str, ...] = ()  # what husky's hook files must call (``hooks.husky_lines``)


def default_spine(root: Path) -> tuple[str, str]:
    """The spine a new config names when ``--spine`` is not given, and why that one."""
    # the full name: --short says heads/X where a tag X is named like the branch
    proc = git.run(["symbolic-ref", "--quiet", "HEAD"], root, check=False)
    full = proc.stdout.decode("utf-8", "surrogateescape").strip()
    if full.startswith("refs/heads/") and full != "refs/heads/":  # a branch, not a tag HEAD
        return full.removeprefix("refs/heads/"), "the checked-out branch"
    # detached: a branch the repository has (it took main, which a repository of trunk did
    # not have: every cut then refused it, a bad-input hunt); main when it has none
    # the ledger's branch and ball branches are no spine (a blind review: `leap/ledger`
    # was offered, and taken as the only branch)
    listed = [n for n in _branches(root) if not spine_problems(n)]
    configured = git.run(["config", "init.defaultBranch"], root, check=False).stdout.decode(
        "utf-8", "surrogateescape").strip()
    for name in (configured, "main", "master", "trunk"):
        if name and name in listed:
            return name, "no branch is checked out: the repository's " + \
                ("init.defaultBranch" if name == configured else "conventional branch")
    if len(listed) == 1:
        return listed[0], "no branch is checked out: the repository's only branch"
    if not listed:
        return "main", "no branch is checked out: the default"
    raise UsageError(f"no branch is checked out, and none of the {len(listed)} branches is "
                     "main, master or trunk: which one is the spine?", field="--spine",
                     rule="L8", hint=f"name it: `leap init --spine {shlex.quote(listed[0])}` "
                     f"(the branches: {', '.join(listed[:5])}{' ...' if len(listed) > 5 else ''})")


def _branches(root: Path) -> list[str]:
    """The repository's local branch names, sorted as git lists them."""
    out = git.run(["for-each-ref", "--format=%(refname:lstrip=2)", "refs/heads/"], root,
                  check=False).stdout.decode("utf-8", "surrogateescape")
    return [n for n in out.split("\n") if n]


def init(start: Path | str = ".", spine: str | None = None,
         signing: SigningChoice | None = None) -> InitResult:
    ws = open_workspace(start)
    if ws.paths.top is None:
        raise UsageError(
            f"{ws.paths.git_dir} is a bare repository",
            hint="run `leap init` in a clone of it, and `leap sync REMOTE` there pushes the "
            "ledger here; on a server, `leap hooks install --server` guards it",
        )
    root = ws.paths.top
    _not_in_a_ball_worktree(ws)
    ws.ledger().close()  # refuses what the ledger cannot live in (sha256) before any write
    config_path = root / CONFIG_PATH
    require_folder(config_path.parent, file=str(CONFIG_PATH),
                   hint=f"move it away: leapgit keeps its config in {CONFIG_PATH}")
    # the key checked before the config is written: a refused key leaves nothing behind
    signer = signing_key(key=signing.key, create=signing.create, name=signing.name,
                         roles=signing.roles) if signing is not None else None
    written, chosen = False, ""
    if not config_path.exists():
        # a spine given for a new config, with its default names: refused before anything
        # is written (an existing config's names are its own: checked when it is read)
        found = spine_problems(spine) if spine is not None else []
        if found:
            raise UsageError(problems=found)
        if spine is None:
            spine, chosen = default_spine(root)
            _default_spine_holds(root, spine, chosen)
        text = CONFIG_TEMPLATE.format(
            spine=yamlio.quote(spine),
            ledger_ref=yamlio.quote(ws.config.ledger_ref),
        )
        parse_config(text.encode(), str(CONFIG_PATH))  # a bad --spine is refused, not written
        config_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = config_path.with_name(f".config.yaml.{os.getpid()}.tmp")
        try:
            tmp.write_text(text, encoding="utf-8")
            tmp.replace(config_path)
        finally:
            tmp.unlink(missing_ok=True)
        written = True
        ws = open_workspace(root)
    elif spine and spine != ws.config.spine:
        raise UsageError(
            f"{CONFIG_PATH} already names spine {ws.config.spine!r}", file=str(CONFIG_PATH),
            field="spine", hint="edit the file to change the spine",
        )
    setup = None
    if signing is not None:  # before the ledger's first commit, so that one is signed too

        assert signer is not None
        setup = setup_signing(root, chosen=signer, name=signing.name, roles=signing.roles,
                              require=signing.require)
        ws = open_workspace(root)
    root_record = yamlio.dumps(LedgerRoot(now_iso(), ws.config.spine).to_dict())
    with ws.ledger() as ledger:
        commit, created = ledger.init(root_record)
    hooks, husky = _install_hooks(root)
    return InitResult(
        root=root, config_path=config_path, config_written=written,
        ledger_ref=ws.config.ledger_ref, ledger_commit=commit, ledger_created=created,
        spine=ws.config.spine, spine_chosen=chosen, hooks=hooks, signing=setup, husky=husky,
    )


def _default_spine_holds(root: Path, spine: str, chosen: str) -> None:
    """The branch ``default_spine`` took, refused as the names' rules refuse a ``--spine``
    (a branch under the ball prefix, say), before any file is written: said of the branch
    and where it came from, with the ``--spine`` that inits: a branch the repository has
    that the names' rules take, else main."""
    found = spine_problems(spine, field="spine")
    if not found:
        return
    configured = git.run(["config", "init.defaultBranch"], root, check=False).stdout
    listed = _branches(root)
    names = [configured.decode("utf-8", "surrogateescape").strip(), "main", "master", "trunk"]
    # a conventional name first, then any branch the rules take; main when there is none
    other = next((n for n in [*(n for n in names if n in listed), *sorted(listed)]
                  if n and n != spine and not spine_problems(n)), "main")
    said = f"{spine!r} ({chosen})"
    raise UsageError(problems=[p._replace(
        message=p.message.replace(repr(spine), said, 1) if repr(spine) in p.message else
        f"{p.message} (the spine {said})",
        hint=f"name the spine: `leap init --spine {shlex.quote(other)}`") for p in found])


def _not_in_a_ball_worktree(ws: Workspace) -> None:
    """A ball's worktree holds the ball's files and nothing else of leapgit's: a config
    written there is a change outside the ball's scope (its next round a breach, L4), and
    would name the ball's branch as the spine. Known by its branch, or by its place (a
    rebase there detaches HEAD)."""
    if ws.paths.git_dir.resolve() == ws.paths.common_dir.resolve() or ws.paths.top is None:
        return
    proc = git.run(["symbolic-ref", "--quiet", "HEAD"], ws.paths.root, check=False)
    branch = proc.stdout.decode("utf-8", "surrogateescape").strip().removeprefix("refs/heads/")
    top = ws.paths.top.resolve()
    if branch.startswith(f"{ws.config.ball_branch_prefix}/"):
        what = f"the worktree of ball branch {branch}"
    elif top.is_relative_to(worktree_root(ws).resolve()):
        what = "a ball's worktree"
    else:
        return
    main = ws.main_top
    where = f"the repository's main checkout, {main}" if main is not None else \
        "a checkout of the spine that is no ball's worktree"
    raise UsageError(f"this is {what}: a config written here would be a change outside "
                     "the ball's scope", rule="L4", hint=f"run `leap init` in {where}")


def _install_hooks(root: Path) -> tuple[str, tuple[str, ...]]:
    try:
        result = install(root)
    except UsageError as exc:
        return f"not installed: {exc.lines()[0]}", ()
    return f"post-commit, pre-push in {result.hooks_dir}", tuple(husky_lines(result.husky))
