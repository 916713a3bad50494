"""Score step 1, the source check (L7.1): re-read every file the candidate touched and the
files that import or call them (consumers), confirm all lie inside the ball's scope or are
unchanged, confirm the red tests are as they were at red (T7.1, T9), and hash the candidate
(its tree id). No red at all holds (0, T7.1); an unbacked claim (no change beyond the red
test) is -1."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from leapgit import git
from leapgit.git import blob_at, changed_files, is_ancestor
from leapgit.records.scoring import FileBlob, RedRecord, Step
from leapgit.records.types import ABSENT, BallRecord
from leapgit.rules.balls import unheld_reds
from leapgit.slices.diff import out_of_scope


@dataclass(frozen=True)
class Source:
    step: Step
    candidate: str  # the tree id
    touched: tuple[FileBlob, ...]
    consumers: tuple[FileBlob, ...]


class _Git:
    """The candidate's ancestry as ``rules.balls.unheld_reds`` reads it, from git."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def has(self, sha: str) -> bool:
        return git.run(["cat-file", "-e", f"{sha}^{{commit}}"], self.root,
                       check=False).returncode == 0

    def is_ancestor(self, older: str, newer: str) -> bool:
        return is_ancestor(self.root, older, newer)


def blobs(root: Path, commit: str, paths: list[str]) -> dict[str, str]:
    """Blob id of each path at ``commit`` (``absent`` when it is not there), one git call."""
    found = {p: ABSENT for p in paths}
    if not paths:
        return found
    raw = git.run(["ls-tree", "-r", "-z", commit, "--", *paths], root).stdout
    for entry in raw.split(b"\0"):
        if entry:
            meta, _, path = entry.partition(b"\t")
            found[path.decode("utf-8", "surrogateescape")] = meta.split()[2].decode()
    return found


def _patterns(path: str) -> list[str]:
    if not path.endswith(".py"):
        return [re.escape(path)]
    module = path[:-3].removesuffix("/__init__").replace("/", ".")
    out = _import_patterns(module)
    if module.startswith("src."):  # the src layout: src/pkg/mod.py is imported as pkg.mod
        out += _import_patterns(module.removeprefix("src."))
    return out


def _import_patterns(module: str) -> list[str]:
    parent, _, name = module.rpartition(".")
    out = [rf"(from|import)[[:space:]]+{re.escape(module)}([^A-Za-z0-9_]|$)"]
    if parent:
        out.append(rf"from[[:space:]]+{re.escape(parent)}[[:space:]]+import.*[^A-Za-z0-9_]"
                   rf"{name}([^A-Za-z0-9_]|$)")
    return out


def consumers(root: Path, commit: str, touched: list[str]) -> list[str]:
    """Files at ``commit`` that import or name a touched file (git grep, one call)."""
    patterns = [p for path in touched for p in _patterns(path)]
    if not patterns:
        return []
    args = ["grep", "-l", "-z", "-I", "-E"]  # -z: each name whole, as git holds it
    for pattern in patterns:
        args += ["-e", pattern]
    proc = git.run([*args, commit, "--"], root, check=False)
    prefix = f"{commit}:"
    names = {name.removeprefix(prefix) for name in
             proc.stdout.decode("utf-8", "surrogateescape").split("\0") if name}
    return sorted(names - set(touched))


def check_source(root: Path, base: str, commit: str, ball: BallRecord,
                 red: RedRecord | None, earlier: Sequence[RedRecord] = ()) -> Source:
    """``red``: the latest red; ``earlier``: the reds before it, whose frozen tests hold
    too (T7.1: the frozen set only grows)."""
    tree = git.out(["rev-parse", f"{commit}^{{tree}}"], root)
    touched = changed_files(root, base, commit)
    now = blobs(root, commit, touched)
    users = consumers(root, commit, touched)
    used = blobs(root, commit, users)
    touched_blobs = tuple(FileBlob(p, now[p]) for p in touched)
    consumer_blobs = tuple(FileBlob(p, used[p]) for p in users)

    def fail(rule: str, detail: str) -> Source:
        return Source(Step("source", "fail", detail, rule), tree, touched_blobs, consumer_blobs)

    outside = out_of_scope(touched, ball)
    if outside:
        return fail("L9", f"touches files outside the scope: {', '.join(outside)}")
    changed_users = [p for p in out_of_scope(users, ball)
                     if used[p] != blob_at(root, base, p)]
    if changed_users:
        return fail("L7.1", f"consumers outside the scope changed: {', '.join(changed_users)}")
    if red is None:
        return Source(Step("source", "hold", "no red commit: record the failing contract test "
                           f"with `leap red {ball.slice} {ball.ball} COMMIT` first (T7.1: red "
                           "before the build)", "T7.1"),
                      tree, touched_blobs, consumer_blobs)
    unheld = unheld_reds(_Git(root), [*earlier, red], commit)
    if unheld:
        return fail(*unheld[0])
    edited = sorted({p for r in (*earlier, red)
                     for p in r.frozen_changes(lambda p: now.get(p) or blob_at(root, commit, p))})
    if edited:
        return fail("T7.1", f"test file(s) edited after red {red.commit[:12]}: "
                    f"{', '.join(edited)} (T9: tests pass only because they changed)")
    frozen = set(red.frozen())
    if not [p for p in touched if p not in frozen]:
        return fail("L7.1", "an unbacked claim: the candidate changes nothing beyond the red "
                    "test")
    return Source(Step("source", "ok", f"{len(touched)} touched file(s) in scope, "
                       f"{len(users)} consumer(s) read; candidate tree {tree}"),
                  tree, touched_blobs, consumer_blobs)
