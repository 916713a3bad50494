"""The spine, in plain git: predict a merge (``git merge-tree --write-tree``, which writes
objects and never a ref or a file), make the integration merge commit, move the spine ref,
and push to the spine's remote so the server's ``pre-receive`` judges it."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from leapgit import git
from leapgit.errors import LeapError, RuleViolation, UsageError
from leapgit.ledger.repo import open_repo
from leapgit.ledger.sync import located, require_remote
from leapgit.records import trailers as tr
from leapgit.records.config import CONFIG_PATH, Config, parse_config
from leapgit.rules.push import NOTHING_SENT
from leapgit.signing.sign import configured_signer

if TYPE_CHECKING:
    from leapgit.ledger.workspace import Workspace
    from leapgit.records.types import Config

MERGE_TRAILERS = (tr.SLICE, tr.BALL, tr.CANDIDATE, tr.TRIBUNAL, tr.SCORE)


@dataclass(frozen=True)
class Predicted:
    tree: str
    conflicts: tuple[str, ...]


def predict(root: Path, tip: str, candidate_commit: str) -> Predicted:
    """What merging ``candidate_commit`` onto ``tip`` gives, computed in the object store."""
    proc = git.run(["merge-tree", "--write-tree", "--name-only", "--no-messages", tip,
                    candidate_commit], root, check=False)
    lines = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
    if proc.returncode not in (0, 1) or not lines:
        err = proc.stderr.decode(errors="replace").strip()
        raise git.GitFailed(f"git merge-tree failed: {err or proc.returncode}",
                            hint="git 2.38 or newer is needed for merge-tree --write-tree")
    conflicts = tuple(sorted({p for p in lines[1:] if p.strip()}))
    return Predicted(lines[0].strip(), conflicts if proc.returncode == 1 else ())


def merge_message(slice_id: str, ball: str, candidate: str, run_id: str, score: int) -> str:
    values = (slice_id, ball, candidate, run_id, str(score))
    return tr.format_message(f"leap: integrate {slice_id}/{ball} (candidate {candidate[:12]})",
                             list(zip(MERGE_TRAILERS, values, strict=True))).decode()


def merge_commit(root: Path, tip: str, candidate_commit: str, tree: str, message: str) -> str:
    """The one function that makes an integration merge commit: first parent the spine,
    second the ball's candidate commit; signed with the integrator's key when one is
    configured (the same key the ledger commits of this run are signed with)."""
    sign = _signing_args(root)
    args = [*sign, "commit-tree", tree, "-p", tip, "-p", candidate_commit,
            *(["-S"] if sign else []), "-F", "-"]
    proc = git.run(args, root, input=message.encode(), check=False)
    if proc.returncode != 0 and b"tell me who you are" in proc.stderr:
        proc = git.run(["-c", "user.name=leapgit", "-c", "user.email=leapgit@localhost", *args],
                       root, input=message.encode())
    if proc.returncode != 0:
        raise git.GitFailed(f"git commit-tree failed: {proc.stderr.decode().strip()}")
    return proc.stdout.decode().strip()


def _signing_args(root: Path) -> list[str]:
    """git's own SSH signing, with the key leapgit's ledger writes use (issue 7)."""
    with open_repo(str(root)) as repo:
        signer = configured_signer(repo.get_config_stack())
    if signer is None:
        return []
    return ["-c", "gpg.format=ssh", "-c", f"user.signingKey={signer.key}"]


def checkout_of(root: Path, spine: str) -> Path | None:
    """The worktree that has the spine checked out, if any."""
    text = git.run(["worktree", "list", "--porcelain"], root).stdout.decode()
    for block in text.strip().split("\n\n"):
        fields = dict(line.partition(" ")[::2] for line in block.splitlines() if line)
        if fields.get("branch") == f"refs/heads/{spine}":
            return Path(fields["worktree"])
    return None


def require_clean(root: Path, spine: str) -> None:
    where = checkout_of(root, spine)
    if where is None:
        return
    # leapgit's own config is read from the work tree, and a fast-forward that does not
    # touch it keeps its changes (``move_spine``): a builder, rungs or red set after it was
    # committed stopped every merge, and stashing it took the config the merge runs on
    # (a newcomer's hunt)
    dirty = git.run(["status", "--porcelain", "--untracked-files=no", "--", ".",
                     f":(exclude){CONFIG_PATH.as_posix()}"], where).stdout.strip()
    if dirty:
        raise UsageError(f"the spine {spine!r} is checked out in {where} with uncommitted "
                         "changes", hint=f"stash them (`git -C {shlex.quote(str(where))} "
                         "stash`), then the same command again; a change to keep lands through "
                         "a slice of its own (the spine takes only integration merges); nothing "
                         "was written")


def blocking_untracked(where: Path, old: str, new: str) -> list[str]:
    """Untracked (not ignored) files in the checkout ``where`` that fast-forwarding from
    ``old`` to ``new`` would overwrite: a path the merge adds, or a file where it needs a
    directory."""
    added = git.run(["diff", "--name-only", "-z", "--no-renames", "--diff-filter=A", old, new],
                    where).stdout.decode("utf-8", "surrogateescape").split("\0")
    added_set = {p for p in added if p}
    if not added_set:
        return []
    raw = git.run(["ls-files", "--others", "--exclude-standard", "-z"], where).stdout
    untracked = {p for p in raw.decode("utf-8", "surrogateescape").split("\0") if p}
    dirs = {d for p in added_set for d in _parents(p)}
    return sorted(p for p in untracked if p in added_set or p in dirs
                  or any(p.startswith(a + "/") for a in added_set))


def _parents(path: str) -> list[str]:
    parts = path.split("/")[:-1]
    return ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]


def require_fast_forward(root: Path, spine: str, old: str, new: str, again: str) -> None:
    """Refuse, before anything is pushed, a merge the spine checkout could not take.
    ``again``: the command that merges once more, as it runs (`leap merge SLICE`)."""
    where = checkout_of(root, spine)
    if where is None:
        return
    if git.rev_parse("HEAD", where) != old:
        raise RuleViolation(f"the spine {spine!r} moved under the merge; nothing landed",
                            rule="L9", hint=f"one writer: run {again} again")
    require_clean(root, spine)
    blocking = blocking_untracked(where, old, new)
    if blocking:
        raise UsageError(f"the spine {spine!r} is checked out in {where} with untracked "
                         f"file(s) the merge would overwrite: {', '.join(blocking)}; "
                         f"nothing landed", hint=f"move or delete them, then run {again} "
                         "again")


def move_spine(root: Path, spine: str, old: str, new: str) -> str | None:
    """Fast-forward the spine by compare-and-swap, and its checkout when it is checked out.
    The ref is what lands; a checkout that cannot follow is returned as a warning."""
    where = checkout_of(root, spine)
    if where is not None and git.rev_parse("HEAD", where) == old:
        proc = git.run(["merge", "--ff-only", "--quiet", new], where, check=False)
        if proc.returncode == 0 and git.rev_parse(f"refs/heads/{spine}", root) == new:
            return None
    current = git.rev_parse(f"refs/heads/{spine}", root)
    if current == new:
        moved = True
    else:
        moved = git.run(["update-ref", "-m", "leap merge", f"refs/heads/{spine}", new, old],
                        root, check=False).returncode == 0
    if not moved:
        return (f"the local spine {spine!r} moved under the merge and was not updated to "
                f"{new[:12]}; fetch it from its remote")
    if where is None:
        return None
    return (f"the spine {spine!r} moved to {new[:12]}, but its checkout in {where} could not "
            f"follow (its files are still those of {old[:12]}): move any blocking files, "
            f"then `git -C {where} read-tree -m -u {old} {new}`")


def spine_remote(root: Path, spine: str) -> str | None:
    """The remote the spine tracks, by name, or None; a URL or a path there (`git push -u
    URL`) is bad input, said before a merge takes its lease or convenes its review."""
    name = git.branch_remote(root, spine)
    if name is None:
        return None
    try:
        require_remote(root, name)
    except UsageError as exc:
        key = shlex.quote(f"branch.{spine}.remote")
        track = f"`git config {key} NAME`"
        names = git.remotes(root)
        raise UsageError(exc.problems[0].message, field=f"branch.{spine}.remote", hint=(
                             f"track the spine by a remote's name: `git remote add NAME "
                             f"{shlex.quote(name)}`, then {track}" if located(name) else
                             f"track its one remote: `git config {key} "
                             f"{shlex.quote(names[0])}`" if len(names) == 1 else
                             f"{track}, NAME one of its remotes")) from None
    return name


def require_shared_spine(ws: Workspace, again: str, prefer: str | None = None) -> None:
    """L9: a ledger this clone shares with a remote, and a spine that tracks none. Every
    merge would land only here (its lease taken and given back in the ledger), and a
    remote with leapgit's pre-receive then refuses the spine for want of an open lease,
    which no command takes again: a slice `leap run` said had landed stayed off the shared
    spine. Said before any work, with the command that makes the spine track the remote
    the spine lives on (``prefer``, the run's `--remote`, when it holds the ledger; else one
    that holds the ledger and the spine)."""
    root, spine = ws.paths.root, ws.config.spine
    if spine_remote(root, spine) is not None:
        return
    with ws.ledger() as ledger:
        shared = ledger.remotes_holding()
    if not shared:
        return  # a clone of its own: its merges land here, and nowhere else is judged
    with_spine = [r for r in shared if git.rev_parse(f"refs/remotes/{r}/{spine}", root)]
    ranked = [prefer] if prefer in shared else with_spine or shared
    name, q = ranked[0], shlex.quote
    others = f" (or another remote the spine lives on: {', '.join(ranked[1:])})" \
        if len(ranked) > 1 else ""
    raise UsageError(
        f"this clone shares its ledger with {', '.join(shared)}, but the spine {spine} tracks "
        f"no remote: a merge would land only here, never on {name}'s {spine}, and a "
        f"pre-receive of leapgit's there would refuse it later (no open integrator lease, L9)",
        field=f"branch.{spine}.remote", rule="L9",
        hint=f"make {spine} track {name}'s: `git config {q(f'branch.{spine}.remote')} "
        f"{q(name)} && git config {q(f'branch.{spine}.merge')} {q(f'refs/heads/{spine}')}`"
        f"{others}, then {again}")


def judged_by(root: Path, spine: str, remote: str | None = None) -> Config | None:
    """The config the server judges this clone's pushes by: the spine tip's committed
    `.leap/config.yaml` (this clone's spine, else the remote's as last fetched), or the
    defaults when it holds none (README, "On a server"). None when no spine is here to read,
    or its config does not parse (the server then judges by an older one,
    ``rules.context.fallback_config``: not guessed here)."""
    refs = [f"refs/heads/{spine}"] + ([f"refs/remotes/{remote}/{spine}"] if remote else [])
    tip = next((r for r in refs if git.rev_parse(r, root) is not None), None)
    if tip is None:
        return None
    proc = git.run(["show", f"{tip}:{CONFIG_PATH.as_posix()}"], root, check=False)
    if proc.returncode != 0:
        return Config()
    try:
        return parse_config(proc.stdout, f"{spine}:{CONFIG_PATH.as_posix()}")
    except LeapError:  # the server looks further back (``rules.context.fallback_config``)
        return None


def require_round_cap_of_server(root: Path, spine: str, config: Config,
                                remote: str | None = None) -> None:
    """L6: rounds are counted by one cap. A cap set in this clone's config only, while the
    server judges by the spine's (the defaults when it commits none), ends episodes the
    server still counts open: a resumed episode is then refused for good. Said before
    anything is recorded."""
    there = judged_by(root, spine, remote)
    if there is not None and there.round_cap != config.round_cap:
        raise UsageError(f"round_limit is {config.round_cap} here, but the server judges "
                         f"rounds by the spine's config, which gives {there.round_cap}",
                         file=".leap/config.yaml", field="round_limit", rule="L6",
                         hint=f"set `round_limit: {there.round_cap}` in .leap/config.yaml, or "
                              "land your config on the spine, then run again")


class PushRefused(RuleViolation):
    """The remote answered, and refused the atomic push: nothing of it landed."""


def push(root: Path, remote: str, refspecs: list[str], then: str) -> None:
    """One atomic push; the server's refusal comes back as a rule violation, its lines kept.
    ``then``: what the user runs once the refusal is dealt with (`leap merge SLICE` again)."""
    proc = git.run(["push", "--atomic", "--porcelain", remote, *refspecs], root, check=False)
    if proc.returncode == 0:
        return
    text = proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace")
    said = [ln[7:].strip() for ln in text.splitlines()
            if ln.startswith("remote:") and "[" in ln]
    porcelain = proc.stdout.decode(errors="replace")
    git_said = [ln.split("\t")[-1] for ln in porcelain.splitlines() if ln.startswith("!\t")]
    hook_said = [ln[7:].strip() for ln in text.splitlines()
                 if ln.startswith("remote:") and ln[7:].strip()]
    behind = any(s.startswith("[rejected]") for s in git_said)  # not a fast-forward
    hint = "; ".join(said) or "; ".join(
        [f"git said: {'; '.join(git_said)}" if git_said else git.says(text), *hook_said[-3:]]
        + ([f"{then} builds on the spine the remote holds"] if behind else []))
    if f"leap pre-push: {NOTHING_SENT}" in proc.stderr.decode(errors="replace").splitlines():
        # this clone's own hook (a server's lines come as `remote: ...`): nothing was sent
        raise _refused_here(remote, text, then)
    if refused_by_status(porcelain):
        raise PushRefused(f"the remote {remote} refused the spine push; nothing landed",
                          rule=_rule(said), hint=hint)
    # no answer (a dropped connection): the remote may have taken it; the caller asks it
    raise git.GitFailed(f"the spine push to {remote} failed (exit {proc.returncode})",
                        hint=hint)


def _refused_here(remote: str, text: str, then: str) -> PushRefused:
    """This clone's `pre-push` refused the push by the server's own rules: nothing was sent.
    Its first refusal, and what to do about it, as the hook said them."""
    said = [ln.removeprefix("leap pre-push:").strip() for ln in text.splitlines()
            if ln.startswith("leap pre-push:") and ln.removeprefix("leap pre-push:").strip()
            .startswith("[")]
    # the newest commit kept aside keeps every one under it (the hook names oldest first)
    kept = [line for line in said if " kept-" in line]
    what, _, do = (kept[-1] if kept else said[0] if said else "").partition("; do: ")
    what = what.partition("] ")[2] if what.startswith("[") else what  # the rule goes last
    hint = f"{do or git.says(text)}; then {then}"
    return PushRefused(f"this clone's pre-push hook refused the spine push to {remote}, as its "
                       f"server would; nothing was sent" + (f": {what}" if what else ""),
                       rule=_rule(said), hint=hint)


def refused_by_status(porcelain: str) -> bool:
    """Whether git's own status lines of a ``push --porcelain`` say the remote refused it
    (``!`` on a ref, and no ref taken). Only these count: text a server hook prints
    (``remote:`` lines) may say anything, and a push that got no clear answer may have
    landed."""
    flags = [line[0] for line in porcelain.splitlines()
             if len(line) > 1 and line[1] == "\t" and line[0] in "!* +-="]
    return "!" in flags and not any(f in "* +-" for f in flags)


def _rule(lines: list[str]) -> str:
    for line in lines:
        start = line.find("[")
        end = line.find("]", start)
        if start >= 0 and end > start:
            return line[start + 1:end]
    return "L8"
